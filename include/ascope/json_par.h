/* Both cores on one trace: the event array is cut into byte ranges at event boundaries, the
 * ranges are scanned by threads, and the columns are joined in order. The result is the
 * single-threaded scan's, value for value and string id for string id.
 *
 * A range's start is a guess (the first "}, {" after an even share of the file) that may land
 * inside a string or a nested array. It is proved right or wrong by the range before it: that
 * range reads from a start already proved, so the event boundaries it meets are the true ones;
 * it stops at the first one at or after the next start, and only an exact match hands over.
 * A start it passes is false: that range is dropped and the reader goes on to the one after.
 * Any error in a range that counts (a bad or truncated file) makes the whole file be scanned
 * again on one thread, so messages, places and partial rows are the single-threaded ones. */
#ifndef ASCOPE_JSON_PAR_H
#define ASCOPE_JSON_PAR_H

#include <stdatomic.h>

#include "ascope/json.h"

/* One range's reader, as the splitter hands it to the scanner. */
typedef struct asc_json_range {
  long long from;         /* 0: the top of the file; otherwise an event's '{' in the event array */
  int in_object;          /* the array is the value of "traceEvents" (from > 0) */
  const long long *next;  /* starts of the ranges after this one, ascending; next[k] is range k's */
  size_t nnext;           /* ranges in all (next[0] and the starts at or below this one unused) */
  size_t index;           /* this range's number */
  size_t ends_at;         /* in: the range this one hands over to; out: the one it did hand over
                           * to, nnext when it read to the end of the file */
  atomic_int *dropped;    /* dropped[k]: a proved reader passed range k's start: its reader stops */
  atomic_int *proved;     /* proved[k]: range k's start is a true event boundary (range 0's is) */
  atomic_int *stop;       /* set by the caller's progress callback: every reader stops */
  atomic_llong *done;     /* bytes this reader has read, for the progress callback */
  int report;             /* this reader calls the progress callback (the caller's thread) */
  atomic_llong *done_all; /* every reader's bytes, summed when reporting (nnext counters) */
  asc_strtab *strings;    /* where this reader interns */
} asc_json_range;

/* Scan one range into res (as asc_json_scan does the whole file). 0 on success; -1 with err
 * filled on a parse error, a read error, lack of memory or a stop. */
int asc_json_scan_range(const char *path, const asc_json_spec *spec, asc_json_range *rg, asc_json_result *res,
                        asc_error *err);

/* The parallel scan of asc_json_scan (spec->threads > 1 or spec->split_at given). Returns 0 or
 * -1 as asc_json_scan does, or 1 when the file is to be scanned on one thread instead (too
 * small to share, not a trace the splitter recognises, or an error to be reported as the
 * single-threaded scan reports it). */
int asc_json_scan_parallel(const char *path, const asc_json_spec *spec, asc_json_result *res, asc_error *err);

#endif
