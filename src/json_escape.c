/* Escaping of JSON string content, with invalid UTF-8 replaced (see json_escape.h). */
#include "ascope/json_escape.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

size_t asc_utf8_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0)
      lo = 0xA0; /* no overlong forms */
    else if (c == 0xED)
      hi = 0x9F; /* no surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0)
      lo = 0x90;
    else if (c == 0xF4)
      hi = 0x8F; /* nothing above U+10FFFF */
  } else
    return 0;
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

int asc_json_plain(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = u[i];
    if (c < 0x20 || c == '"' || c == '\\') return 0;
    if (c >= 0x80) {
      size_t k = asc_utf8_len(u + i, n - i);
      if (!k) return 0;
      i += k - 1;
    }
  }
  return 1;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* non-zero when some byte of w is < 0x20, >= 0x80, '"' or '\\' (a word of plain bytes gives 0:
 * the tests for a zero byte only err towards looking, never the other way) */
static uint64_t needs_look(uint64_t w) {
  uint64_t ctl = (w - ONES * 0x20) & ~w;
  uint64_t quote = w ^ (ONES * '"'), slash = w ^ (ONES * '\\');
  return (ctl | ((quote - ONES) & ~quote) | ((slash - ONES) & ~slash) | w) & HIGHS;
}

void asc_json_escape(const char *s, size_t n, void (*put)(void *ud, const char *p, size_t len), void *ud) {
  const unsigned char *u = (const unsigned char *)s;
  size_t run = 0; /* bytes before i that go out as they are */
  for (size_t i = 0; i < n;) {
    /* the common case first: a run of printable ASCII that needs no escape, eight bytes a step
     * while no byte of the word is a control, a quote, a backslash or >= 0x80 */
    size_t at = i;
    while (i + 8 <= n) {
      uint64_t w;
      memcpy(&w, u + i, 8);
      if (needs_look(w)) break;
      i += 8;
    }
    while (i < n && u[i] >= 0x20 && u[i] < 0x80 && u[i] != '"' && u[i] != '\\') i++;
    run += i - at;
    if (i == n) break;
    unsigned char c = u[i];
    size_t k = c >= 0x80 ? asc_utf8_len(u + i, n - i) : 1;
    if (k && c >= 0x20 && c != '"' && c != '\\') {
      run += k;
      i += k;
      continue;
    }
    if (run) put(ud, s + i - run, run);
    run = 0;
    char esc[8];
    switch (k ? c : 0x100) {
    case '"': put(ud, "\\\"", 2); break;
    case '\\': put(ud, "\\\\", 2); break;
    case '\n': put(ud, "\\n", 2); break;
    case '\r': put(ud, "\\r", 2); break;
    case '\t': put(ud, "\\t", 2); break;
    case 0x100: put(ud, "\\ufffd", 6); break; /* a byte that is not UTF-8 */
    default: put(ud, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", c));
    }
    i++;
  }
  if (run) put(ud, s + n - run, run);
}
