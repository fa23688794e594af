/* Typed growable columns: int64, double, or interned string ids. Missing values are
 * ASC_NULL_I64, NaN, and string id 0. */
#ifndef ASCOPE_COLUMN_H
#define ASCOPE_COLUMN_H

#include <stddef.h>
#include <stdint.h>

#define ASC_NULL_I64 INT64_MIN

typedef enum { ASC_I64 = 0, ASC_F64 = 1, ASC_STR = 2 } asc_kind;

typedef struct asc_col {
  asc_kind kind;
  size_t n, cap;
  union {
    int64_t *i;
    double *f;
    uint32_t *s;
    void *p;
  } v;
} asc_col;

void asc_col_init(asc_col *c, asc_kind kind);
void asc_col_free(asc_col *c);
int asc_col_reserve(asc_col *c, size_t cap);
int asc_col_push_i64(asc_col *c, int64_t x);
int asc_col_push_f64(asc_col *c, double x);
int asc_col_push_str(asc_col *c, uint32_t id);
/* Append one missing value of the column's kind. */
int asc_col_push_null(asc_col *c);
size_t asc_kind_size(asc_kind k);
const char *asc_kind_name(asc_kind k);

#endif
