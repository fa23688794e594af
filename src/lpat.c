/* Lua patterns in linear time (see lpat.h): a pattern becomes a list of items; a quantified item
 * is accepted only where its run has one possible extent, which makes every attempt
 * deterministic, and the runs that led to a failure are remembered so that no character is
 * scanned twice by the same item. */
#include "ascope/lpat.h"
#include "ascope/simd.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { K_CLASS, K_OPEN, K_CLOSE, K_END, K_FRONT, K_WORD_BEFORE, K_WORD_AFTER };

#define MAX_ITEMS 512

typedef struct item {
  uint8_t kind;
  char q;        /* '1' (once), '?', '*', '+', '-' */
  uint8_t lazy0; /* a '-' whose rest always succeeds: it takes nothing, as Lua's does */
  uint8_t all;   /* the class is every byte (`.`): a run goes to the end */
  int capno;     /* K_OPEN, K_CLOSE: the capture's number (1 = the first opened) */
  uint8_t set[32];
} item;

typedef struct span {
  size_t lo, hi;
} span;

struct asc_lpat {
  item *items;
  size_t n;
  int anchor;
  char *prefix; /* the longest literal at a fixed distance from the match start */
  size_t prefix_len;
  size_t prefix_at; /* that distance */
  unsigned epoch;   /* a memo entry is valid when its epoch is the current find's */
  unsigned *memo_epoch;
  span *memo; /* per item: a run [lo, hi) after which the attempt failed */
  span *run;  /* per item: the run of the current attempt */
  size_t *ran;
};

#define IN(set, c) (((set)[(unsigned char)(c) >> 3] >> ((unsigned char)(c)&7)) & 1)

static void add(uint8_t *set, int c) { set[(unsigned char)c >> 3] |= (uint8_t)(1u << (c & 7)); }

/* Lua's match_class: %a %d ... and their upper-case complements; another letter is itself. */
static int match_class(int c, int cl) {
  int res;
  switch (tolower(cl)) {
  case 'a': res = isalpha(c); break;
  case 'c': res = iscntrl(c); break;
  case 'd': res = isdigit(c); break;
  case 'g': res = isgraph(c); break;
  case 'l': res = islower(c); break;
  case 'p': res = ispunct(c); break;
  case 's': res = isspace(c); break;
  case 'u': res = isupper(c); break;
  case 'w': res = isalnum(c); break;
  case 'x': res = isxdigit(c); break;
  default: return cl == c;
  }
  if (isupper(cl)) res = !res;
  return res != 0;
}

/* Lua's matchbracketclass: p at '[', ec at the closing ']'. */
static int match_bracket(int c, const char *p, const char *ec) {
  int sig = 1;
  if (p[1] == '^') {
    sig = 0;
    p++;
  }
  while (++p < ec) {
    if (*p == '%') {
      p++;
      if (match_class(c, (unsigned char)*p)) return sig;
    } else if (p[1] == '-' && p + 2 < ec) {
      p += 2;
      if ((unsigned char)p[-2] <= c && c <= (unsigned char)*p) return sig;
    } else if ((unsigned char)*p == c) {
      return sig;
    }
  }
  return !sig;
}

/* The end of a set starting at p ('['), or NULL when it is not closed (Lua's classEnd). */
static const char *set_end(const char *p, const char *end) {
  p++;
  if (p < end && *p == '^') p++;
  do {
    if (p >= end) return NULL;
    if (*(p++) == '%' && p < end) p++;
  } while (p >= end || *p != ']');
  return p;
}

static int full(const uint8_t *set) {
  for (int i = 0; i < 32; i++)
    if (set[i] != 0xff) return 0;
  return 1;
}

static int disjoint(const uint8_t *a, const uint8_t *b) {
  for (int i = 0; i < 32; i++)
    if (a[i] & b[i]) return 0;
  return 1;
}

/* From item k on, the rest matches wherever it starts: only captures and optional items (`?`,
 * `*`, `-`), and a `$` only after a `.*` or `.-` that can reach the end. */
static int tail_always(const item *it, size_t n, size_t k) {
  int reaches_end = 0;
  for (; k < n; k++) {
    switch (it[k].kind) {
    case K_OPEN:
    case K_CLOSE: continue;
    case K_END:
      if (!reaches_end) return 0;
      continue;
    case K_CLASS:
      if (it[k].q == '1' || it[k].q == '+') return 0;
      if (it[k].q != '?' && full(it[k].set)) reaches_end = 1;
      continue;
    default: return 0;
    }
  }
  return 1;
}

/* Whether the run of quantified item i has one extent whatever follows. */
static int deterministic(item *it, size_t n, size_t i) {
  if (it[i].q == '-' && tail_always(it, n, i + 1)) {
    it[i].lazy0 = 1;
    return 1;
  }
  for (size_t j = i + 1; j < n; j++) {
    switch (it[j].kind) {
    case K_OPEN:
    case K_CLOSE: continue;
    case K_END: return 1;
    case K_FRONT: return 0;
    default: break;
    }
    if (tail_always(it, n, j)) return 1;
    if (!disjoint(it[i].set, it[j].set)) return 0;
    if (it[j].q == '1' || it[j].q == '+') return 1;
  }
  return 1;
}

static asc_lpat *refuse(asc_lpat *p, const char **why, const char *text) {
  *why = text;
  asc_lpat_free(p);
  return NULL;
}

asc_lpat *asc_lpat_compile(const char *pat, size_t len, int flags, const char **why) {
  asc_lpat *p = calloc(1, sizeof *p);
  if (!p) return refuse(NULL, why, "out of memory");
  p->items = calloc(MAX_ITEMS + 2, sizeof *p->items);
  if (!p->items) return refuse(p, why, "out of memory");
  const char *s = pat, *end = pat + len;
  item *it = p->items;
  size_t n = 0;
  int opened = 0, depth = 0, open_no[MAX_ITEMS];
  if (flags & ASC_LPAT_WORD) it[n++].kind = K_WORD_BEFORE;
  if (s < end && *s == '^') {
    p->anchor = 1;
    s++;
  }
  while (s < end) {
    if (n >= MAX_ITEMS) return refuse(p, why, "pattern too long");
    item *cur = &it[n];
    memset(cur, 0, sizeof *cur);
    cur->q = '1';
    const char *next;
    if (*s == '(') {
      if (s + 1 < end && s[1] == ')') return refuse(p, why, "position capture");
      cur->kind = K_OPEN;
      cur->capno = ++opened;
      open_no[depth++] = cur->capno;
      n++;
      s++;
      continue;
    }
    if (*s == ')') {
      if (depth == 0) return refuse(p, why, "invalid pattern capture");
      cur->kind = K_CLOSE;
      cur->capno = open_no[--depth];
      n++;
      s++;
      continue;
    }
    if (*s == '$' && s + 1 == end) {
      cur->kind = K_END;
      n++;
      s++;
      continue;
    }
    cur->kind = K_CLASS;
    if (*s == '%') {
      if (s + 1 >= end) return refuse(p, why, "malformed pattern (ends with '%')");
      int c = (unsigned char)s[1];
      if (c == 'b') return refuse(p, why, "%b");
      if (isdigit(c)) return refuse(p, why, "back-reference");
      if (c == 'f') {
        if (s + 2 >= end || s[2] != '[') return refuse(p, why, "missing '[' after '%f'");
        const char *ec = set_end(s + 2, end);
        if (!ec) return refuse(p, why, "malformed pattern (missing ']')");
        for (int ch = 0; ch < 256; ch++)
          if (match_bracket(ch, s + 2, ec)) add(cur->set, ch);
        cur->kind = K_FRONT;
        n++;
        s = ec + 1;
        continue;
      }
      for (int ch = 0; ch < 256; ch++)
        if (match_class(ch, c)) add(cur->set, ch);
      next = s + 2;
    } else if (*s == '[') {
      const char *ec = set_end(s, end);
      if (!ec) return refuse(p, why, "malformed pattern (missing ']')");
      for (int ch = 0; ch < 256; ch++)
        if (match_bracket(ch, s, ec)) add(cur->set, ch);
      next = ec + 1;
    } else if (*s == '.') {
      memset(cur->set, 0xff, sizeof cur->set);
      next = s + 1;
    } else {
      add(cur->set, (unsigned char)*s);
      next = s + 1;
    }
    if (next < end && (*next == '?' || *next == '*' || *next == '+' || *next == '-')) cur->q = *next++;
    n++;
    s = next;
  }
  if (depth != 0) return refuse(p, why, "unfinished capture");
  for (size_t i = 0; i < n; i++) it[i].all = it[i].kind == K_CLASS && full(it[i].set);
  for (size_t i = 0; i < n; i++)
    if (it[i].kind == K_CLASS && it[i].q != '1' && !deterministic(it, n, i))
      return refuse(p, why, "a quantified item that needs backtracking");
  if (flags & ASC_LPAT_WORD) it[n++].kind = K_WORD_AFTER;
  p->n = n;
  /* the longest literal at a fixed distance from the start of every match */
  size_t lit = 0, at = 0, best_at = 0, best = 0, run_at = 0;
  p->prefix = malloc(n + 1);
  p->memo = calloc(n + 1, sizeof *p->memo);
  p->memo_epoch = calloc(n + 1, sizeof *p->memo_epoch);
  p->run = calloc(n + 1, sizeof *p->run);
  p->ran = calloc(n + 1, sizeof *p->ran);
  char *cur = malloc(n + 1);
  if (!p->prefix || !p->memo || !p->memo_epoch || !p->run || !p->ran || !cur) {
    free(cur);
    return refuse(p, why, "out of memory");
  }
  for (size_t k = 0; k < n; k++) {
    if (it[k].kind != K_CLASS) {
      if (it[k].kind == K_END || it[k].kind == K_WORD_AFTER) break;
      continue; /* zero width */
    }
    if (it[k].q != '1') break;
    int only = -1, count = 0;
    for (int ch = 0; ch < 256 && count < 2; ch++)
      if (IN(it[k].set, ch)) only = ch, count++;
    if (count == 1) {
      if (lit == 0) run_at = at;
      cur[lit++] = (char)only;
      if (lit > best) {
        best = lit;
        best_at = run_at;
        memcpy(p->prefix, cur, lit);
      }
    } else {
      lit = 0;
    }
    at++;
  }
  free(cur);
  p->prefix_at = best_at;
  p->prefix_len = best;
  return p;
}

void asc_lpat_free(asc_lpat *p) {
  if (!p) return;
  free(p->items);
  free(p->prefix);
  free(p->memo);
  free(p->memo_epoch);
  free(p->run);
  free(p->ran);
  free(p);
}

const char *asc_lpat_literal(const asc_lpat *p, size_t *len) {
  *len = p->prefix_len;
  return p->prefix;
}

static int word(int c) { return isalnum((unsigned char)c) != 0; }

/* One attempt at st: deterministic, so its failure means no match starts at st. */
static int attempt(asc_lpat *p, const char *s, size_t n, size_t st, asc_lpat_match *m) {
  size_t pos = st, nran = 0;
  for (int k = 0; k < ASC_LPAT_CAPS; k++) m->caps[k][0] = m->caps[k][1] = SIZE_MAX;
  for (size_t i = 0; i < p->n; i++) {
    const item *it = &p->items[i];
    switch (it->kind) {
    case K_OPEN:
      if (it->capno <= ASC_LPAT_CAPS) m->caps[it->capno - 1][0] = pos;
      continue;
    case K_CLOSE:
      if (it->capno <= ASC_LPAT_CAPS) m->caps[it->capno - 1][1] = pos;
      continue;
    case K_END:
      if (pos != n) goto fail;
      continue;
    case K_FRONT: {
      int prev = pos == 0 ? 0 : (unsigned char)s[pos - 1], c = pos < n ? (unsigned char)s[pos] : 0;
      if (IN(it->set, prev) || !IN(it->set, c)) goto fail;
      continue;
    }
    case K_WORD_BEFORE:
      if (pos > 0 && word(s[pos - 1])) goto fail;
      continue;
    case K_WORD_AFTER:
      if (pos < n && word(s[pos])) goto fail;
      continue;
    default: break;
    }
    switch (it->q) {
    case '1':
      if (pos < n && IN(it->set, s[pos])) {
        pos++;
        continue;
      }
      goto fail;
    case '?':
      if (pos < n && IN(it->set, s[pos])) pos++;
      continue;
    default: break;
    }
    if (it->lazy0) continue;
    if (p->memo_epoch[i] == p->epoch && p->memo[i].lo <= pos && pos < p->memo[i].hi) goto fail;
    size_t e = pos;
    if (it->all)
      e = n;
    else
      while (e < n && IN(it->set, s[e])) e++;
    if (it->q == '+' && e == pos) goto fail;
    p->run[i].lo = pos;
    p->run[i].hi = e;
    p->ran[nran++] = i;
    pos = e;
  }
  m->start = st;
  m->end = pos;
  if (m->caps[0][1] != SIZE_MAX) {
    m->cap_start = m->caps[0][0];
    m->cap_end = m->caps[0][1];
  } else {
    m->cap_start = st;
    m->cap_end = pos;
  }
  return 1;
fail:
  for (size_t k = 0; k < nran; k++) {
    p->memo[p->ran[k]] = p->run[p->ran[k]];
    p->memo_epoch[p->ran[k]] = p->epoch;
  }
  return 0;
}

#ifdef ASC_AVX2
/* asc_find_literal's and asc_count_byte's loops 32 bytes at a time: up to where they stopped
 * (*done), the same answers */
__attribute__((target("avx2"))) static const char *find_avx2(const char *s, size_t n, const char *lit,
                                                             size_t k, size_t o1, size_t o2, size_t *done) {
  size_t i = 0;
  const __m256i first = _mm256_set1_epi8(lit[o1]), last = _mm256_set1_epi8(lit[o2]);
  for (; i + o2 + 32 <= n; i += 32) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + o1));
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + o2));
    unsigned mask = (unsigned)_mm256_movemask_epi8(
        _mm256_and_si256(_mm256_cmpeq_epi8(a, first), _mm256_cmpeq_epi8(b, last)));
    while (mask) {
      unsigned bit = (unsigned)__builtin_ctz(mask);
      if (memcmp(s + i + bit, lit, k) == 0) return s + i + bit;
      mask &= mask - 1;
    }
  }
  *done = i;
  return NULL;
}

__attribute__((target("avx2"))) static size_t count_avx2(const char *s, size_t n, char c, size_t *done) {
  size_t count = 0, i = 0;
  const __m256i want = _mm256_set1_epi8(c), zero = _mm256_setzero_si256();
  while (i + 32 <= n) {
    __m256i acc = zero;
    for (int k = 0; k < 255 && i + 32 <= n; k++, i += 32)
      acc = _mm256_sub_epi8(
          acc, _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(s + i)), want));
    __m256i sums = _mm256_sad_epu8(acc, zero);
    count += (size_t)_mm256_extract_epi64(sums, 0) + (size_t)_mm256_extract_epi64(sums, 1) +
             (size_t)_mm256_extract_epi64(sums, 2) + (size_t)_mm256_extract_epi64(sums, 3);
  }
  *done = i;
  return count;
}
#endif

const char *asc_find_literal(const char *s, size_t n, const char *lit, size_t k) {
  if (k == 0) return s;
  if (k > n) return NULL;
  if (k == 1) return memchr(s, lit[0], n);
  size_t i = 0;
  /* two bytes of the literal tested first: its second (its first is often the same as every
   * line's, such as the '[' of "[ERROR]") and its last */
  size_t o1 = k > 2 ? 1 : 0, o2 = k - 1;
#ifdef ASC_AVX2
  if (n >= 64 && __builtin_cpu_supports("avx2")) {
    const char *h = find_avx2(s, n, lit, k, o1, o2, &i);
    if (h) return h;
  }
#endif
#ifdef ASC_SSE2
  const __m128i first = _mm_set1_epi8(lit[o1]), last = _mm_set1_epi8(lit[o2]);
  for (; i + o2 + 16 <= n; i += 16) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i + o1));
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + o2));
    unsigned mask =
        (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last)));
    while (mask) {
      unsigned bit = (unsigned)__builtin_ctz(mask);
      if (memcmp(s + i + bit, lit, k) == 0) return s + i + bit;
      mask &= mask - 1;
    }
  }
#endif
  /* the last places (or all, without SSE2) */
  for (; i + k <= n; i++)
    if (s[i + o1] == lit[o1] && s[i + o2] == lit[o2] && memcmp(s + i, lit, k) == 0) return s + i;
  return NULL;
}

size_t asc_count_byte(const char *s, size_t n, char c) {
  size_t count = 0, i = 0;
#ifdef ASC_AVX2
  if (n >= 64 && __builtin_cpu_supports("avx2")) count = count_avx2(s, n, c, &i);
#endif
#ifdef ASC_SSE2
  /* per byte lane, up to 255 matches are summed before the lanes are added up */
  const __m128i want = _mm_set1_epi8(c), zero = _mm_setzero_si128();
  while (i + 16 <= n) {
    __m128i acc = zero;
    for (int k = 0; k < 255 && i + 16 <= n; k++, i += 16)
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + i)), want));
    __m128i sums = _mm_sad_epu8(acc, zero);
    count += (size_t)_mm_cvtsi128_si32(sums) + (size_t)_mm_cvtsi128_si32(_mm_srli_si128(sums, 8));
  }
#endif
  for (; i < n; i++) count += s[i] == c;
  return count;
}

int asc_lpat_find(asc_lpat *p, const char *s, size_t n, size_t init, asc_lpat_match *m) {
  if (init > n) return 0;
  if (++p->epoch == 0) { /* wrapped: forget every memo */
    memset(p->memo_epoch, 0, p->n * sizeof *p->memo_epoch);
    p->epoch = 1;
  }
  if (p->anchor) return attempt(p, s, n, init, m);
  for (size_t st = init; st <= n; st++) {
    if (p->prefix_len) {
      /* the next place the literal can be, and the start that puts it there */
      size_t from = st + p->prefix_at;
      if (from > n) return 0;
      const char *h = asc_find_literal(s + from, n - from, p->prefix, p->prefix_len);
      if (!h) return 0;
      st = (size_t)(h - s) - p->prefix_at;
    }
    if (attempt(p, s, n, st, m)) return 1;
  }
  return 0;
}
