/* The top frame of a call stack (see ascope/stacktop.h). */
#include "ascope/stacktop.h"

#include <string.h>

static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* offset of the first `sep` (";\r\n" or ";\n", seplen bytes) in s[0, n), or n */
static size_t find_sep(const char *s, size_t n, const char *sep, size_t seplen) {
  size_t i = 0;
  while (i + seplen <= n) {
    const char *p = memchr(s + i, ';', n - i - seplen + 1);
    if (!p) break;
    i = (size_t)(p - s);
    if (memcmp(p, sep, seplen) == 0) return i;
    i++;
  }
  return n;
}

void asc_stack_top(const char *s, size_t n, size_t *at, size_t *len) {
  size_t end = find_sep(s, n, ";\r\n", 3);
  if (end == n) end = find_sep(s, n, ";\n", 2);
  size_t start = 0;
  while (start < end && is_space(s[start])) start++;
  while (end > start && is_space(s[end - 1])) end--;
  *at = start;
  *len = end - start;
}
