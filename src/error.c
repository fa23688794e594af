/* Place-carrying errors shared by every primitive. */
#include "ascope/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int asc_fail(asc_error *err, const char *file, long long offset, long line, long column, const char *fmt,
             ...) {
  if (!err) return -1;
  snprintf(err->file, sizeof err->file, "%s", file ? file : "");
  err->offset = offset;
  err->line = line;
  err->column = column;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return -1;
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
