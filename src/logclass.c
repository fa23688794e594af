/* Classifying log lines in one pass (see logclass.h). The file is read in large blocks; the
 * prefilter literals are searched with memmem over the block, so lines without them cost only
 * the search and the newline count; a line with one is parsed and matched against every rule
 * and field with asc_lpat, in time linear in its length. */
#include "ascope/logclass.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/lpat.h"

#define BLOCK (4u << 20)
#define ARENA (256u << 10) /* slow captures of one line */

typedef struct pat {
  asc_lpat *fast; /* NULL: matched through the slow callback */
  char *text;
  size_t index;
  const char *lit; /* a literal every match holds (owned by fast) */
  size_t lit_n;
} pat;

typedef struct rule {
  int mode, any_level;
  pat *pats;
  size_t npats;
  char **modules;
  size_t nmodules;
} rule;

typedef struct field {
  pat *pats;
  size_t npats;
} field;

struct asc_logclass {
  char **lits;
  size_t *litlen, nlits;
  asc_lpat *header;
  int cap_level, cap_module, cap_time, cap_rest;
  asc_lpat **strips;
  size_t nstrips;
  char *error_level, *error_prefix;
  rule *rules;
  size_t nrules;
  field *fields;
  size_t nfields;
  pat **all; /* every pattern, numbered */
  size_t npats, nslow;
  uint32_t *matched;
  asc_logclass_span *values;
  char *arena;
  size_t arena_n;
  asc_logclass_slow_fn slow;
  void *slow_ud;
  /* the byte pairs of the current line: pair k is in it when pairs[k] == stamp (a new stamp per
   * line, so nothing is cleared but once in 255 lines). A pattern whose literal has a pair the
   * line lacks cannot match, and is not searched. */
  uint8_t *pairs;
  uint8_t stamp;
};

#define PAIR(a, b) (((unsigned)(unsigned char)(a) << 8) | (unsigned char)(b))
#define HAS_PAIR(lc, k) ((lc)->pairs[k] == (lc)->stamp)

typedef struct found {
  size_t start, end;
  const char *cap;
  size_t cap_n;
} found;

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int oom(asc_error *err) { return asc_fail(err, NULL, -1, 0, 0, "out of memory"); }

static int compile_pats(asc_logclass *lc, const char *const *src, size_t n, int flags, pat **out,
                        asc_error *err) {
  *out = calloc(n ? n : 1, sizeof **out);
  if (!*out) return oom(err);
  for (size_t i = 0; i < n; i++) {
    pat *p = &(*out)[i];
    const char *why;
    if (!(p->text = dup(src[i]))) return oom(err);
    p->fast = asc_lpat_compile(src[i], strlen(src[i]), flags, &why);
    if (!p->fast && strcmp(why, "out of memory") == 0) return oom(err);
    if (!p->fast) lc->nslow++;
    if (p->fast) p->lit = asc_lpat_literal(p->fast, &p->lit_n);
    p->index = lc->npats;
    pat **all = realloc(lc->all, (lc->npats + 1) * sizeof *all);
    if (!all) return oom(err);
    lc->all = all;
    lc->all[lc->npats++] = p;
  }
  return 0;
}

static asc_lpat *compile_fixed(const char *s, asc_error *err) {
  const char *why;
  asc_lpat *p = asc_lpat_compile(s, strlen(s), 0, &why);
  if (!p) asc_fail(err, NULL, -1, 0, 0, "line layout pattern %s: %s", s, why);
  return p;
}

int asc_logclass_new(const asc_logclass_spec *spec, asc_logclass **out, asc_error *err) {
  asc_logclass *lc = calloc(1, sizeof *lc);
  if (!lc) return oom(err);
  *out = NULL;
  lc->nlits = spec->nliterals;
  lc->lits = calloc(spec->nliterals + 1, sizeof *lc->lits);
  lc->litlen = calloc(spec->nliterals + 1, sizeof *lc->litlen);
  lc->strips = calloc(spec->nstrips + 1, sizeof *lc->strips);
  lc->rules = calloc(spec->nrules + 1, sizeof *lc->rules);
  lc->fields = calloc(spec->nfields + 1, sizeof *lc->fields);
  lc->matched = calloc(spec->nrules + 1, sizeof *lc->matched);
  lc->values = calloc(spec->nfields + 1, sizeof *lc->values);
  lc->arena = malloc(ARENA);
  lc->pairs = calloc(65536, 1);
  lc->error_level = dup(spec->error_level ? spec->error_level : "");
  lc->error_prefix = dup(spec->error_prefix ? spec->error_prefix : "");
  if (!lc->lits || !lc->litlen || !lc->strips || !lc->rules || !lc->fields || !lc->matched || !lc->values ||
      !lc->arena || !lc->pairs || !lc->error_level || !lc->error_prefix)
    goto nomem;
  for (size_t i = 0; i < spec->nliterals; i++) {
    if (!(lc->lits[i] = dup(spec->literals[i]))) goto nomem;
    lc->litlen[i] = strlen(lc->lits[i]);
  }
  if (!(lc->header = compile_fixed(spec->header, err))) goto fail;
  lc->cap_level = spec->cap_level;
  lc->cap_module = spec->cap_module;
  lc->cap_time = spec->cap_time;
  lc->cap_rest = spec->cap_rest;
  lc->nstrips = spec->nstrips;
  for (size_t i = 0; i < spec->nstrips; i++)
    if (!(lc->strips[i] = compile_fixed(spec->strips[i], err))) goto fail;
  lc->nrules = spec->nrules;
  for (size_t i = 0; i < spec->nrules; i++) {
    const asc_logclass_rule *r = &spec->rules[i];
    rule *d = &lc->rules[i];
    d->mode = r->mode;
    d->any_level = r->any_level;
    d->npats = r->npatterns;
    if (compile_pats(lc, r->patterns, r->npatterns, r->mode == ASC_LC_WORD ? ASC_LPAT_WORD : 0, &d->pats,
                     err))
      goto fail;
    if (!(d->modules = calloc(r->nmodules + 1, sizeof *d->modules))) goto nomem;
    d->nmodules = r->nmodules;
    for (size_t k = 0; k < r->nmodules; k++)
      if (!(d->modules[k] = dup(r->modules[k]))) goto nomem;
  }
  lc->nfields = spec->nfields;
  for (size_t i = 0; i < spec->nfields; i++) {
    lc->fields[i].npats = spec->fields[i].npatterns;
    if (compile_pats(lc, spec->fields[i].patterns, spec->fields[i].npatterns, 0, &lc->fields[i].pats, err))
      goto fail;
  }
  *out = lc;
  return 0;
nomem:
  oom(err);
fail:
  asc_logclass_free(lc);
  return -1;
}

static void free_pats(pat *p, size_t n) {
  for (size_t i = 0; p && i < n; i++) {
    asc_lpat_free(p[i].fast);
    free(p[i].text);
  }
  free(p);
}

void asc_logclass_free(asc_logclass *lc) {
  if (!lc) return;
  for (size_t i = 0; lc->lits && i < lc->nlits; i++) free(lc->lits[i]);
  free(lc->lits);
  free(lc->litlen);
  asc_lpat_free(lc->header);
  for (size_t i = 0; lc->strips && i < lc->nstrips; i++) asc_lpat_free(lc->strips[i]);
  free(lc->strips);
  for (size_t i = 0; lc->rules && i < lc->nrules; i++) {
    free_pats(lc->rules[i].pats, lc->rules[i].npats);
    for (size_t k = 0; lc->rules[i].modules && k < lc->rules[i].nmodules; k++) free(lc->rules[i].modules[k]);
    free(lc->rules[i].modules);
  }
  free(lc->rules);
  for (size_t i = 0; lc->fields && i < lc->nfields; i++) free_pats(lc->fields[i].pats, lc->fields[i].npats);
  free(lc->fields);
  free(lc->all);
  free(lc->matched);
  free(lc->values);
  free(lc->arena);
  free(lc->pairs);
  free(lc->error_level);
  free(lc->error_prefix);
  free(lc);
}

size_t asc_logclass_slow_count(const asc_logclass *lc) { return lc->nslow; }

const char *asc_logclass_pattern(const asc_logclass *lc, size_t k, int *slow) {
  if (k >= lc->npats) return NULL;
  *slow = lc->all[k]->fast == NULL;
  return lc->all[k]->text;
}

void asc_logclass_set_slow(asc_logclass *lc, asc_logclass_slow_fn fn, void *ud) {
  lc->slow = fn;
  lc->slow_ud = ud;
}

static int word_char(int c) { return isalnum((unsigned char)c) != 0; }

/* A pattern's match from init: 1, 0, or -1 when the slow callback stopped. */
static int find(asc_logclass *lc, const pat *p, int word, const char *s, size_t n, size_t init, found *f,
                asc_error *err) {
  if (p->fast) {
    for (size_t i = 0; i + 1 < p->lit_n; i++)
      if (!HAS_PAIR(lc, PAIR(p->lit[i], p->lit[i + 1]))) return 0;
    asc_lpat_match m;
    if (!asc_lpat_find(p->fast, s, n, init, &m)) return 0;
    f->start = m.start;
    f->end = m.end;
    f->cap = s + m.cap_start;
    f->cap_n = m.cap_end - m.cap_start;
    return 1;
  }
  if (!lc->slow) return asc_fail(err, NULL, -1, 0, 0, "pattern %s needs Lua's matcher", p->text);
  for (;;) {
    asc_logclass_hit h = {0, 0, NULL, 0};
    int r = lc->slow(lc->slow_ud, p->index, s, n, init, &h, err);
    if (r <= 0) return r;
    if (h.end > n || h.start > h.end) return asc_fail(err, NULL, -1, 0, 0, "pattern %s: bad match", p->text);
    /* a code must stand alone: no letter or digit right before or after it */
    if (word && ((h.start > 0 && word_char(s[h.start - 1])) || (h.end < n && word_char(s[h.end])))) {
      init = h.start + 1;
      if (init > n) return 0;
      continue;
    }
    f->start = h.start;
    f->end = h.end;
    size_t cn = h.cap ? h.cap_len : 0;
    if (cn > ARENA - lc->arena_n) cn = ARENA - lc->arena_n; /* bounded: a value is cut, never overflows */
    if (cn) memcpy(lc->arena + lc->arena_n, h.cap, cn);
    f->cap = lc->arena + lc->arena_n;
    f->cap_n = cn;
    lc->arena_n += cn;
    return 1;
  }
}

static int rule_matches(asc_logclass *lc, const rule *r, const char *module, size_t module_n, const char *msg,
                        size_t msg_n, asc_error *err) {
  for (size_t k = 0; module && k < r->nmodules; k++)
    if (strlen(r->modules[k]) == module_n && memcmp(r->modules[k], module, module_n) == 0) return 1;
  found f;
  if (r->mode == ASC_LC_SEQUENCE) {
    /* every pattern, in order, each searched from where the previous one ended */
    size_t at = 0;
    for (size_t i = 0; i < r->npats; i++) {
      int m = find(lc, &r->pats[i], 0, msg, msg_n, at, &f, err);
      if (m <= 0) return m;
      at = f.end;
    }
    return r->npats > 0;
  }
  for (size_t i = 0; i < r->npats; i++) {
    int m = find(lc, &r->pats[i], r->mode == ASC_LC_WORD, msg, msg_n, 0, &f, err);
    if (m != 0) return m;
  }
  return 0;
}

static asc_logclass_span cap_span(const char *s, const asc_lpat_match *m, int k) {
  asc_logclass_span sp = {NULL, 0};
  if (k >= 1 && k <= ASC_LPAT_CAPS && m->caps[k - 1][1] != (size_t)-1) {
    sp.p = s + m->caps[k - 1][0];
    sp.n = m->caps[k - 1][1] - m->caps[k - 1][0];
  }
  return sp;
}

static int classify_pairs(asc_logclass *lc, asc_logclass_line *ln,
                          int (*fn)(void *, const asc_logclass_line *), void *ud, asc_error *err);

/* Classify one line; fn when it matters. Returns fn's result, or -1. */
static int classify(asc_logclass *lc, asc_logclass_line *ln, int (*fn)(void *, const asc_logclass_line *),
                    void *ud, asc_error *err) {
  const char *text = ln->text;
  size_t len = ln->len;
  ln->time.p = NULL;
  ln->time.n = 0;
  lc->arena_n = 0;
  if (++lc->stamp == 0) {
    memset(lc->pairs, 0, 65536);
    lc->stamp = 1;
  }
  for (size_t i = 0; i + 1 < len; i++) lc->pairs[PAIR(text[i], text[i + 1])] = lc->stamp;
  return classify_pairs(lc, ln, fn, ud, err);
}

static int classify_pairs(asc_logclass *lc, asc_logclass_line *ln,
                          int (*fn)(void *, const asc_logclass_line *), void *ud, asc_error *err) {
  const char *text = ln->text;
  size_t len = ln->len;
  asc_lpat_match m;
  asc_logclass_span module = {NULL, 0}, msg = {text, len};
  if (asc_lpat_find(lc->header, text, len, 0, &m)) {
    asc_logclass_span level = cap_span(text, &m, lc->cap_level), rest = cap_span(text, &m, lc->cap_rest);
    module = cap_span(text, &m, lc->cap_module);
    ln->time = cap_span(text, &m, lc->cap_time);
    ln->is_error =
        level.p && level.n == strlen(lc->error_level) && memcmp(level.p, lc->error_level, level.n) == 0;
    if (rest.p) msg = rest;
    for (size_t i = 0; i < lc->nstrips; i++) {
      asc_lpat_match sm;
      if (!asc_lpat_find(lc->strips[i], msg.p, msg.n, 0, &sm)) continue;
      int last = ASC_LPAT_CAPS;
      while (last > 1 && sm.caps[last - 1][1] == (size_t)-1) last--;
      msg = cap_span(msg.p, &sm, last);
      if (!msg.p) msg = rest.p ? rest : (asc_logclass_span){text, len};
    }
  } else {
    size_t ep = strlen(lc->error_prefix);
    ln->is_error = ep && len >= ep && memcmp(text, lc->error_prefix, ep) == 0;
  }
  size_t nm = 0;
  for (size_t i = 0; i < lc->nrules; i++) {
    const rule *r = &lc->rules[i];
    if (!r->any_level && !ln->is_error) continue;
    int hit = rule_matches(lc, r, module.p, module.n, msg.p, msg.n, err);
    if (hit < 0) return -1;
    if (hit) lc->matched[nm++] = (uint32_t)i;
  }
  if (nm == 0 && !ln->is_error) return 0;
  for (size_t i = 0; i < lc->nfields; i++) {
    const field *fd = &lc->fields[i];
    lc->values[i].p = NULL;
    lc->values[i].n = 0;
    for (size_t k = 0; k < fd->npats; k++) {
      found f;
      int r = find(lc, &fd->pats[k], 0, text, len, 0, &f, err);
      if (r < 0) return -1;
      if (r) {
        lc->values[i].p = f.cap;
        lc->values[i].n = f.cap_n;
        break;
      }
    }
  }
  ln->matched = lc->matched;
  ln->nmatched = nm;
  ln->fields = lc->values;
  return fn(ud, ln) ? 1 : 0;
}

static long long count_nl(const char *p, const char *end) {
  return (long long)asc_count_byte(p, (size_t)(end - p), '\n');
}

/* Look at the complete lines of buf[0, end): returns fn's stop (1), 0, or -1. */
static int block(asc_logclass *lc, char *buf, size_t end, int first_cut, long long *line, size_t *next,
                 int (*fn)(void *, const asc_logclass_line *), void *ud, asc_error *err) {
  size_t pos = 0;
  for (size_t k = 0; k < lc->nlits; k++) next[k] = (size_t)-1; /* not searched yet */
  while (pos < end) {
    size_t hit = end;
    for (size_t k = 0; k < lc->nlits; k++) {
      if (next[k] == (size_t)-1 || next[k] < pos) {
        const char *h =
            lc->litlen[k] ? asc_find_literal(buf + pos, end - pos, lc->lits[k], lc->litlen[k]) : NULL;
        next[k] = h ? (size_t)(h - buf) : end;
      }
      if (next[k] < hit) hit = next[k];
    }
    if (hit >= end) break;
    const char *ls = memrchr(buf + pos, '\n', hit - pos);
    size_t start = ls ? (size_t)(ls - buf) + 1 : pos;
    *line += count_nl(buf + pos, buf + start);
    const char *le = memchr(buf + hit, '\n', end - hit);
    size_t stop = le ? (size_t)(le - buf) : end;
    size_t len = stop - start;
    if (len && buf[start + len - 1] == '\r') len--;
    asc_logclass_line ln = {*line, buf + start, len, start == 0 && first_cut, 0, {NULL, 0}, NULL, 0, NULL};
    if (ln.len > ASC_LOGCLASS_LINE_MAX) {
      ln.len = ASC_LOGCLASS_LINE_MAX;
      ln.cut = 1;
    }
    int r = classify(lc, &ln, fn, ud, err);
    if (r) return r;
    if (!le) return 0;
    (*line)++;
    pos = stop + 1;
  }
  *line += count_nl(buf + pos, buf + end);
  return 0;
}

int asc_logclass_scan(asc_logclass *lc, const char *path, int (*fn)(void *, const asc_logclass_line *),
                      void *ud, asc_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return asc_fail(err, path, -1, 0, 0, "cannot open: %s", strerror(errno));
  char *buf = malloc(BLOCK);
  size_t *next = calloc(lc->nlits + 1, sizeof *next);
  int rc = 0, skipping = 0, first_cut = 0;
  size_t have = 0;
  long long line = 1; /* the number of buf[0]'s line */
  if (!buf || !next) {
    rc = asc_fail(err, path, -1, 0, 0, "out of memory");
    goto done;
  }
  for (;;) {
    size_t got = fread(buf + have, 1, BLOCK - have, f);
    int eof = got == 0;
    if (eof && ferror(f)) {
      rc = asc_fail(err, path, -1, 0, 0, "read error: %s", strerror(errno));
      goto done;
    }
    if (skipping) {
      /* the rest of a line longer than the block: dropped up to its end of line */
      char *nl = memchr(buf + have, '\n', got);
      if (!nl && !eof) continue; /* `have` stays: what was read is dropped */
      if (nl) {
        size_t keep = (size_t)(buf + have + got - nl);
        memmove(buf + have, nl, keep);
        got = keep;
      }
      skipping = 0;
    }
    have += got;
    size_t end = have;
    if (!eof) {
      char *nl = memrchr(buf, '\n', have);
      if (!nl) {
        if (have == BLOCK) { /* one line longer than the block: keep its head */
          have = ASC_LOGCLASS_LINE_MAX + 1;
          skipping = first_cut = 1;
        }
        continue;
      }
      end = (size_t)(nl - buf) + 1;
    }
    int r = block(lc, buf, end, first_cut, &line, next, fn, ud, err);
    if (r < 0) {
      if (!err->file[0]) { /* the place: this file and line */
        char msg[sizeof err->msg];
        memcpy(msg, err->msg, sizeof msg);
        asc_fail(err, path, -1, (long)line, 0, "%s", msg);
      }
      rc = -1;
      goto done;
    }
    first_cut = 0;
    memmove(buf, buf + end, have - end);
    have -= end;
    if (eof || r) break;
  }
done:
  free(buf);
  free(next);
  fclose(f);
  return rc;
}
