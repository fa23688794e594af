/* Read-only SQLite queries into typed columns (for ascend_pytorch_profiler_*.db). */
#ifndef ASCOPE_DB_H
#define ASCOPE_DB_H

#include "ascope/column.h"
#include "ascope/error.h"
#include "ascope/strtab.h"

typedef struct asc_db asc_db;

/* Fails on a file that is not SQLite or is shorter than its header gives (a copy cut short). */
int asc_db_open(const char *path, asc_db **out, asc_error *err);
void asc_db_close(asc_db *db);

typedef struct asc_db_result {
  size_t ncols, nrows;
  char **names;
  asc_col *cols;
} asc_db_result;

/* Bind parameters are text or int64 given as strings/ints through the binder callback of the
 * Lua layer; here: nparams values as text (NULL = SQL NULL). A column's kind comes from its
 * declared type (INT -> integer, REAL/FLOA/DOUB -> number, else string); without one, from the
 * first non-null value. */
int asc_db_query(asc_db *db, const char *sql, const char *const *params, size_t nparams, asc_strtab *strings,
                 asc_db_result *res, asc_error *err);
void asc_db_result_free(asc_db_result *res);
/* 1 when name is a real table (a view does not count: its query could be anything), 0 when
 * not, -1 with err when the schema cannot be read (a damaged file). */
int asc_db_has_table(asc_db *db, const char *name, asc_error *err);
/* Each query stops after about steps virtual-machine steps (the default grows with the file:
 * 10^8 plus 1000 per byte). */
void asc_db_set_budget(asc_db *db, long long steps);

#endif
