/* Text re-encoding through iconv(3) into one growing buffer. */
#include "ascope/iconv.h"

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Double buf's capacity; -1 when the size would overflow or memory runs out. */
static int grow(char **buf, size_t *cap) {
  if (*cap > SIZE_MAX / 2) return -1;
  char *p = realloc(*buf, *cap * 2);
  if (!p) return -1;
  *buf = p;
  *cap *= 2;
  return 0;
}

int asc_iconv(const char *name, const char *from, const char *to, const char *in, size_t n, char **out,
              size_t *outn, asc_error *err) {
  *out = NULL;
  *outn = 0;
  const char *file = name ? name : "";
  iconv_t cd = iconv_open(to, from);
  if (cd == (iconv_t)-1)
    return asc_fail(err, file, -1, 0, 0, "cannot convert from %s to %s: %s", from, to, strerror(errno));
  /* most text keeps or shrinks its size (UTF-8 Chinese: 3 bytes -> GBK 2), +16 for the NUL */
  size_t cap = n < SIZE_MAX / 2 ? n + 16 : n, used = 0;
  char *buf = malloc(cap);
  if (!buf) {
    iconv_close(cd);
    return asc_fail(err, file, -1, 0, 0, "out of memory converting %zu bytes", n);
  }
  char *src = (char *)in; /* iconv's prototype is not const-correct; it never writes the input */
  size_t left = n;
  int flushed = 0;
  while (!flushed) {
    char *dst = buf + used;
    size_t room0 = cap - used - 1, room = room0; /* one byte kept for the NUL */
    /* the input first, then (input == NULL) the shift state back to its initial one */
    size_t r = left > 0 ? iconv(cd, &src, &left, &dst, &room) : iconv(cd, NULL, NULL, &dst, &room);
    int e = errno;
    used += room0 - room;
    if (r != (size_t)-1) {
      flushed = left == 0;
      continue;
    }
    if (e == E2BIG && grow(&buf, &cap) == 0) continue;
    long long at = (long long)(src - in);
    free(buf);
    iconv_close(cd);
    if (e == E2BIG) return asc_fail(err, file, -1, 0, 0, "out of memory converting %zu bytes", n);
    if (e == EILSEQ)
      return asc_fail(err, file, at, 0, 0, "a character with no %s form (or not valid %s)", to, from);
    if (e == EINVAL) return asc_fail(err, file, at, 0, 0, "the text ends inside a %s character", from);
    return asc_fail(err, file, at, 0, 0, "cannot convert to %s: %s", to, strerror(e));
  }
  iconv_close(cd);
  buf[used] = '\0';
  *out = buf;
  *outn = used;
  return 0;
}
