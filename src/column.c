/* Growable typed arrays: the storage behind every column a scan returns. */
#include "ascope/column.h"

#include <math.h>
#include <stdlib.h>

#include "ascope/checked.h"

size_t asc_kind_size(asc_kind k) { return k == ASC_STR || k == ASC_U32 ? sizeof(uint32_t) : 8; }

const char *asc_kind_name(asc_kind k) {
  return asc_kind_integer(k) ? "integer" : k == ASC_F64 ? "number" : "string";
}

void asc_col_init(asc_col *c, asc_kind kind) {
  c->kind = kind;
  c->n = c->cap = 0;
  c->v.p = NULL;
}

void asc_col_free(asc_col *c) {
  free(c->v.p);
  c->v.p = NULL;
  c->n = c->cap = 0;
}

int asc_col_reserve(asc_col *c, size_t cap) {
  if (cap <= c->cap) return 0;
  void *p = asc_realloc_array(c->v.p, cap, asc_kind_size(c->kind));
  if (!p) return -1;
  c->v.p = p;
  c->cap = cap;
  return 0;
}

static int grow(asc_col *c) {
  size_t cap;
  if (asc_size_mul(c->cap ? c->cap : 32, 2, &cap)) return -1;
  return asc_col_reserve(c, cap);
}

int asc_col_push_i64(asc_col *c, int64_t x) {
  if (c->n == c->cap && grow(c)) return -1;
  c->v.i[c->n++] = x;
  return 0;
}

int asc_col_push_f64(asc_col *c, double x) {
  if (c->n == c->cap && grow(c)) return -1;
  c->v.f[c->n++] = x;
  return 0;
}

int asc_col_push_str(asc_col *c, uint32_t id) {
  if (c->n == c->cap && grow(c)) return -1;
  c->v.s[c->n++] = id;
  return 0;
}

int asc_col_push_u32(asc_col *c, uint32_t x) {
  if (c->n == c->cap && grow(c)) return -1;
  c->v.u[c->n++] = x;
  return 0;
}

int asc_col_push_null(asc_col *c) {
  switch (c->kind) {
  case ASC_I64: return asc_col_push_i64(c, ASC_NULL_I64);
  case ASC_F64: return asc_col_push_f64(c, NAN);
  case ASC_U32: return asc_col_push_u32(c, ASC_NULL_U32);
  default: return asc_col_push_str(c, 0);
  }
}
