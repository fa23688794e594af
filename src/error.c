/* Place-carrying errors shared by every primitive. */
#include "ascope/error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void place(asc_error *err, const char *file, long long offset, long line, long column) {
  snprintf(err->file, sizeof err->file, "%s", file ? file : "");
  err->offset = offset;
  err->line = line;
  err->column = column;
}

/* Append one argument's text to err->args (cut to the room left, always NUL-terminated). */
static void add_arg(asc_error *err, size_t *used, const char *text) {
  if (err->nargs >= ASC_ERROR_MAX_ARGS || *used >= sizeof err->args) return;
  size_t room = sizeof err->args - *used;
  int w = snprintf(err->args + *used, room, "%s", text);
  *used += (w < 0 ? 0 : (size_t)w < room ? (size_t)w : room - 1) + 1;
  err->nargs++;
}

/* Walk fmt's conversions and format each argument alone with its own conversion (flags,
 * width, precision and length kept), so the arguments can be put into a translated template.
 * The conversions are those of printf; %n is not accepted by the format attribute's checks. */
static void record_args(asc_error *err, const char *fmt, va_list ap) {
  size_t used = 0;
  err->nargs = 0;
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') continue;
    if (p[1] == '%') {
      p++;
      continue;
    }
    char spec[24];
    size_t k = 0;
    spec[k++] = *p++;
    int star_w = 0, star_p = 0;
    while (*p && strchr("-+ #0", *p) && k < 8) spec[k++] = *p++;
    if (*p == '*') star_w = 1, spec[k++] = *p++;
    while (*p >= '0' && *p <= '9' && k < 14) spec[k++] = *p++;
    if (*p == '.') {
      spec[k++] = *p++;
      if (*p == '*') star_p = 1, spec[k++] = *p++;
      while (*p >= '0' && *p <= '9' && k < 18) spec[k++] = *p++;
    }
    int longs = 0, size = 0; /* h and hh need nothing: char and short arrive as int */
    while (*p && strchr("hlLzjt", *p) && k < 21) {
      if (*p == 'l') longs++;
      if (*p == 'z' || *p == 'j' || *p == 't' || *p == 'L') size = *p;
      spec[k++] = *p++;
    }
    if (!*p) return;
    char conv = *p;
    spec[k++] = conv;
    spec[k] = '\0';
    int w = star_w ? va_arg(ap, int) : 0, pr = star_p ? va_arg(ap, int) : 0;
    char out[sizeof err->args];
#define ONE(v)                                                                                               \
  (star_w && star_p ? snprintf(out, sizeof out, spec, w, pr, v)                                              \
   : star_w         ? snprintf(out, sizeof out, spec, w, v)                                                  \
   : star_p         ? snprintf(out, sizeof out, spec, pr, v)                                                 \
                    : snprintf(out, sizeof out, spec, v))
    switch (conv) {
    case 'd':
    case 'i':
      if (size == 'z' || size == 't')
        ONE(va_arg(ap, ptrdiff_t));
      else if (size == 'j')
        ONE(va_arg(ap, intmax_t));
      else if (longs >= 2)
        ONE(va_arg(ap, long long));
      else if (longs == 1)
        ONE(va_arg(ap, long));
      else
        ONE(va_arg(ap, int));
      break;
    case 'u':
    case 'x':
    case 'X':
    case 'o':
      if (size == 'z')
        ONE(va_arg(ap, size_t));
      else if (size == 'j')
        ONE(va_arg(ap, uintmax_t));
      else if (size == 't')
        ONE(va_arg(ap, ptrdiff_t));
      else if (longs >= 2)
        ONE(va_arg(ap, unsigned long long));
      else if (longs == 1)
        ONE(va_arg(ap, unsigned long));
      else
        ONE(va_arg(ap, unsigned));
      break;
    case 'c': ONE(va_arg(ap, int)); break;
    case 's': ONE(va_arg(ap, const char *)); break;
    case 'p': ONE(va_arg(ap, void *)); break;
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
      if (size == 'L')
        ONE(va_arg(ap, long double));
      else
        ONE(va_arg(ap, double));
      break;
    default: return; /* not a conversion this walk knows: keep what was recorded */
    }
#undef ONE
    add_arg(err, &used, out);
  }
}

int asc_fail(asc_error *err, const char *file, long long offset, long line, long column, const char *fmt,
             ...) {
  if (!err) return -1;
  place(err, file, offset, line, column);
  err->fmt = fmt;
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  record_args(err, fmt, aq);
  va_end(aq);
  va_end(ap);
  return -1;
}

int asc_fail_text(asc_error *err, const char *file, long long offset, long line, long column,
                  const char *text) {
  if (!err) return -1;
  place(err, file, offset, line, column);
  snprintf(err->msg, sizeof err->msg, "%s", text);
  err->fmt = text;
  err->nargs = 0;
  return -1;
}

const char *asc_error_arg(const asc_error *err, int i) {
  if (i < 0 || i >= err->nargs) return "";
  const char *p = err->args;
  while (i-- > 0) p += strlen(p) + 1;
  return p;
}

void asc_error_format(const asc_error *err, char *out, size_t outsz) {
  size_t k = 0;
  if (outsz == 0) return;
  out[0] = '\0';
#define PUT(...)                                                                                             \
  do {                                                                                                       \
    int w_ = snprintf(out + k, outsz - k, __VA_ARGS__);                                                      \
    if (w_ > 0) k += (size_t)w_ < outsz - k ? (size_t)w_ : outsz - k - 1;                                    \
  } while (0)
  if (err->file[0]) PUT("%s", err->file);
  if (err->line > 0) PUT(":%ld", err->line);
  if (err->line > 0 && err->column > 0) PUT(":%ld", err->column);
  if (err->offset >= 0) PUT("%s(byte %lld)", k ? " " : "", err->offset);
  PUT("%s%s", k ? ": " : "", err->msg);
#undef PUT
}
