/* Typed growable columns: int64, double, interned string ids, or 4-byte unsigned integers
 * (row numbers and group numbers: half the memory of int64 on the columns an analysis holds
 * most of). Missing values are ASC_NULL_I64, NaN, string id 0 and ASC_NULL_U32. To Lua a U32
 * column is an integer column like any other. */
#ifndef ASCOPE_COLUMN_H
#define ASCOPE_COLUMN_H

#include <stddef.h>
#include <stdint.h>

#define ASC_NULL_I64 INT64_MIN
#define ASC_NULL_U32 UINT32_MAX
/* A U32 column holds rows and groups of at most this many rows (the null value above it). */
#define ASC_MAX_U32_ROWS ((size_t)UINT32_MAX - 1)

typedef enum { ASC_I64 = 0, ASC_F64 = 1, ASC_STR = 2, ASC_U32 = 3 } asc_kind;

typedef struct asc_col {
  asc_kind kind;
  size_t n, cap;
  union {
    int64_t *i;
    double *f;
    uint32_t *s;
    uint32_t *u;
    void *p;
  } v;
} asc_col;

void asc_col_init(asc_col *c, asc_kind kind);
void asc_col_free(asc_col *c);
int asc_col_reserve(asc_col *c, size_t cap);
int asc_col_push_i64(asc_col *c, int64_t x);
int asc_col_push_f64(asc_col *c, double x);
int asc_col_push_str(asc_col *c, uint32_t id);
int asc_col_push_u32(asc_col *c, uint32_t x);
/* Append one missing value of the column's kind. */
int asc_col_push_null(asc_col *c);
size_t asc_kind_size(asc_kind k);
const char *asc_kind_name(asc_kind k);

/* Is k one of the integer kinds (I64 or U32)? */
static inline int asc_kind_integer(asc_kind k) { return k == ASC_I64 || k == ASC_U32; }

/* Row i of an integer column (I64 or U32) as an int64, ASC_NULL_I64 when missing. */
static inline int64_t asc_col_int(const asc_col *c, size_t i) {
  if (c->kind == ASC_U32) return c->v.u[i] == ASC_NULL_U32 ? ASC_NULL_I64 : (int64_t)c->v.u[i];
  return c->v.i[i];
}

#endif
