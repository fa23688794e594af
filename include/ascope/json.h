/* Streaming scan of a JSON array of events (a bare array or {"traceEvents": [...]}) in fixed
 * memory: predicates are evaluated in C, wanted fields are projected into typed columns, and
 * "ph":"M" metadata records (process and thread names) are captured in the same pass. */
#ifndef ASCOPE_JSON_H
#define ASCOPE_JSON_H

#include "ascope/column.h"
#include "ascope/error.h"
#include "ascope/strtab.h"

typedef enum {
  ASC_JT_STRING, /* strings as they are, numbers and booleans as their text */
  ASC_JT_INT,    /* whole numbers, from numbers or numeric strings */
  ASC_JT_NUM,    /* doubles */
  ASC_JT_US      /* decimal microseconds -> exact int64 nanoseconds */
} asc_jtype;

typedef enum { ASC_PRED_EQ, ASC_PRED_IN, ASC_PRED_EXISTS, ASC_PRED_ABSENT } asc_pred_op;

typedef struct asc_jfield {
  const char *name; /* a top-level key, or a key inside "args" when in_args */
  int in_args;
  asc_jtype type;
} asc_jfield;

typedef struct asc_jpred {
  const char *name;
  int in_args;
  asc_pred_op op;
  const char *const *values; /* EQ: one value, IN: nvalues; compared with the value's text */
  size_t nvalues;
} asc_jpred;

typedef struct asc_json_spec {
  const asc_jfield *fields;
  size_t nfields;
  const asc_jpred *preds; /* all must hold */
  size_t npreds;
  int want_meta;
  int partial;  /* on a parse error keep what was read (the error is still reported) */
  size_t chunk; /* read size, default 1 MiB */
  asc_strtab *strings;
  /* Called about every 64 MiB; returning non-zero stops the scan with an error. */
  int (*progress)(void *ud, long long done, long long total);
  void *progress_ud;
  /* Threads for one file (see json_par.h): 0 or 1 scan on the calling thread alone. Files
   * smaller than min_range bytes a thread (default 8 MiB) are not shared. */
  int threads;
  long long min_range;
  /* Tests: the starts of the ranges after the first, used as they are (no search for an event
   * boundary), with one thread each; a start that is not a true boundary must be caught. */
  const long long *split_at;
  size_t nsplit_at;
} asc_json_spec;

typedef struct asc_json_result {
  asc_col *cols; /* nfields columns, kinds from the field types */
  size_t nrows;
  /* metadata records: what ("process_name", ...), pid and tid as text, args.name */
  asc_col meta_what, meta_pid, meta_tid, meta_name;
  long long events; /* events seen, matched or not */
  long long bytes;
  int ranges;        /* pieces read by threads and joined (1: the whole file on one thread) */
  char warning[300]; /* first value that could not be converted (it became null), or "" */
} asc_json_result;

/* 0 on success. On error -1 with err filled (file, byte offset, line, column, yajl's message);
 * with spec->partial the rows read so far stay in res, otherwise res is emptied. */
int asc_json_scan(const char *path, const asc_json_spec *spec, asc_json_result *res, asc_error *err);
void asc_json_result_free(asc_json_result *res, size_t nfields);

/* Whether a file holds one valid JSON document, checked by yajl as its reader reads it, a block
 * at a time (a UTF-8 byte order mark first is skipped): feed and end return 0, or -1 with err
 * naming path, the byte offset, line and column, and yajl's message ("the file ends early" when
 * it is cut short). Memory stays yajl's: the nesting, not the file. */
typedef struct asc_json_checker asc_json_checker;
asc_json_checker *asc_json_checker_new(void); /* NULL: out of memory */
int asc_json_checker_feed(asc_json_checker *c, const char *path, const unsigned char *buf, size_t n,
                          asc_error *err);
int asc_json_checker_end(asc_json_checker *c, const char *path, asc_error *err);
void asc_json_checker_free(asc_json_checker *c);

#endif
