/* CSV reading (libcsv underneath) as a pull reader of records and as header-mapped typed
 * columns, and an atomic writer that quotes correctly. */
#ifndef ASCOPE_CSV_H
#define ASCOPE_CSV_H

#include <stdio.h>

#include "ascope/column.h"
#include "ascope/error.h"
#include "ascope/strtab.h"

typedef struct asc_csv_reader asc_csv_reader;

typedef struct asc_csv_record {
  size_t nfields;
  const char *const *fields; /* valid until the next call */
  const size_t *lens;
  long line; /* physical line where the record starts */
} asc_csv_record;

int asc_csv_open(const char *path, asc_csv_reader **out, asc_error *err);
/* 1 with a record, 0 at the end, -1 on error. A leading UTF-8 BOM is dropped; empty lines are
 * skipped; quoted fields may hold commas, quotes and newlines. */
int asc_csv_next(asc_csv_reader *r, asc_csv_record *rec, asc_error *err);
long long asc_csv_bytes_read(const asc_csv_reader *r);
long long asc_csv_size(const asc_csv_reader *r);
void asc_csv_close(asc_csv_reader *r);

/* The most fields a header may have (tables read here have tens): each costs a copy and a
 * pointer, so a line of commas would otherwise take tens of bytes of memory per byte of file. */
#define ASC_CSV_MAX_FIELDS 65536

typedef enum { ASC_CT_STRING, ASC_CT_INTEGER, ASC_CT_NUMBER, ASC_CT_US } asc_ctype;

typedef struct asc_csv_colspec {
  const char *name; /* header text, compared after trimming spaces, tabs and a BOM */
  asc_ctype type;
  int optional; /* a missing optional column gives an all-null column */
} asc_csv_colspec;

typedef struct asc_csv_spec {
  const asc_csv_colspec *cols;
  size_t ncols;
  int bad_as_null; /* unconvertible numbers become null (counted) instead of an error */
  asc_strtab *strings;
  /* Called about every 64 MiB and at the end; returning non-zero stops the read with an error. */
  int (*progress)(void *ud, long long done, long long total);
  void *progress_ud;
} asc_csv_spec;

typedef struct asc_csv_result {
  asc_col *cols; /* ncols */
  int *present;  /* ncols: was the column in the header */
  size_t nrows;
  long long bad_cells;
  asc_error first_bad; /* where the first bad cell was and what it held, when bad_as_null */
  /* The last line had no line end (a file cut while written?): its line number, and how many
   * fields it had (fewer than the header's: the row was dropped, its values may be cut). */
  long cut_line;
  size_t cut_fields, header_fields;
  /* Rows with another number of fields than the header (read with their numbers null: which
   * column a value belongs to cannot be told; extra fields are not read): how many, and where
   * the first one is. */
  long long ragged_rows;
  asc_error first_ragged;
} asc_csv_result;

int asc_csv_read(const char *path, const asc_csv_spec *spec, asc_csv_result *res, asc_error *err);
void asc_csv_result_free(asc_csv_result *res, size_t ncols);

typedef struct asc_csv_writer asc_csv_writer;
/* Writes to a temporary file beside `path`; close renames it into place. */
int asc_csv_writer_open(const char *path, int bom, asc_csv_writer **out, asc_error *err);
int asc_csv_write_field(asc_csv_writer *w, const char *s, size_t n);
/* How a field is written: as it is, quoted with its quotes doubled, or quoted when it is known
 * to hold no quote (nothing to double). */
enum { ASC_CSV_PLAIN = 0, ASC_CSV_QUOTE = 1, ASC_CSV_QUOTE_NO_INNER = 2 };
/* The same with the quoting decided by the caller (who may know it for a repeated string). */
int asc_csv_write_field_q(asc_csv_writer *w, const char *s, size_t n, int quote);
/* ASC_CSV_PLAIN, ASC_CSV_QUOTE or ASC_CSV_QUOTE_NO_INNER for this text. */
int asc_csv_quoting(const char *s, size_t n);
int asc_csv_end_row(asc_csv_writer *w);
/* 0 on success; on failure the temporary file is removed and nothing replaces `path`. */
int asc_csv_writer_close(asc_csv_writer *w, asc_error *err);
/* Drop the temporary file without touching `path` (a spool: its bytes). */
void asc_csv_writer_abort(asc_csv_writer *w);
/* A writer on a spool (ascope/spool.h): rows of any total size in bounded memory, in no named
 * file until asc_csv_writer_save copies them to a path (as often as asked); abort drops it. */
int asc_csv_writer_spool(int bom, asc_csv_writer **out, asc_error *err);
int asc_csv_writer_save(asc_csv_writer *w, const char *path, asc_error *err);

#endif
