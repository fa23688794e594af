/* POSIX extended regular expressions: a thin, checked wrapper over regcomp/regexec. */
#include "ascope/regex.h"

#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

struct asc_regex {
  regex_t re;
};

int asc_regex_compile(asc_regex **out, const char *pattern, size_t len, int flags, asc_error *err) {
  *out = NULL;
  if (len > ASC_REGEX_MAX_PATTERN)
    return asc_fail(err, "", -1, 0, 0, "pattern longer than %d bytes", ASC_REGEX_MAX_PATTERN);
  if (memchr(pattern, '\0', len)) return asc_fail(err, "", -1, 0, 0, "pattern holds a NUL byte");
  /* regcomp wants a NUL-terminated string; the caller's may not be one */
  char *copy = malloc(len + 1);
  asc_regex *r = malloc(sizeof *r);
  if (!copy || !r) {
    free(copy);
    free(r);
    return asc_fail(err, "", -1, 0, 0, "out of memory");
  }
  memcpy(copy, pattern, len);
  copy[len] = '\0';
  int rc = regcomp(&r->re, copy, REG_EXTENDED | REG_NOSUB | ((flags & ASC_REGEX_ICASE) ? REG_ICASE : 0));
  free(copy);
  if (rc != 0) {
    char msg[256];
    regerror(rc, &r->re, msg, sizeof msg);
    free(r);
    return asc_fail(err, "", -1, 0, 0, "%s", msg);
  }
  *out = r;
  return 0;
}

int asc_regex_search(const asc_regex *re, const char *text, size_t len) {
  /* REG_STARTEND bounds the match by len, so texts with NUL bytes or without a terminator
   * are searched whole and never read past their end */
  if (len > INT_MAX) return -1; /* regoff_t is an int: longer texts cannot be bounded */
  regmatch_t m[1] = {{0, (regoff_t)len}};
  int rc = regexec(&re->re, text, 1, m, REG_STARTEND);
  if (rc == 0) return 1;
  return rc == REG_NOMATCH ? 0 : -1;
}

void asc_regex_free(asc_regex *re) {
  if (!re) return;
  regfree(&re->re);
  free(re);
}
