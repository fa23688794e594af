/* POSIX extended regular expressions (regcomp/regexec) behind a small handle: compile once,
 * test many strings. Used for the lane and name patterns of the timeline rules and options. */
#ifndef ASCOPE_REGEX_H
#define ASCOPE_REGEX_H

#include <stddef.h>

#include "ascope/error.h"

#define ASC_REGEX_ICASE 1
/* Longest pattern accepted: patterns come from rule files and the command line, never data. */
#define ASC_REGEX_MAX_PATTERN 4096

typedef struct asc_regex asc_regex;

/* Compile pattern (len bytes, no NUL inside) with flags (ASC_REGEX_ICASE). Returns 0 and sets
 * *out, or -1 with err->msg holding regerror's text. */
int asc_regex_compile(asc_regex **out, const char *pattern, size_t len, int flags, asc_error *err);
/* 1 when the pattern matches somewhere in text[0, len), 0 when not, -1 when regexec fails or
 * len exceeds INT_MAX. */
int asc_regex_search(const asc_regex *re, const char *text, size_t len);
void asc_regex_free(asc_regex *re);

#endif
