/* Classifying the lines of levelled text logs in one pass: a literal prefilter over whole
 * buffers, a header pattern giving each line's level, module, time and message, then rules
 * (patterns on the message, module lists) and fields (the first capture of the first of a
 * field's patterns that matches, on the whole line). Patterns are Lua patterns matched by
 * asc_lpat in linear time; one the linear matcher refuses is matched through the `slow`
 * callback (the Lua binding gives it to Lua's own matcher). Memory is bounded: a line is looked
 * at through its first ASC_LOGCLASS_LINE_MAX bytes, whatever its length. */
#ifndef ASCOPE_LOGCLASS_H
#define ASCOPE_LOGCLASS_H

#include <stddef.h>
#include <stdint.h>

#include "ascope/error.h"

#define ASC_LOGCLASS_LINE_MAX 65536
#define ASC_LOGCLASS_BLOCK_MIN (2 * ASC_LOGCLASS_LINE_MAX) /* the least asc_logclass_set_block takes */
#define ASC_LOGCLASS_BLOCK_MAX (4u << 20)                  /* and the most, the default */

enum { ASC_LC_ANY = 0, ASC_LC_WORD = 1, ASC_LC_SEQUENCE = 2 };

typedef struct asc_logclass_rule {
  int mode;      /* ANY: one of the patterns; WORD: one of them as a whole word; SEQUENCE: all in order */
  int any_level; /* else only lines of the error level */
  const char *const *patterns;
  size_t npatterns;
  const char *const *modules; /* a parsed line of one of these modules matches */
  size_t nmodules;
} asc_logclass_rule;

typedef struct asc_logclass_field {
  const char *const *patterns;
  size_t npatterns;
} asc_logclass_field;

typedef struct asc_logclass_spec {
  const char *const *literals; /* a line holding none of these is not looked at */
  size_t nliterals;
  const char *header; /* anchored pattern whose captures give level, module, time, rest */
  int cap_level, cap_module, cap_time, cap_rest; /* capture numbers, 1-based */
  const char *const
      *strips; /* applied in turn to the rest: when one matches, its last capture becomes the message */
  size_t nstrips;
  const char *error_level;  /* the level whose lines the rules look at (and any_level rules at all) */
  const char *error_prefix; /* a line the header does not parse is of the error level when it starts so */
  const asc_logclass_rule *rules;
  size_t nrules;
  const asc_logclass_field *fields;
  size_t nfields;
} asc_logclass_spec;

typedef struct asc_logclass_span {
  const char *p; /* NULL: none */
  size_t n;
} asc_logclass_span;

typedef struct asc_logclass_line {
  long long number; /* from 1 */
  const char *text; /* without its end of line */
  size_t len;       /* at most ASC_LOGCLASS_LINE_MAX */
  int cut;          /* the line was longer */
  int is_error;     /* of the error level */
  asc_logclass_span time;
  const uint32_t *matched; /* rule indexes, in rule order */
  size_t nmatched;
  const asc_logclass_span *fields; /* nfields values */
} asc_logclass_line;

/* A match of a pattern the linear matcher refuses: the callback sets start, end (end
 * exclusive) and cap (the first capture, or the whole match); cap must stay valid until the
 * next call. Returns 1 on a match, 0 for none, -1 to stop the scan (with a message in *err). */
typedef struct asc_logclass_hit {
  size_t start, end;
  const char *cap;
  size_t cap_len;
} asc_logclass_hit;
typedef int (*asc_logclass_slow_fn)(void *ud, size_t pattern, const char *s, size_t n, size_t init,
                                    asc_logclass_hit *hit, asc_error *err);

typedef struct asc_logclass asc_logclass;

/* Compile a spec (its strings are copied). Patterns outside the linear subset are numbered in
 * the order rules then fields, patterns in order (asc_logclass_pattern gives a pattern's number
 * and whether it is slow). The header and strips must be in the subset. */
int asc_logclass_new(const asc_logclass_spec *spec, asc_logclass **out, asc_error *err);
void asc_logclass_free(asc_logclass *lc);
/* The number of patterns matched through the slow callback, and the text of pattern k (all
 * patterns numbered rules then fields); *slow tells whether it is one of them. */
size_t asc_logclass_slow_count(const asc_logclass *lc);
const char *asc_logclass_pattern(const asc_logclass *lc, size_t k, int *slow);
void asc_logclass_set_slow(asc_logclass *lc, asc_logclass_slow_fn fn, void *ud);

/* A copy of lc, with its own scratch state, for another thread. */
int asc_logclass_clone(const asc_logclass *lc, asc_logclass **out, asc_error *err);
/* Scans with up to `threads` threads (default 1, at most 4) classifying blocks of the file while
 * the calling thread reads it and calls fn, in the file's order: fn sees the same lines, in the
 * same order, as with one thread. A classifier with slow patterns scans on the calling thread
 * alone (the slow callback is the caller's). */
void asc_logclass_set_threads(asc_logclass *lc, int threads);
/* The bytes read at a time (default 4 MiB, the most; at least ASC_LOGCLASS_BLOCK_MIN). A line
 * longer than a block is looked at through its head only, literals and all. */
void asc_logclass_set_block(asc_logclass *lc, size_t bytes);

/* Stream a file: fn for every line that a rule matches or that is of the error level. fn
 * returns non-zero to stop. fn is called on the calling thread. NUL bytes are no text: they are
 * dropped as the file is read (a log cut by a crash and written on is padded with them, and the
 * line after the padding begins with them), and counted (asc_logclass_nul_bytes). A file that
 * begins as gzip does (1F 8B) or with a UTF-16 byte order mark is an error. */
int asc_logclass_scan(asc_logclass *lc, const char *path, int (*fn)(void *ud, const asc_logclass_line *line),
                      void *ud, asc_error *err);
/* The NUL bytes the last scan dropped. */
unsigned long long asc_logclass_nul_bytes(const asc_logclass *lc);

#endif
