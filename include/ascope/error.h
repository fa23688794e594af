/* Errors that carry their place: file, byte offset, line, column and a message. */
#ifndef ASCOPE_ERROR_H
#define ASCOPE_ERROR_H

#include <stddef.h>

typedef struct asc_error {
  char file[512];
  long long offset; /* byte offset, -1 when unknown */
  long line;        /* 1-based, 0 when unknown */
  long column;      /* 1-based, 0 when unknown */
  char msg[768];
} asc_error;

/* Fill err (which may be NULL) and return -1, so callers can write `return asc_fail(...)`. */
int asc_fail(asc_error *err, const char *file, long long offset, long line, long column, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* "file:line:column (byte N): msg", leaving out the parts that are unknown. */
void asc_error_format(const asc_error *err, char *out, size_t outsz);

#endif
