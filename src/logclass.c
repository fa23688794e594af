/* Classifying log lines in one pass (see logclass.h). The file is read in large blocks; the
 * prefilter literals are searched with memmem over the block, so lines without them cost only
 * the search and the newline count; a line with one is parsed and matched against every rule
 * and field with asc_lpat, in time linear in its length. */
#include "ascope/logclass.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ascope/fs.h"
#include "ascope/lpat.h"

#define BLOCK ASC_LOGCLASS_BLOCK_MAX
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

#define THREADS_MAX 4 /* blocks classified at once: more would wait on the calling thread anyway */

struct asc_logclass {
  char *header_text, **strip_texts; /* for copies (asc_logclass_clone) */
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
  unsigned long long nul_bytes; /* dropped by the last scan */
  pat **all;                    /* every pattern, numbered */
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
  int threads;                       /* asc_logclass_set_threads */
  size_t block;                      /* bytes read at a time */
  asc_logclass *copies[THREADS_MAX]; /* the worker threads' classifiers, made on first use */
};

/* the pair of bytes at p as one 16-bit load (the same order wherever it is taken) */
static inline unsigned pair_at(const char *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
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
  lc->threads = 1;
  lc->block = BLOCK;
  lc->header_text = dup(spec->header);
  lc->strip_texts = calloc(spec->nstrips + 1, sizeof *lc->strip_texts);
  lc->error_level = dup(spec->error_level ? spec->error_level : "");
  lc->error_prefix = dup(spec->error_prefix ? spec->error_prefix : "");
  if (!lc->lits || !lc->litlen || !lc->strips || !lc->rules || !lc->fields || !lc->matched || !lc->values ||
      !lc->arena || !lc->pairs || !lc->header_text || !lc->strip_texts || !lc->error_level ||
      !lc->error_prefix)
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
  for (size_t i = 0; i < spec->nstrips; i++) {
    if (!(lc->strip_texts[i] = dup(spec->strips[i]))) goto nomem;
    if (!(lc->strips[i] = compile_fixed(spec->strips[i], err))) goto fail;
  }
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
  free(lc->header_text);
  for (size_t i = 0; lc->strip_texts && i < lc->nstrips; i++) free(lc->strip_texts[i]);
  free(lc->strip_texts);
  for (size_t i = 0; i < THREADS_MAX; i++) asc_logclass_free(lc->copies[i]);
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
      if (!HAS_PAIR(lc, pair_at(p->lit + i))) return 0;
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
  uint8_t *pairs = lc->pairs, stamp = lc->stamp;
  for (size_t i = 0; i + 1 < len; i++) pairs[pair_at(text + i)] = stamp;
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

void asc_logclass_set_threads(asc_logclass *lc, int threads) {
  lc->threads = threads < 1 ? 1 : threads > THREADS_MAX ? THREADS_MAX : threads;
}

void asc_logclass_set_block(asc_logclass *lc, size_t bytes) {
  lc->block = bytes < ASC_LOGCLASS_BLOCK_MIN ? ASC_LOGCLASS_BLOCK_MIN : bytes > BLOCK ? BLOCK : bytes;
}

int asc_logclass_clone(const asc_logclass *lc, asc_logclass **out, asc_error *err) {
  size_t nrp = 0;
  for (size_t i = 0; i < lc->nrules; i++) nrp += lc->rules[i].npats + lc->rules[i].nmodules;
  for (size_t i = 0; i < lc->nfields; i++) nrp += lc->fields[i].npats;
  /* one list of every string the rules and fields point into */
  const char **strs = calloc(nrp + 1, sizeof *strs);
  asc_logclass_rule *rules = calloc(lc->nrules + 1, sizeof *rules);
  asc_logclass_field *fields = calloc(lc->nfields + 1, sizeof *fields);
  int rc = -1;
  *out = NULL;
  if (!strs || !rules || !fields) {
    oom(err);
    goto done;
  }
  size_t k = 0;
  for (size_t i = 0; i < lc->nrules; i++) {
    const rule *r = &lc->rules[i];
    rules[i].mode = r->mode;
    rules[i].any_level = r->any_level;
    rules[i].patterns = strs + k;
    rules[i].npatterns = r->npats;
    for (size_t j = 0; j < r->npats; j++) strs[k++] = r->pats[j].text;
    rules[i].modules = strs + k;
    rules[i].nmodules = r->nmodules;
    for (size_t j = 0; j < r->nmodules; j++) strs[k++] = r->modules[j];
  }
  for (size_t i = 0; i < lc->nfields; i++) {
    fields[i].patterns = strs + k;
    fields[i].npatterns = lc->fields[i].npats;
    for (size_t j = 0; j < lc->fields[i].npats; j++) strs[k++] = lc->fields[i].pats[j].text;
  }
  asc_logclass_spec spec = {(const char *const *)lc->lits,
                            lc->nlits,
                            lc->header_text,
                            lc->cap_level,
                            lc->cap_module,
                            lc->cap_time,
                            lc->cap_rest,
                            (const char *const *)lc->strip_texts,
                            lc->nstrips,
                            lc->error_level,
                            lc->error_prefix,
                            rules,
                            lc->nrules,
                            fields,
                            lc->nfields};
  rc = asc_logclass_new(&spec, out, err);
  if (rc == 0) {
    (*out)->threads = lc->threads;
    (*out)->block = lc->block;
  }
done:
  free(strs);
  free(rules);
  free(fields);
  return rc;
}

/* ---------- the scan ----------
 * The file is read into blocks of whole lines (the tail of a block's last line begins the next
 * block). With one thread, a block is classified as soon as it is read. With more, blocks go
 * round a ring of threads + 2 buffers: worker threads classify them, each with its own copy of
 * the classifier, into records (spans as offsets into the block), and the calling thread,
 * which reads, hands the records to fn block after block, in the file's order. The blocks are
 * the ones one thread reads and fn sees the same lines in the same order either way. */

#define RECORDS_MAX                                                                                          \
  (256u << 10) /* words of records per block; past them the calling thread                                   \
                  classifies the rest of the block itself */
#define NOWHERE UINT32_MAX

enum { FREE, QUEUED, DONE };

typedef struct chunk {
  char *buf;
  size_t end;    /* its complete lines: [0, end) */
  int first_cut; /* its first line is the head of a longer one */
  int state;
  uint32_t *rec; /* records: start, length, line (from 0), cut | error << 1, time offset and
                    length, the number of rules matched, their indexes, each field's offset
                    and length */
  size_t nrec;
  size_t stop;     /* end, or the first line not recorded (records full) */
  long long lines; /* newlines in [0, stop) */
} chunk;

typedef struct pool pool;

typedef struct worker {
  pool *pool;
  asc_logclass *lc;
  size_t *next;
  chunk *c;
  pthread_t th;
} worker;

struct pool {
  pthread_mutex_t mu;
  pthread_cond_t work, done;
  chunk *chunks;
  size_t n;
  unsigned long long queued, taken; /* blocks queued, blocks taken by a worker */
  int quit;
  worker w[THREADS_MAX];
  size_t nw; /* started */
};

static uint32_t offset_in(const chunk *c, const char *p) { return p ? (uint32_t)(p - c->buf) : NOWHERE; }

/* A worker's fn: the line as a record; 1 (stop) when the records are full. */
static int collect(void *ud, const asc_logclass_line *ln) {
  worker *w = ud;
  chunk *c = w->c;
  size_t need = 7 + ln->nmatched + 2 * w->lc->nfields;
  if (need > RECORDS_MAX - c->nrec) {
    c->stop = (size_t)(ln->text - c->buf);
    c->lines = ln->number;
    return 1;
  }
  uint32_t *r = c->rec + c->nrec;
  r[0] = offset_in(c, ln->text);
  r[1] = (uint32_t)ln->len;
  r[2] = (uint32_t)ln->number;
  r[3] = (uint32_t)((ln->cut ? 1 : 0) | (ln->is_error ? 2 : 0));
  r[4] = offset_in(c, ln->time.p);
  r[5] = (uint32_t)ln->time.n;
  r[6] = (uint32_t)ln->nmatched;
  r += 7;
  for (size_t i = 0; i < ln->nmatched; i++) *r++ = ln->matched[i];
  for (size_t i = 0; i < w->lc->nfields; i++) {
    *r++ = offset_in(c, ln->fields[i].p);
    *r++ = (uint32_t)ln->fields[i].n;
  }
  c->nrec += need;
  return 0;
}

static void classify_chunk(worker *w, chunk *c) {
  long long line = 0;
  asc_error err;
  w->c = c;
  c->nrec = 0;
  c->stop = c->end;
  int r = block(w->lc, c->buf, c->end, c->first_cut, &line, w->next, collect, w, &err);
  if (r == 0) c->lines = line;
  if (r < 0) { /* not without slow patterns; the calling thread classifies it and says why */
    c->nrec = 0;
    c->stop = 0;
    c->lines = 0;
  }
}

static void *work(void *arg) {
  worker *w = arg;
  pool *p = w->pool;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->quit && p->taken == p->queued) pthread_cond_wait(&p->work, &p->mu);
    if (p->quit) break;
    chunk *c = &p->chunks[p->taken++ % p->n];
    pthread_mutex_unlock(&p->mu);
    classify_chunk(w, c);
    pthread_mutex_lock(&p->mu);
    c->state = DONE;
    pthread_cond_broadcast(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* A classified block's lines to fn, then the lines past its records. *line: the number of the
 * block's first line, then of the next block's. */
static int replay(asc_logclass *lc, chunk *c, long long *line, size_t *next,
                  int (*fn)(void *, const asc_logclass_line *), void *ud, asc_error *err) {
  const uint32_t *r = c->rec, *end = c->rec + c->nrec;
  while (r < end) {
    asc_logclass_line ln = {*line + r[2],
                            c->buf + r[0],
                            r[1],
                            (int)(r[3] & 1),
                            (int)(r[3] >> 1 & 1),
                            {r[4] == NOWHERE ? NULL : c->buf + r[4], r[5]},
                            r + 7,
                            r[6],
                            lc->values};
    const uint32_t *f = r + 7 + r[6];
    for (size_t i = 0; i < lc->nfields; i++, f += 2) {
      lc->values[i].p = f[0] == NOWHERE ? NULL : c->buf + f[0];
      lc->values[i].n = f[1];
    }
    if (fn(ud, &ln)) return 1;
    r = f;
  }
  long long at = *line + c->lines;
  int rc = 0;
  if (c->stop < c->end)
    rc = block(lc, c->buf + c->stop, c->end - c->stop, c->first_cut && c->stop == 0, &at, next, fn, ud, err);
  *line = at;
  return rc;
}

/* Replay the blocks classified, oldest first; wait for the oldest when asked. */
static int drain(pool *p, asc_logclass *lc, unsigned long long *replayed, int wait, long long *line,
                 size_t *next, int (*fn)(void *, const asc_logclass_line *), void *ud, asc_error *err) {
  while (*replayed < p->queued) {
    chunk *c = &p->chunks[*replayed % p->n];
    pthread_mutex_lock(&p->mu);
    while (wait && c->state != DONE) pthread_cond_wait(&p->done, &p->mu);
    int ready = c->state == DONE;
    if (ready) c->state = FREE;
    pthread_mutex_unlock(&p->mu);
    if (!ready) return 0;
    wait = 0;
    (*replayed)++;
    int r = replay(lc, c, line, next, fn, ud, err);
    if (r) return r;
  }
  return 0;
}

static void pool_stop(pool *p) {
  pthread_mutex_lock(&p->mu);
  p->quit = 1;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->mu);
  for (size_t i = 0; i < p->nw; i++) pthread_join(p->w[i].th, NULL);
  for (size_t i = 0; i < THREADS_MAX; i++) free(p->w[i].next);
  for (size_t i = 0; p->chunks && i < p->n; i++) {
    free(p->chunks[i].buf);
    free(p->chunks[i].rec);
  }
  free(p->chunks);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

/* The workers and the ring for lc->threads threads, or NULL: scan on this thread alone (one
 * thread asked, slow patterns, which call back into the caller, or nothing to start them with). */
static pool *pool_start(asc_logclass *lc) {
  if (lc->threads < 2 || lc->nslow) return NULL;
  pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->done, NULL);
  p->n = (size_t)lc->threads + 2;
  if (!(p->chunks = calloc(p->n, sizeof *p->chunks))) goto fail;
  for (size_t i = 0; i < p->n; i++) {
    p->chunks[i].buf = malloc(lc->block);
    p->chunks[i].rec = malloc(RECORDS_MAX * sizeof *p->chunks[i].rec);
    if (!p->chunks[i].buf || !p->chunks[i].rec) goto fail;
  }
  for (int i = 0; i < lc->threads; i++) {
    asc_error err;
    worker *w = &p->w[p->nw];
    if (!lc->copies[i] && asc_logclass_clone(lc, &lc->copies[i], &err)) break;
    w->pool = p;
    w->lc = lc->copies[i];
    if (!(w->next = calloc(lc->nlits + 1, sizeof *w->next))) break;
    if (pthread_create(&w->th, NULL, work, w) != 0) break;
    p->nw++;
  }
  if (p->nw >= 1) return p;
fail:
  pool_stop(p);
  return NULL;
}

unsigned long long asc_logclass_nul_bytes(const asc_logclass *lc) { return lc->nul_bytes; }

/* Drop the NUL bytes of p[0..n) in place: the bytes left, the dropped ones counted. */
static size_t drop_nuls(char *p, size_t n, unsigned long long *count) {
  char *z = memchr(p, '\0', n);
  if (!z) return n;
  char *w = z, *e = p + n;
  for (char *r = z; r < e; r++)
    if (*r) *w++ = *r;
  *count += (unsigned long long)(e - w);
  return (size_t)(w - p);
}

int asc_logclass_scan(asc_logclass *lc, const char *path, int (*fn)(void *, const asc_logclass_line *),
                      void *ud, asc_error *err) {
  lc->nul_bytes = 0;
  FILE *f = asc_open_input(path, err); /* a FIFO or device is refused, not waited on */
  if (!f) return -1;
  /* a file of one block is one chunk: workers could only wait for it, and starting them costs
   * more than a small file's scan (a tree of 40k small plogs: 100 us a file) */
  struct stat st;
  int one_block = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size < lc->block;
  pool *p = one_block ? NULL : pool_start(lc);
  chunk one = {NULL, 0, 0, FREE, NULL, 0, 0, 0};
  chunk *cur = p ? &p->chunks[0] : &one;
  size_t *next = calloc(lc->nlits + 1, sizeof *next);
  size_t bsize = lc->block;
  int rc = 0, skipping = 0, first_cut = 0;
  size_t have = 0;
  unsigned long long replayed = 0;
  long long line = 1; /* the number of the first line not handed to fn yet */
  if (!p) one.buf = malloc(bsize);
  if (!cur->buf || !next) {
    rc = asc_fail(err, path, -1, 0, 0, "out of memory");
    goto done;
  }
  /* a UTF-8 byte order mark (a log saved by an editor) is no part of the first line; UTF-16
   * text would match nothing, every line of it lost without a word */
  have = fread(cur->buf, 1, 3, f);
  if (have >= 2 && ((unsigned char)cur->buf[0] == 0xFF || (unsigned char)cur->buf[0] == 0xFE) &&
      (unsigned char)cur->buf[1] == ((unsigned char)cur->buf[0] ^ 0x01)) {
    rc = asc_fail(err, path, 0, 1, 1, "UTF-16 text (byte order mark %02X %02X): convert it to UTF-8 first",
                  (unsigned char)cur->buf[0], (unsigned char)cur->buf[1]);
    goto done;
  }
  /* a compressed log (plog-1.log.gz, or gzip output kept under a .log name) is no text: its
   * bytes would match nothing, or by chance anything */
  if (have >= 2 && (unsigned char)cur->buf[0] == 0x1F && (unsigned char)cur->buf[1] == 0x8B) {
    rc = asc_fail(err, path, 0, 1, 1, "gzip-compressed (it begins with 1F 8B): decompress it first (gunzip)");
    goto done;
  }
  if (have == 3 && memcmp(cur->buf, "\xEF\xBB\xBF", 3) == 0) have = 0;
  have = drop_nuls(cur->buf, have, &lc->nul_bytes);
  for (;;) {
    char *buf = cur->buf;
    size_t got = fread(buf + have, 1, bsize - have, f);
    int eof = got == 0;
    if (eof && ferror(f)) {
      rc = asc_fail(err, path, -1, 0, 0, "read error: %s", strerror(errno));
      goto done;
    }
    got = drop_nuls(buf + have, got, &lc->nul_bytes); /* eof is the read's, not what is left */
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
        if (have == bsize) { /* one line longer than the block: keep its head */
          have = ASC_LOGCLASS_LINE_MAX + 1;
          skipping = first_cut = 1;
        }
        continue;
      }
      end = (size_t)(nl - buf) + 1;
    }
    cur->end = end;
    cur->first_cut = first_cut;
    int r;
    chunk *nx = cur;
    if (p) {
      pthread_mutex_lock(&p->mu);
      cur->state = QUEUED;
      p->queued++;
      pthread_cond_signal(&p->work);
      pthread_mutex_unlock(&p->mu);
      /* the next buffer is free once its block is replayed */
      r = drain(p, lc, &replayed, p->queued - replayed == p->n, &line, next, fn, ud, err);
      nx = &p->chunks[p->queued % p->n];
    } else {
      r = block(lc, buf, end, first_cut, &line, next, fn, ud, err);
    }
    if (r < 0) {
      rc = -1;
      goto done;
    }
    first_cut = 0;
    memmove(nx->buf, buf + end, have - end); /* the tail of its last line begins the next block */
    have -= end;
    cur = nx;
    if (eof || r) break;
  }
  while (p && replayed < p->queued) {
    int r = drain(p, lc, &replayed, 1, &line, next, fn, ud, err);
    if (r < 0) rc = -1;
    if (r) break;
  }
done:
  if (rc < 0 && !err->file[0]) { /* the place: this file and line; the message and its arguments stay */
    snprintf(err->file, sizeof err->file, "%s", path);
    err->line = (long)line;
  }
  if (p) pool_stop(p);
  free(one.buf);
  free(next);
  fclose(f);
  return rc;
}
