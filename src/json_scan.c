/* Streaming scan of a JSON event array with a purpose-built tokenizer.
 *
 * Events are parsed one at a time from a read buffer: keys are compared in place, the values of
 * the keys a spec mentions are remembered as spans of the buffer, and everything else is
 * skipped with memchr-speed string scanning. Only strings that are kept and contain escapes are
 * decoded. When an event runs past the end of the buffer, the buffer is refilled and the event
 * parsed again from its start, so memory stays bounded by the buffer (grown only for an event
 * larger than it) plus the retained rows.
 *
 * On malformed input yajl parses the file once more to report the authoritative message and
 * place; the fast path itself only needs to notice that something is wrong. */
#include "ascope/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "ascope/checked.h"
#include "ascope/decimal.h"
#include "ascope/simd.h"
#include "ascope/fs.h"
#include "ascope/hash.h"
#include "ascope/json_par.h"
#include "ascope/json_unescape.h"

enum { V_NONE = 0, V_STR, V_NUM, V_BOOL, V_NULL, V_CONTAINER };
enum { OK = 0, NEED = 1, HAND_OVER = 2, BAD = -1 };

typedef struct slot {
  const char *name;
  size_t len;
  int in_args;
  int decides; /* a predicate or "ph" of the metadata reads it: kept even in a rejected event */
  /* per event */
  int vtype, esc;
  const char *v;
  size_t vlen;
  /* short plain values repeat from event to event (ph, pid, tid, a lane's names): the last one
   * this key's value interned as is compared before the string table is asked */
  char last[32];
  size_t last_n;
  uint32_t last_id;
} slot;

typedef struct {
  uint32_t hash, id; /* id 0: empty */
} raw_slot;

typedef struct scan {
  const asc_json_spec *spec;
  asc_json_result *res;
  slot *slots;
  size_t nslots;
  int *field_slot, *pred_slot;
  int ph_slot, name_slot, pid_slot, tid_slot, argname_slot;
  int has_args_slots;
  /* the slots by the first byte of their key: first[c] is the first (slot index + 1, 0: none),
   * slot i's next one with the same first byte is next_same[i] */
  int first[256];
  int *next_same;
  char *scratch; /* decoded strings */
  size_t scratch_cap;
  /* escaped strings are looked up by their raw text first, so each distinct one (call stacks
   * repeat) is decoded once: an open-addressing map from the hash of the raw text to the
   * decoded string's id. A candidate is confirmed by comparing the raw text with the decoded
   * string in the table (several raw spellings may map to one id), or, once it has been met
   * again, with its own raw text kept below. */
  raw_slot *raw;
  size_t raw_nslots, raw_used; /* raw_nslots: 0 or a power of two */
  /* A string met again has its raw text kept (a length, then the bytes, in `copies`; raw_copy
   * by raw slot: offset + 1, 0 none; NULL until the first): from then on it is confirmed by a
   * memcmp, several times faster than comparing escaped with decoded text. A string met once
   * (every stack distinct) costs nothing; RAW_COPIES_MAX bounds the rest. */
  uint32_t *raw_copy;
  char *copies;
  size_t copies_n, copies_cap;
  int oom;
  const char *bad_at; /* where the fast path found a problem */
  const char *bad_msg;
  char bad[256];         /* a value that could not be converted */
  asc_strtab *strings;   /* where kept strings are interned (the spec's, or a range's own) */
  asc_json_range *range; /* NULL: the whole file */
  /* per event: a predicate has failed on a value met so far (rejected), and the event cannot
   * be metadata, so the values after are stepped over (skipping); a value was stepped over
   * (skipped); a later value of a failed predicate's key made it hold again (reparse: the
   * event is read once more from its start with no early decision, early off). */
  int rejected, skipping, skipped, reparse, early_off;
  const char *buf; /* the read buffer and the file offset of its first byte */
  long long base;
} scan;

/* ---------- tokens ---------- */

/* White space as yajl has it: JSON's four, and form feed and vertical tab too. */
static const unsigned char ws_byte[256] = {
    [' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1, ['\f'] = 1, ['\v'] = 1};

static const char *skip_ws(const char *p, const char *e) {
  while (p < e && ws_byte[(unsigned char)*p]) p++;
  return p;
}

static int is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* JSON's escapes: 1 for \" \\ \/ \b \f \n \r \t, 2 for \u (four hex digits follow). */
static const unsigned char escape_kind[256] = {
    ['"'] = 1, ['\\'] = 1, ['/'] = 1, ['b'] = 1, ['f'] = 1, ['n'] = 1, ['r'] = 1, ['t'] = 1, ['u'] = 2};

/* The first byte at or after p that ends a plain run of string content: a quote, a backslash
 * or a raw control character (below 0x20); e when there is none. SSE2 sixteen bytes a step,
 * otherwise eight a step by word arithmetic (a zero byte of w ^ pattern, or a byte below 0x20,
 * sets the high bit of its lane; only whether one is set is used, so the byte order does not
 * matter), then bytes: both paths stop at the same byte (build with -DASC_PORTABLE_SCAN to
 * run the specs on the portable one). */
static const char *string_stop(const char *p, const char *e) {
#ifdef ASC_SSE2
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), lim = _mm_set1_epi8(0x1F);
  for (; e - p >= 16; p += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                             _mm_cmpeq_epi8(_mm_max_epu8(v, lim), lim));
    unsigned bits = (unsigned)_mm_movemask_epi8(m);
    if (bits) return p + __builtin_ctz(bits);
  }
#else
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  for (; e - p >= 8; p += 8) {
    uint64_t w, q, b;
    memcpy(&w, p, 8);
    q = w ^ (ones * '"');
    b = w ^ (ones * '\\');
    if (((q - ones) & ~q & high) | ((b - ones) & ~b & high) | ((w - ones * 0x20) & ~w & high)) break;
  }
#endif
  while (p < e && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) p++;
  return p;
}

/* p at the opening quote; on OK *out is after the closing quote, [*s, *s + *n) the content and
 * *esc whether it holds an escape. One pass: the content has no raw control character and only
 * JSON's escapes (what yajl accepts; UTF-8 is not checked, as yajl is told not to). */
static int string_span(scan *sc, const char *p, const char *e, const char **s, size_t *n, int *esc,
                       const char **out) {
  const char *q = p + 1;
  int has = 0;
  for (;;) {
    q = string_stop(q, e);
    if (q >= e) return NEED;
    if (*q == '"') {
      *s = p + 1;
      *n = (size_t)(q - p - 1);
      *esc = has;
      *out = q + 1;
      return OK;
    }
    if (*q != '\\') return sc->bad_at = p, sc->bad_msg = "invalid string", BAD;
    has = 1;
    if (e - q < 2) return NEED;
    unsigned char k = escape_kind[(unsigned char)q[1]];
    if (k == 1) {
      q += 2;
      continue;
    }
    if (k != 2) return sc->bad_at = p, sc->bad_msg = "invalid string", BAD;
    for (int i = 2; i < 6; i++) {
      if (q + i >= e) return NEED;
      if (!is_hex(q[i])) return sc->bad_at = p, sc->bad_msg = "invalid string", BAD;
    }
    q += 6;
  }
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A number by JSON's grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; NEED when it may go
 * on in the next chunk. */
static int number_span(scan *sc, const char *p, const char *e, const char **out) {
  const char *q = p;
  if (q < e && *q == '-') q++;
  if (q >= e) return NEED;
  if (*q == '0')
    q++;
  else if (is_digit(*q))
    while (q < e && is_digit(*q)) q++;
  else
    return sc->bad_at = q, sc->bad_msg = "malformed number", BAD;
  if (q < e && *q == '.') {
    const char *d = ++q;
    while (q < e && is_digit(*q)) q++;
    if (q < e && q == d) return sc->bad_at = q, sc->bad_msg = "malformed number", BAD;
  }
  if (q < e && (*q == 'e' || *q == 'E')) {
    q++;
    if (q < e && (*q == '+' || *q == '-')) q++;
    const char *d = q;
    while (q < e && is_digit(*q)) q++;
    if (q < e && q == d) return sc->bad_at = q, sc->bad_msg = "malformed number", BAD;
  }
  if (q >= e) return NEED; /* the number may continue in the next chunk */
  *out = q;
  return OK;
}

/* Skip any value, checking its grammar on the way (a file is accepted exactly when yajl accepts
 * it, even in the parts no field is read from); containers keep their own small stack. */
static int skip_value(scan *sc, const char *p, const char *e, const char **out) {
  enum { VALUE, AFTER, OBJ_FIRST, KEY, COLON, ARR_FIRST } st = VALUE;
  char stack[256];
  int depth = 0;
  for (;;) {
    if (depth) p = skip_ws(p, e);
    if (p >= e) return NEED;
    char c = *p;
    int closed = 0;
    switch (st) {
    case OBJ_FIRST:
    case ARR_FIRST:
      if (c == stack[depth - 1]) {
        closed = 1;
        break;
      }
      st = st == OBJ_FIRST ? KEY : VALUE;
      continue;
    case KEY: {
      const char *s;
      size_t n;
      int esc;
      if (c != '"') return sc->bad_at = p, sc->bad_msg = "expected a key", BAD;
      int r = string_span(sc, p, e, &s, &n, &esc, &p);
      if (r != OK) return r;
      st = COLON;
      continue;
    }
    case COLON:
      if (c != ':') return sc->bad_at = p, sc->bad_msg = "expected ':'", BAD;
      p++;
      st = VALUE;
      continue;
    case AFTER:
      if (c == ',') {
        p++;
        st = stack[depth - 1] == '}' ? KEY : VALUE;
        continue;
      }
      if (c != stack[depth - 1])
        return sc->bad_at = p, sc->bad_msg = "expected ',' or a closing bracket", BAD;
      closed = 1;
      break;
    case VALUE:
      if (c == '{' || c == '[') {
        if (depth == (int)sizeof stack)
          return sc->bad_at = p, sc->bad_msg = "nesting deeper than 256 levels is not supported", BAD;
        stack[depth++] = c == '{' ? '}' : ']';
        st = c == '{' ? OBJ_FIRST : ARR_FIRST;
        p++;
        continue;
      }
      int r;
      if (c == '"') {
        const char *s;
        size_t n;
        int esc;
        r = string_span(sc, p, e, &s, &n, &esc, &p);
      } else if (c == 't' || c == 'f' || c == 'n') {
        const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t n = strlen(lit), have = (size_t)(e - p) < n ? (size_t)(e - p) : n;
        if (memcmp(p, lit, have) != 0) return sc->bad_at = p, sc->bad_msg = "invalid literal", BAD;
        if (have < n) return NEED;
        p += n;
        r = OK;
      } else if (c == '-' || is_digit(c)) {
        r = number_span(sc, p, e, &p);
      } else {
        return sc->bad_at = p, sc->bad_msg = "unexpected character", BAD;
      }
      if (r != OK) return r;
      break;
    }
    if (closed) {
      depth--;
      p++;
    }
    if (depth == 0) {
      *out = p;
      return OK;
    }
    st = AFTER;
  }
}

/* A value for a slot: scalars are remembered as spans, containers only as present. */
static int slot_value(scan *sc, slot *sl, const char *p, const char *e, const char **out) {
  if (p >= e) return NEED;
  char c = *p;
  int r;
  sl->esc = 0;
  if (c == '"') {
    r = string_span(sc, p, e, &sl->v, &sl->vlen, &sl->esc, out);
    if (r == OK) sl->vtype = V_STR;
    return r;
  }
  r = skip_value(sc, p, e, out);
  if (r != OK) return r;
  sl->v = p;
  sl->vlen = (size_t)(*out - p);
  sl->vtype = c == '{' || c == '[' ? V_CONTAINER : c == 't' || c == 'f' ? V_BOOL : c == 'n' ? V_NULL : V_NUM;
  return OK;
}

static slot *find(scan *sc, const char *k, size_t n, int in_args) {
  if (n == 0) {
    for (size_t i = 0; i < sc->nslots; i++)
      if (sc->slots[i].len == 0 && sc->slots[i].in_args == in_args) return &sc->slots[i];
    return NULL;
  }
  for (int i = sc->first[(unsigned char)k[0]]; i; i = sc->next_same[i - 1]) {
    slot *sl = &sc->slots[i - 1];
    if (sl->len == n && sl->in_args == in_args && memcmp(sl->name, k, n) == 0) return sl;
  }
  return NULL;
}

static void decide(scan *sc);

/* An object's members, calling back for each key. in_args selects which slots match. */
static int members(scan *sc, const char *p, const char *e, int in_args, const char **out) {
  /* p after '{' */
  p = skip_ws(p, e);
  if (p >= e) return NEED;
  if (*p == '}') {
    *out = p + 1;
    return OK;
  }
  for (;;) {
    if (p >= e) return NEED;
    if (*p != '"') return sc->bad_at = p, sc->bad_msg = "expected a key", BAD;
    const char *k;
    size_t kn;
    int kesc, r;
    r = string_span(sc, p, e, &k, &kn, &kesc, &p);
    if (r != OK) return r;
    p = skip_ws(p, e);
    if (p >= e) return NEED;
    if (*p != ':') return sc->bad_at = p, sc->bad_msg = "expected ':'", BAD;
    p = skip_ws(p + 1, e);
    if (p >= e) return NEED;
    if (!in_args && kn == 4 && memcmp(k, "args", 4) == 0 && *p == '{' && sc->has_args_slots &&
        !sc->skipping) {
      r = members(sc, p + 1, e, 1, &p);
    } else {
      slot *sl = kesc ? NULL : find(sc, k, kn, in_args);
      if (sl && (!sc->skipping || sl->decides)) {
        r = slot_value(sc, sl, p, e, &p);
        if (r == OK && sl->decides && !sc->early_off) decide(sc);
      } else {
        /* a value no field wants, or any value after the event was decided against */
        sc->skipped |= sl != NULL || (kn == 4 && memcmp(k, "args", 4) == 0);
        r = skip_value(sc, p, e, &p);
      }
    }
    if (r != OK) return r;
    p = skip_ws(p, e);
    if (p >= e) return NEED;
    if (*p == '}') {
      *out = p + 1;
      return OK;
    }
    if (*p != ',') return sc->bad_at = p, sc->bad_msg = "expected ',' or '}'", BAD;
    p = skip_ws(p + 1, e);
  }
}

/* ---------- values of kept events ---------- */

/* The slot's text, unescaped when needed (valid until the next call). */
static const char *slot_text(scan *sc, const slot *sl, size_t *n) {
  if (!sl->esc) return *n = sl->vlen, sl->v;
  if (sl->vlen + 1 > sc->scratch_cap) {
    size_t nc = sc->scratch_cap ? sc->scratch_cap : 4096;
    while (nc < sl->vlen + 1) nc *= 2;
    char *p = realloc(sc->scratch, nc);
    if (!p) return sc->oom = 1, *n = 0, "";
    sc->scratch = p;
    sc->scratch_cap = nc;
  }
  *n = asc_json_unescape(sl->v, sl->vlen, sc->scratch);
  return sc->scratch;
}

static int text_eq(scan *sc, const slot *sl, const char *v) {
  if (sl->vtype == V_NONE || sl->vtype == V_CONTAINER || sl->vtype == V_NULL) return 0;
  size_t n;
  const char *t = slot_text(sc, sl, &n);
  return strlen(v) == n && memcmp(t, v, n) == 0;
}

/* The raw map twice as large (at least 1024 slots), its entries (and their copies) placed
 * again. */
static int grow_raw(scan *sc) {
  size_t nn;
  if (asc_size_mul(sc->raw_nslots ? sc->raw_nslots : 512, 2, &nn)) return -1;
  raw_slot *ns = asc_alloc_array(nn, sizeof *ns);
  uint32_t *nc = sc->raw_copy ? asc_alloc_array(nn, sizeof *nc) : NULL;
  if (!ns || (sc->raw_copy && !nc)) {
    free(ns);
    return -1;
  }
  memset(ns, 0, nn * sizeof *ns);
  if (nc) memset(nc, 0, nn * sizeof *nc);
  for (size_t k = 0; k < sc->raw_nslots; k++) {
    if (!sc->raw[k].id) continue;
    size_t j = sc->raw[k].hash & (nn - 1);
    while (ns[j].id) j = (j + 1) & (nn - 1);
    ns[j] = sc->raw[k];
    if (nc) nc[j] = sc->raw_copy[k];
  }
  free(sc->raw);
  free(sc->raw_copy);
  sc->raw = ns;
  sc->raw_copy = nc;
  sc->raw_nslots = nn;
  return 0;
}

enum { RAW_COPIES_MAX = 8 << 20 };

/* Keep raw text v[0, n) for raw slot i (see scan.raw_copy); nothing when past the bound or out
 * of memory, as the copy only makes the next confirmation faster. */
static void keep_copy(scan *sc, size_t i, const char *v, size_t n) {
  uint32_t len = (uint32_t)n;
  if (n > RAW_COPIES_MAX) return; /* first: the sum below cannot wrap then */
  size_t need = sc->copies_n + sizeof len + n;
  if (need > RAW_COPIES_MAX) return;
  if (!sc->raw_copy && !(sc->raw_copy = calloc(sc->raw_nslots, sizeof *sc->raw_copy))) return;
  if (need > sc->copies_cap) {
    size_t cap = sc->copies_cap ? sc->copies_cap : 64 << 10;
    while (cap < need) cap *= 2;
    if (cap > RAW_COPIES_MAX) cap = RAW_COPIES_MAX;
    char *c = realloc(sc->copies, cap);
    if (!c) return;
    sc->copies = c;
    sc->copies_cap = cap;
  }
  memcpy(sc->copies + sc->copies_n, &len, sizeof len);
  memcpy(sc->copies + sc->copies_n + sizeof len, v, n);
  sc->raw_copy[i] = (uint32_t)sc->copies_n + 1;
  sc->copies_n = need;
}

/* Whether raw slot i has a copy of exactly v[0, n). */
static int same_copy(const scan *sc, size_t i, const char *v, size_t n) {
  uint32_t at = sc->raw_copy ? sc->raw_copy[i] : 0, len;
  if (!at) return 0;
  memcpy(&len, sc->copies + at - 1, sizeof len);
  return len == n && memcmp(sc->copies + at - 1 + sizeof len, v, n) == 0;
}

static int intern(scan *sc, slot *sl, uint32_t *id) {
  *id = 0;
  if (sl->vtype == V_NONE || sl->vtype == V_NULL || sl->vtype == V_CONTAINER) return 0;
  if (!sl->esc && sl->vlen <= sizeof sl->last) {
    if (sl->last_id && sl->last_n == sl->vlen && memcmp(sl->last, sl->v, sl->vlen) == 0)
      return *id = sl->last_id, 0;
    if (asc_strtab_intern(sc->strings, sl->v, sl->vlen, id)) return sc->oom = 1;
    memcpy(sl->last, sl->v, sl->vlen);
    sl->last_n = sl->vlen;
    sl->last_id = *id;
    return 0;
  }
  if (!sl->esc) return asc_strtab_intern(sc->strings, sl->v, sl->vlen, id) ? sc->oom = 1 : 0;
  /* escaped: looked up by its raw text first, so a string met again is not decoded again */
  uint64_t h64 = asc_hash_bytes(asc_hash_seed() ^ 0x51AFD7ED558CCDFFull ^ sl->vlen, sl->v, sl->vlen);
  uint32_t h = (uint32_t)(h64 ^ (h64 >> 32));
  size_t mask = sc->raw_nslots - 1, i = h & mask;
  for (; sc->raw_nslots && sc->raw[i].id; i = (i + 1) & mask) {
    if (sc->raw[i].hash != h) continue;
    if (same_copy(sc, i, sl->v, sl->vlen)) return *id = sc->raw[i].id, 0;
    size_t dn;
    const char *d = asc_strtab_get(sc->strings, sc->raw[i].id, &dn);
    if (d && asc_json_escaped_equal(sl->v, sl->vlen, d, dn)) {
      if (!sc->raw_copy || !sc->raw_copy[i]) keep_copy(sc, i, sl->v, sl->vlen); /* met again */
      return *id = sc->raw[i].id, 0;
    }
  }
  size_t n;
  const char *t = slot_text(sc, sl, &n);
  if (sc->oom || asc_strtab_intern(sc->strings, t, n, id)) return sc->oom = 1;
  if ((sc->raw_used + 1) * 2 > sc->raw_nslots) {
    if (grow_raw(sc)) return sc->oom = 1;
    mask = sc->raw_nslots - 1;
    i = h & mask;
    while (sc->raw[i].id) i = (i + 1) & mask;
  }
  sc->raw[i] = (raw_slot){h, *id};
  sc->raw_used++;
  return 0;
}

static int push_field(scan *sc, const asc_jfield *f, slot *sl, asc_col *c) {
  int has = sl->vtype == V_STR || sl->vtype == V_NUM;
  int r = 0;
  switch (f->type) {
  case ASC_JT_STRING: {
    uint32_t id;
    if (intern(sc, sl, &id)) return -1;
    r = asc_col_push_str(c, id);
    break;
  }
  case ASC_JT_INT:
  case ASC_JT_US: {
    int64_t x = ASC_NULL_I64;
    size_t n = 0;
    const char *v = has ? slot_text(sc, sl, &n) : NULL;
    int scale = f->type == ASC_JT_US ? 3 : 0;
    if (v && !(sl->vtype == V_STR && asc_is_na(v, n))) {
      if (scale ? asc_decimal_scaled(v, n, scale, &x) : asc_decimal_i64(v, n, &x)) {
        if (!sc->bad[0])
          snprintf(sc->bad, sizeof sc->bad, "field \"%s\": \"%.*s\" is not a %s", f->name,
                   (int)(n > 64 ? 64 : n), v, scale ? "time" : "whole number");
        x = ASC_NULL_I64;
      }
    }
    r = asc_col_push_i64(c, x);
    break;
  }
  case ASC_JT_NUM: {
    double d = NAN;
    size_t n = 0;
    const char *v = has ? slot_text(sc, sl, &n) : NULL;
    if (v && asc_decimal_f64(v, n, &d)) d = NAN;
    r = asc_col_push_f64(c, d);
    break;
  }
  }
  if (r) sc->oom = 1;
  return r;
}

static int pred_holds(scan *sc, const asc_jpred *p, const slot *sl) {
  switch (p->op) {
  case ASC_PRED_EXISTS: return sl->vtype != V_NONE && sl->vtype != V_NULL;
  case ASC_PRED_ABSENT: return sl->vtype == V_NONE || sl->vtype == V_NULL;
  case ASC_PRED_EQ: return p->nvalues > 0 && text_eq(sc, sl, p->values[0]);
  case ASC_PRED_IN:
    for (size_t i = 0; i < p->nvalues; i++)
      if (text_eq(sc, sl, p->values[i])) return 1;
    return 0;
  }
  return 0;
}

/* After a value a predicate (or the metadata test) reads: whether the event already fails. A
 * predicate whose key has not been met is undecided (an event without the key is decided at
 * its end); a later value of the same key decides again, and if the event then holds, or may
 * be metadata, after values were stepped over, it is read again. */
static void decide(scan *sc) {
  int rejected = 0;
  for (size_t i = 0; i < sc->spec->npreds && !rejected; i++) {
    const slot *sl = &sc->slots[sc->pred_slot[i]];
    if (sl->vtype != V_NONE && !pred_holds(sc, &sc->spec->preds[i], sl)) rejected = 1;
  }
  const slot *ph = &sc->slots[sc->ph_slot];
  int skipping = rejected && (!sc->spec->want_meta || (ph->vtype != V_NONE && !text_eq(sc, ph, "M")));
  if (sc->skipped && !skipping) sc->reparse = 1; /* what was stepped over is wanted after all */
  sc->rejected = rejected;
  sc->skipping = skipping;
}

static int end_event(scan *sc) {
  asc_json_result *r = sc->res;
  r->events++;
  if (sc->spec->want_meta && text_eq(sc, &sc->slots[sc->ph_slot], "M")) {
    uint32_t what, pid, tid, name;
    if (intern(sc, &sc->slots[sc->name_slot], &what) || intern(sc, &sc->slots[sc->pid_slot], &pid) ||
        intern(sc, &sc->slots[sc->tid_slot], &tid) || intern(sc, &sc->slots[sc->argname_slot], &name))
      return -1;
    if (name && (asc_col_push_str(&r->meta_what, what) || asc_col_push_str(&r->meta_pid, pid) ||
                 asc_col_push_str(&r->meta_tid, tid) || asc_col_push_str(&r->meta_name, name)))
      return sc->oom = 1, -1;
  }
  for (size_t i = 0; i < sc->spec->npreds; i++)
    if (!pred_holds(sc, &sc->spec->preds[i], &sc->slots[sc->pred_slot[i]])) return 0;
  for (size_t i = 0; i < sc->spec->nfields; i++)
    if (push_field(sc, &sc->spec->fields[i], &sc->slots[sc->field_slot[i]], &r->cols[i])) return -1;
  r->nrows++;
  return 0;
}

/* One event: an object (anything else in the array is counted and skipped). */
static int event(scan *sc, const char *p, const char *e, const char **out) {
  if (p >= e) return NEED;
  if (*p != '{') return skip_value(sc, p, e, out);
  sc->early_off = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < sc->nslots; i++) sc->slots[i].vtype = V_NONE;
    sc->rejected = sc->skipping = sc->skipped = sc->reparse = 0;
    int r = members(sc, p + 1, e, 0, out);
    if (r != OK) return r;
    if (!sc->reparse) break;
    sc->early_off = 1;
  }
  if (end_event(sc)) return sc->bad_at = p, sc->bad_msg = "out of memory", BAD;
  return OK;
}

/* ---------- driver ---------- */

enum { ST_ROOT, ST_OBJ_FIRST, ST_OBJ_NEXT, ST_EV_FIRST, ST_EV_NEXT, ST_END, ST_DONE };

typedef struct {
  int state, in_object; /* in_object: the events array sits in {"traceEvents": ...} */
  int found_events;
} machine;

#define NO_EVENTS "no event array: expected a JSON array or an object with \"traceEvents\""

/* An event of the array starts at file offset off: whether the next range starts here. The
 * starts this reader has gone past were guesses that fell inside an event: their ranges are
 * dropped and this reader reads on to the start after. */
static int hand_over(asc_json_range *rg, long long off) {
  /* only a reader on true boundaries may tell another that its start is false */
  while (rg->ends_at < rg->nnext && off > rg->next[rg->ends_at]) {
    if (atomic_load(&rg->proved[rg->index])) atomic_store(&rg->dropped[rg->ends_at], 1);
    rg->ends_at++;
  }
  return rg->ends_at < rg->nnext && off == rg->next[rg->ends_at];
}

/* One step of the top level; consumes a whole unit (an event, a root member) or nothing. */
static int step(scan *sc, machine *m, const char *p, const char *e, int eof, const char **out) {
  p = skip_ws(p, e);
  if (p >= e) {
    if (!eof) return NEED;
    if (m->state == ST_END) return m->state = ST_DONE, *out = p, OK;
    return NEED;
  }
  int r;
  switch (m->state) {
  case ST_ROOT:
    if (*p == '[')
      m->state = ST_EV_FIRST, m->found_events = 1;
    else if (*p == '{')
      m->state = ST_OBJ_FIRST, m->in_object = 1;
    else
      return sc->bad_at = p, sc->bad_msg = NO_EVENTS, BAD;
    *out = p + 1;
    return OK;
  case ST_OBJ_FIRST:
  case ST_OBJ_NEXT: {
    if (*p == '}') return m->state = ST_END, *out = p + 1, OK;
    if (m->state == ST_OBJ_NEXT) {
      if (*p != ',') return sc->bad_at = p, sc->bad_msg = "expected ',' or '}'", BAD;
      p = skip_ws(p + 1, e);
      if (p >= e) return NEED;
    }
    const char *k;
    size_t kn;
    int kesc;
    if (*p != '"') return sc->bad_at = p, sc->bad_msg = "expected a key", BAD;
    r = string_span(sc, p, e, &k, &kn, &kesc, &p);
    if (r != OK) return r;
    p = skip_ws(p, e);
    if (p >= e) return NEED;
    if (*p != ':') return sc->bad_at = p, sc->bad_msg = "expected ':'", BAD;
    p = skip_ws(p + 1, e);
    if (p >= e) return NEED;
    if (kn == 11 && memcmp(k, "traceEvents", 11) == 0 && *p == '[') {
      m->state = ST_EV_FIRST;
      m->found_events = 1;
      *out = p + 1;
      return OK;
    }
    r = skip_value(sc, p, e, out);
    if (r == OK) m->state = ST_OBJ_NEXT;
    return r;
  }
  case ST_EV_FIRST:
  case ST_EV_NEXT:
    if (*p == ']') {
      m->state = m->in_object ? ST_OBJ_NEXT : ST_END;
      *out = p + 1;
      return OK;
    }
    if (m->state == ST_EV_NEXT) {
      if (*p != ',') return sc->bad_at = p, sc->bad_msg = "expected ',' or ']'", BAD;
      p = skip_ws(p + 1, e);
      if (p >= e) return NEED;
      if (sc->range && hand_over(sc->range, sc->base + (long long)(p - sc->buf))) return HAND_OVER;
    }
    r = event(sc, p, e, out);
    if (r == OK) m->state = ST_EV_NEXT;
    return r;
  case ST_END: return sc->bad_at = p, sc->bad_msg = "trailing garbage", BAD;
  }
  return BAD;
}

/* Line and column of a byte offset, counted by reading the file again (errors only). */
static void locate(const char *path, long long off, long *line, long *col) {
  *line = 1;
  *col = 1;
  FILE *f = fopen(path, "rb");
  if (!f) return;
  char buf[65536];
  long long pos = 0;
  size_t n;
  while (pos < off && (n = fread(buf, 1, sizeof buf, f)) > 0) {
    for (size_t i = 0; i < n && pos < off; i++, pos++) {
      if (buf[i] == '\n')
        (*line)++, *col = 1;
      else
        (*col)++;
    }
  }
  fclose(f);
}

/* yajl's verdict on a document fed a block at a time: the place of the first error is counted
 * from the bytes fed (offset, line, column), so a reader checks the file in the one pass it
 * reads it in. */
struct asc_json_checker {
  yajl_handle h;
  long long base;    /* the file offset of the next byte fed */
  long line;         /* the line of that byte */
  long long line_at; /* the file offset where that line starts */
  int failed;
  asc_error first; /* the error, told again to a caller that goes on */
};

asc_json_checker *asc_json_checker_new(void) {
  asc_json_checker *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  if (!(c->h = yajl_alloc(NULL, NULL, NULL))) {
    free(c);
    return NULL;
  }
  yajl_config(c->h, yajl_dont_validate_strings, 1);
  c->line = 1;
  return c;
}

void asc_json_checker_free(asc_json_checker *c) {
  if (!c) return;
  yajl_free(c->h);
  free(c);
}

static void advance(asc_json_checker *c, const unsigned char *p, size_t n) {
  const unsigned char *q = p, *e = p + n;
  while ((q = memchr(q, '\n', (size_t)(e - q))) != NULL) {
    c->line++;
    c->line_at = c->base + (long long)(++q - p);
  }
  c->base += (long long)n;
}

/* yajl's message, on one line. */
static void yajl_message(asc_json_checker *c, const unsigned char *text, size_t n, char *msg, size_t msgsz,
                         const char *none) {
  unsigned char *m = yajl_get_error(c->h, 0, text, n);
  snprintf(msg, msgsz, "%s", m ? (char *)m : none);
  if (m) yajl_free_error(c->h, m);
  for (char *q = msg; *q; q++)
    if (*q == '\n') *q = ' ';
  size_t ml = strlen(msg);
  while (ml && msg[ml - 1] == ' ') msg[--ml] = '\0';
}

int asc_json_checker_feed(asc_json_checker *c, const char *path, const unsigned char *buf, size_t n,
                          asc_error *err) {
  if (c->failed) return *err = c->first, -1;
  /* a UTF-8 byte order mark before the document, as the scan skips it */
  size_t skip = c->base == 0 && n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  if (yajl_parse(c->h, buf + skip, n - skip) != yajl_status_ok) {
    size_t used = yajl_get_bytes_consumed(c->h) + skip;
    char msg[256];
    yajl_message(c, buf + skip, n - skip, msg, sizeof msg, "parse error");
    advance(c, buf, used > n ? n : used);
    c->failed = 1;
    asc_fail(&c->first, path, c->base, c->line, c->base - c->line_at + 1, "invalid JSON: %s", msg);
    return *err = c->first, -1;
  }
  advance(c, buf, n);
  return 0;
}

int asc_json_checker_end(asc_json_checker *c, const char *path, asc_error *err) {
  if (c->failed) return *err = c->first, -1;
  if (yajl_complete_parse(c->h) == yajl_status_ok) return 0;
  char msg[256];
  yajl_message(c, (const unsigned char *)"", 0, msg, sizeof msg, "premature EOF");
  c->failed = 1;
  asc_fail(&c->first, path, c->base, c->line, c->base - c->line_at + 1,
           "invalid JSON (the file ends early: truncated?): %s", msg);
  return *err = c->first, -1;
}

/* yajl's verdict on the file as an error naming the place, or 0 when yajl found none (or the
 * file could not be read again). */
static int json_verdict(const char *path, asc_error *err) {
  asc_error ignored;
  FILE *f = asc_open_input(path, &ignored);
  if (!f) return 0;
  asc_json_checker *c = asc_json_checker_new();
  static const size_t CH = 1 << 20;
  unsigned char *buf = malloc(CH);
  int rc = 0;
  size_t n;
  if (c && buf) {
    while (rc == 0 && (n = fread(buf, 1, CH, f)) > 0) rc = asc_json_checker_feed(c, path, buf, n, err);
    if (rc == 0) rc = asc_json_checker_end(c, path, err);
  }
  free(buf);
  asc_json_checker_free(c);
  fclose(f);
  return rc;
}

/* The scan's own error at fast_off, told as yajl tells it when yajl finds one (a file that ends
 * early included). */
static int parse_error(const char *path, long long fast_off, const char *fast_msg, asc_error *err) {
  if (json_verdict(path, err)) return -1;
  /* valid JSON that is not a trace the scan can read (a bare value, nesting too deep) */
  long line, col;
  locate(path, fast_off, &line, &col);
  return asc_fail_text(err, path, fast_off, line, col, fast_msg);
}

void asc_json_result_free(asc_json_result *res, size_t nfields) {
  if (res->cols)
    for (size_t i = 0; i < nfields; i++) asc_col_free(&res->cols[i]);
  free(res->cols);
  res->cols = NULL;
  asc_col_free(&res->meta_what);
  asc_col_free(&res->meta_pid);
  asc_col_free(&res->meta_tid);
  asc_col_free(&res->meta_name);
  res->nrows = 0;
}

static int add_slot(scan *sc, const char *name, int in_args) {
  for (size_t i = 0; i < sc->nslots; i++)
    if (sc->slots[i].in_args == in_args && strcmp(sc->slots[i].name, name) == 0) return (int)i;
  memset(&sc->slots[sc->nslots], 0, sizeof sc->slots[0]);
  sc->slots[sc->nslots].name = name;
  sc->slots[sc->nslots].len = strlen(name);
  sc->slots[sc->nslots].in_args = in_args;
  if (in_args) sc->has_args_slots = 1;
  return (int)sc->nslots++;
}

/* The whole file (range NULL) or one range of it. A range reports its errors briefly: the
 * splitter scans the file again on one thread for the message a person reads. */
static int scan_file(const char *path, const asc_json_spec *spec, asc_json_range *rg, asc_json_result *res,
                     asc_error *err) {
  memset(res, 0, sizeof *res);
  asc_col_init(&res->meta_what, ASC_STR);
  asc_col_init(&res->meta_pid, ASC_STR);
  asc_col_init(&res->meta_tid, ASC_STR);
  asc_col_init(&res->meta_name, ASC_STR);
  if (!spec->strings) return asc_fail(err, path, -1, 0, 0, "no string table given");
  FILE *f = asc_open_input(path, err);
  if (!f) return -1;
  long long total = fseeko(f, 0, SEEK_END) == 0 ? ftello(f) : -1;
  long long from = rg ? rg->from : 0;
  if (total < 0 || fseeko(f, from, SEEK_SET) != 0) { /* a range read from the wrong place is no range */
    fclose(f);
    return asc_fail(err, path, from, 0, 0, "cannot seek in the file");
  }

  scan sc;
  memset(&sc, 0, sizeof sc);
  sc.spec = spec;
  sc.res = res;
  sc.range = rg;
  sc.strings = rg ? rg->strings : spec->strings;
  sc.slots = calloc(spec->nfields + spec->npreds + 6, sizeof *sc.slots);
  sc.field_slot = calloc(spec->nfields + 1, sizeof(int));
  sc.pred_slot = calloc(spec->npreds + 1, sizeof(int));
  sc.next_same = calloc(spec->nfields + spec->npreds + 6, sizeof(int));
  res->cols = calloc(spec->nfields + 1, sizeof *res->cols);
  size_t cap = spec->chunk ? spec->chunk : (size_t)1 << 20;
  if (cap < 64) cap = 64; /* the first read holds a byte order mark whole */
  char *buf = malloc(cap);
  int rc = 0;
  long long base = from; /* file offset of buf[0] */
  if (!sc.slots || !sc.field_slot || !sc.pred_slot || !sc.next_same || !res->cols || !buf) {
    rc = asc_fail(err, path, -1, 0, 0, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < spec->nfields; i++) {
    sc.field_slot[i] = add_slot(&sc, spec->fields[i].name, spec->fields[i].in_args);
    asc_kind k = spec->fields[i].type == ASC_JT_STRING ? ASC_STR
                 : spec->fields[i].type == ASC_JT_NUM  ? ASC_F64
                                                       : ASC_I64;
    asc_col_init(&res->cols[i], k);
  }
  for (size_t i = 0; i < spec->npreds; i++) {
    sc.pred_slot[i] = add_slot(&sc, spec->preds[i].name, spec->preds[i].in_args);
    sc.slots[sc.pred_slot[i]].decides = 1;
  }
  if (spec->want_meta) {
    sc.ph_slot = add_slot(&sc, "ph", 0);
    sc.slots[sc.ph_slot].decides = 1;
    sc.name_slot = add_slot(&sc, "name", 0);
    sc.pid_slot = add_slot(&sc, "pid", 0);
    sc.tid_slot = add_slot(&sc, "tid", 0);
    sc.argname_slot = add_slot(&sc, "name", 1);
  }
  for (size_t i = sc.nslots; i-- > 0;)
    if (sc.slots[i].len) {
      unsigned char c = (unsigned char)sc.slots[i].name[0];
      sc.next_same[i] = sc.first[c];
      sc.first[c] = (int)i + 1;
    }

  /* a range after the first starts at an event of the array */
  machine m = {from ? ST_EV_FIRST : ST_ROOT, rg ? rg->in_object : 0, from != 0};
  size_t start = 0, end = 0; /* unconsumed bytes are buf[start, end) */
  int eof = 0;
  long long next_report = 64LL << 20;
  while (m.state != ST_DONE) {
    const char *out = NULL;
    sc.buf = buf;
    sc.base = base;
    int r = step(&sc, &m, buf + start, buf + end, eof, &out);
    if (r == OK) {
      start = (size_t)(out - buf);
      continue;
    }
    if (r == HAND_OVER) {
      atomic_store(&rg->proved[rg->ends_at], 1);
      break;
    }
    if (r == BAD) {
      if (sc.oom)
        rc = asc_fail(err, path, base + (long long)start, 0, 0, "out of memory");
      else if (rg)
        rc = asc_fail_text(err, path, base + (long long)(sc.bad_at - buf), 0, 0, sc.bad_msg);
      else
        rc = parse_error(path, base + (long long)(sc.bad_at - buf), sc.bad_msg, err);
      goto done;
    }
    /* NEED: keep the unconsumed tail, read more, grow the buffer for a unit larger than it */
    if (eof) {
      if (base + (long long)end == 0)
        rc = asc_fail(err, path, 0, 1, 1, "the file is empty");
      else if (rg)
        rc = asc_fail(err, path, base + (long long)end, 0, 0, "premature EOF");
      else
        rc = parse_error(path, base + (long long)end, "premature EOF", err);
      goto done;
    }
    if (start > 0) {
      memmove(buf, buf + start, end - start);
      base += (long long)start;
      end -= start;
      start = 0;
    }
    if (end == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        rc = asc_fail(err, path, base, 0, 0, "out of memory (an event larger than %zu bytes)", cap);
        goto done;
      }
      buf = nb;
      cap *= 2;
    }
    size_t n = fread(buf + end, 1, cap - end, f);
    if (n == 0) {
      if (ferror(f)) {
        rc = asc_fail(err, path, base + (long long)end, 0, 0, "read error: %s", strerror(errno));
        goto done;
      }
      eof = 1;
    }
    /* a UTF-8 byte order mark at the very start (CSV files may have one too) is skipped */
    if (base == 0 && end == 0 && n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) start = 3;
    end += n;
    long long done = base + (long long)end;
    if (rg) {
      atomic_store_explicit(rg->done, done - from, memory_order_relaxed);
      if (atomic_load(rg->stop) || atomic_load(&rg->dropped[rg->index])) {
        rc = asc_fail(err, path, base, 0, 0, "interrupted");
        goto done;
      }
      if (!rg->report) continue;
      done = 0;
      for (size_t i = 0; i < rg->nnext; i++)
        done += atomic_load_explicit(&rg->done_all[i], memory_order_relaxed);
    }
    if (spec->progress && done >= next_report) {
      next_report = done + (64LL << 20);
      if (spec->progress(spec->progress_ud, done, total)) {
        if (rg) atomic_store(rg->stop, 1);
        rc = asc_fail(err, path, base, 0, 0, "interrupted");
        goto done;
      }
    }
  }
  if (rg && m.state == ST_DONE) {
    /* read to the end: the starts not met were guesses inside the last events */
    while (rg->ends_at < rg->nnext) {
      if (atomic_load(&rg->proved[rg->index])) atomic_store(&rg->dropped[rg->ends_at], 1);
      rg->ends_at++;
    }
  }
  if (!m.found_events) {
    rc = asc_fail(err, path, 0, 1, 1, NO_EVENTS);
    goto done;
  }
  /* A value that could not be converted became null; the caller decides whether to warn. */
  snprintf(res->warning, sizeof res->warning, "%s", sc.bad);
done:
  res->bytes = total;
  res->ranges = 1;
  if (!rg && spec->progress && rc == 0) spec->progress(spec->progress_ud, total, total);
  if (rc && !spec->partial) asc_json_result_free(res, spec->nfields);
  free(buf);
  free(sc.scratch);
  free(sc.raw);
  free(sc.raw_copy);
  free(sc.copies);
  free(sc.slots);
  free(sc.field_slot);
  free(sc.pred_slot);
  free(sc.next_same);
  fclose(f);
  return rc;
}

int asc_json_scan_range(const char *path, const asc_json_spec *spec, asc_json_range *rg, asc_json_result *res,
                        asc_error *err) {
  return scan_file(path, spec, rg, res, err);
}

int asc_json_scan(const char *path, const asc_json_spec *spec, asc_json_result *res, asc_error *err) {
  if (spec->threads > 1 || spec->nsplit_at) {
    int r = asc_json_scan_parallel(path, spec, res, err);
    if (r <= 0) return r;
  }
  return scan_file(path, spec, NULL, res, err);
}
