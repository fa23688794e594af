/* Lua patterns matched in linear time: the subset whose matches need no backtracking.
 *
 * A pattern is compiled once; asc_lpat_find gives what string.find(s, p, init) gives (the
 * leftmost match, each quantifier taking what Lua's backtracking matcher would) and the span of
 * the first capture. The subset: literal characters, `.`, `%a %c %d %g %l %p %s %u %w %x` and
 * their complements, sets `[...]`, `^` and `$` anchors, `%f[set]`, captures, and the quantifiers
 * `? * + -` on a single character class when no later item can take a character the quantified
 * class takes (for example `id[=:]%s*(%d+)`, `%[([^%]]+)%]`) or when the rest is `.*`. Under that
 * rule a quantified run has one possible extent, and a run that once led to a failure is never
 * scanned again, so a search costs O(length x items) whatever the subject.
 * Compilation refuses (NULL and a reason) %b, back-references, position captures and quantified
 * items that would need backtracking: the caller matches those with Lua itself. */
#ifndef ASCOPE_LPAT_H
#define ASCOPE_LPAT_H

#include <stddef.h>

typedef struct asc_lpat asc_lpat;

/* The match must not touch a letter or digit on either side (a code such as EZ9999 standing
 * alone: not inside PAGE_SIZE): the next match is searched when one touches. */
#define ASC_LPAT_WORD 1

#define ASC_LPAT_CAPS 8 /* captures whose spans are given; later ones are matched but not given */

typedef struct asc_lpat_match {
  size_t start, end;         /* the match, end exclusive */
  size_t cap_start, cap_end; /* the first capture (the whole match when there is none) */
  /* capture k (1-based) is [caps[k-1][0], caps[k-1][1]); SIZE_MAX when the pattern has no such capture */
  size_t caps[ASC_LPAT_CAPS][2];
} asc_lpat_match;

/* NULL with *why set (a static text) when the pattern is outside the subset, malformed, or
 * memory runs out. */
asc_lpat *asc_lpat_compile(const char *p, size_t n, int flags, const char **why);
void asc_lpat_free(asc_lpat *p);
/* 1 and *m on a match starting at or after init, else 0. A compiled pattern keeps scratch
 * state: one thread at a time. */
int asc_lpat_find(asc_lpat *p, const char *s, size_t n, size_t init, asc_lpat_match *m);
/* The longest literal text every match holds (at a fixed distance from its start), for a quick
 * test that rules a subject out; *len 0 when there is none. */
const char *asc_lpat_literal(const asc_lpat *p, size_t *len);

/* memmem, faster on the short literals of log rules (SSE2 where there is SSE2). */
const char *asc_find_literal(const char *s, size_t n, const char *lit, size_t k);
/* The number of bytes c in s[0, n). */
size_t asc_count_byte(const char *s, size_t n, char c);

#endif
