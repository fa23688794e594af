/* Errors that carry their place: file, byte offset, line, column and a message.
 *
 * The message is kept twice: formatted in English (msg, for C callers and logs), and as its
 * template and arguments (fmt, args), so a front end can say it in another language. The
 * template is the string literal given to asc_fail: it names the message, and the catalogues of
 * the Lua side hold its translations under that name. */
#ifndef ASCOPE_ERROR_H
#define ASCOPE_ERROR_H

#include <stddef.h>

#define ASC_ERROR_MAX_ARGS 6

typedef struct asc_error {
  char file[512];
  long long offset; /* byte offset, -1 when unknown */
  long line;        /* 1-based, 0 when unknown */
  long column;      /* 1-based, 0 when unknown */
  char msg[768];
  const char *fmt; /* the template (a string literal), NULL when none was recorded */
  int nargs;       /* the arguments, each formatted alone, one after the other in args */
  char args[1024];
} asc_error;

/* Fill err (which may be NULL) and return -1, so callers can write `return asc_fail(...)`.
 * fmt must be a string literal (it is kept, not copied). */
int asc_fail(asc_error *err, const char *file, long long offset, long line, long column, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* asc_fail for a message chosen at run time among literals without conversions (a scanner's
 * "expected ':'"): text is kept as the template. */
int asc_fail_text(asc_error *err, const char *file, long long offset, long line, long column,
                  const char *text);

/* The i-th argument (0-based) as formatted by asc_fail, "" past the last. */
const char *asc_error_arg(const asc_error *err, int i);

/* "file:line:column (byte N): msg", leaving out the parts that are unknown. */
void asc_error_format(const asc_error *err, char *out, size_t outsz);

#endif
