/* Escaping of JSON string content, with invalid UTF-8 replaced (see json_escape.h). */
#include "ascope/json_escape.h"

#include <stdio.h>

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

void asc_json_escape(const char *s, size_t n, void (*put)(void *ud, const char *p, size_t len), void *ud) {
  const unsigned char *u = (const unsigned char *)s;
  size_t run = 0; /* bytes before i that go out as they are */
  for (size_t i = 0; i < n;) {
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
