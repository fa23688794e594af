/* Text re-encoding through iconv(3): the MoE CSVs go to GBK for the field engineers' older
 * consumers, converted in memory, never through a shell. */
#ifndef ASCOPE_ICONV_H
#define ASCOPE_ICONV_H

#include <stddef.h>

#include "ascope/error.h"

/* Convert n bytes of text from encoding `from` to encoding `to` (iconv names: "UTF-8", "GBK").
 * On success *out is a malloc'ed buffer of *outn bytes (NUL-terminated, the NUL not counted)
 * that the caller frees, and 0 is returned. A byte sequence that is not valid `from` text or has
 * no `to` form fails with its byte offset in err (file = name, which may be NULL); an unknown
 * encoding or no memory fails too. Returns -1 then, *out is NULL. */
int asc_iconv(const char *name, const char *from, const char *to, const char *in, size_t n, char **out,
              size_t *outn, asc_error *err);

#endif
