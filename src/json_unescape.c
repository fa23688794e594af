/* Decoding of JSON string content (see ascope/json_unescape.h). */
#include "ascope/json_unescape.h"

#include "ascope/simd.h"

#include <string.h>

static int hexval(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000)
    return o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
           o[2] = (char)(0x80 | (cp & 0x3F)), 3;
  return o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
         o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F)), 4;
}

static unsigned hex4(const char *s) {
  int a = hexval(s[0]), b = hexval(s[1]), c = hexval(s[2]), d = hexval(s[3]);
  if (a < 0 || b < 0 || c < 0 || d < 0) return 0xFFFD;
  return (unsigned)(a << 12 | b << 8 | c << 4 | d);
}

/* What a backslash and c decode to, for any c but 'u': shared by both functions below */
static char one_byte(char c) {
  switch (c) {
  case 'n': return '\n';
  case 'r': return '\r';
  case 't': return '\t';
  case 'b': return '\b';
  case 'f': return '\f';
  default: return c; /* \" \\ \/ */
  }
}

/* The escape at s[*i] (a backslash) of JSON string content s[0, n) decoded into o (at most four
 * bytes, never more than the escape's own length), *i moved past it. The one decoder of both
 * functions below, so a string compared escaped is the string decoded. */
static size_t unescape_one(const char *s, size_t n, size_t *ip, char *o) {
  size_t i = *ip;
  if (i + 1 >= n) return *ip = i + 1, o[0] = '\\', 1;
  char c = s[++i];
  size_t k = 1;
  switch (c) {
  case 'u': {
    if (i + 4 >= n) return *ip = n, o[0] = '?', 1;
    unsigned cp = hex4(s + i + 1);
    i += 4;
    if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < n && s[i + 1] == '\\' && s[i + 2] == 'u') {
      unsigned lo = hex4(s + i + 3);
      if (lo >= 0xDC00 && lo < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        i += 6;
      }
    }
    k = put_utf8(o, cp);
    break;
  }
  default: o[0] = one_byte(c);
  }
  *ip = i + 1;
  return k;
}

size_t asc_json_unescape(const char *s, size_t n, char *o) {
  size_t i = 0, k = 0;
  while (i < n) {
    const char *b = memchr(s + i, '\\', n - i);
    size_t run = b ? (size_t)(b - (s + i)) : n - i;
    memcpy(o + k, s + i, run);
    i += run;
    k += run;
    if (b) k += unescape_one(s, n, &i, o + k);
  }
  return k;
}

/* The length of the common prefix of s and d, at most m bytes, that holds no backslash of s:
 * the plain compare stops at a difference or at an escape. Sixteen bytes a step, as a repeated
 * call stack is compared whole each time it is met. */
static size_t plain_prefix(const char *s, const char *d, size_t m) {
  size_t j = 0;
#if ASC_SSE2
  const __m128i bs = _mm_set1_epi8('\\');
  for (; j + 16 <= m; j += 16) {
    __m128i a = _mm_loadu_si128((const __m128i *)(s + j));
    __m128i b = _mm_loadu_si128((const __m128i *)(d + j));
    unsigned same =
        (unsigned)_mm_movemask_epi8(_mm_andnot_si128(_mm_cmpeq_epi8(a, bs), _mm_cmpeq_epi8(a, b)));
    if (same != 0xFFFF) return j + (size_t)__builtin_ctz(~same);
  }
#endif
  while (j < m && s[j] == d[j] && s[j] != '\\') j++;
  return j;
}

int asc_json_escaped_equal(const char *s, size_t n, const char *d, size_t dn) {
  size_t i = 0, k = 0;
  for (;;) {
    size_t j = plain_prefix(s + i, d + k, n - i < dn - k ? n - i : dn - k);
    i += j;
    k += j;
    if (i == n) return k == dn;
    if (s[i] != '\\') return 0;         /* a difference, or d ended first */
    if (i + 1 < n && s[i + 1] != 'u') { /* a one-byte escape, the common kind, decided here */
      if (k == dn || d[k] != one_byte(s[i + 1])) return 0;
      i += 2;
      k++;
      continue;
    }
    char o[4];
    size_t m = unescape_one(s, n, &i, o);
    if (m > dn - k || memcmp(o, d + k, m) != 0) return 0;
    k += m;
  }
}
