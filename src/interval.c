/* Interval algebra by sorting and sweeping. */
#include "ascope/interval.h"

#include <stdlib.h>
#include <string.h>

#include "ascope/checked.h"
#include "ascope/column.h"

void asc_iset_free(asc_iset *a) {
  free(a->v);
  a->v = NULL;
  a->n = 0;
}

static int cmp_ival(const void *x, const void *y) {
  const asc_ival *a = x, *b = y;
  if (a->s != b->s) return a->s < b->s ? -1 : 1;
  return a->e < b->e ? -1 : a->e > b->e;
}

static size_t merge_sorted(asc_ival *v, size_t n) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    if (w > 0 && v[i].s <= v[w - 1].e) {
      if (v[i].e > v[w - 1].e) v[w - 1].e = v[i].e;
    } else {
      v[w++] = v[i];
    }
  }
  return w;
}

int asc_iset_adopt(asc_ival *v, size_t n, asc_iset *out) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (v[i].s != ASC_NULL_I64 && v[i].e != ASC_NULL_I64 && v[i].e > v[i].s) v[k++] = v[i];
  qsort(v, k, sizeof *v, cmp_ival);
  out->n = merge_sorted(v, k);
  /* a set lives as long as the analysis holds it: give back the room the merge freed */
  asc_ival *fit = realloc(v, (out->n ? out->n : 1) * sizeof *v);
  out->v = fit ? fit : v;
  return 0;
}

/* the buffer's first size, and the size from which it is merged when full instead of grown */
#define BUILD_FIRST 256
#define BUILD_MERGE_AT 65536

void asc_iset_builder_init(asc_iset_builder *b) {
  b->v = NULL;
  b->n = b->cap = 0;
}

void asc_iset_builder_free(asc_iset_builder *b) {
  free(b->v);
  asc_iset_builder_init(b);
}

int asc_iset_builder_add(asc_iset_builder *b, int64_t s, int64_t e) {
  if (s == ASC_NULL_I64 || e == ASC_NULL_I64 || e <= s) return 0; /* what adopt drops */
  int grow = b->n == b->cap;
  if (grow && b->cap >= BUILD_MERGE_AT) { /* full: merge, and grow only if that freed too little */
    qsort(b->v, b->n, sizeof *b->v, cmp_ival);
    b->n = merge_sorted(b->v, b->n);
    grow = b->n > b->cap / 2;
  }
  if (grow) {
    size_t cap;
    if (asc_size_mul(b->cap ? b->cap : BUILD_FIRST / 2, 2, &cap)) return -1;
    asc_ival *v = asc_realloc_array(b->v, cap, sizeof *v);
    if (!v) return -1;
    b->v = v;
    b->cap = cap;
  }
  b->v[b->n++] = (asc_ival){s, e};
  return 0;
}

int asc_iset_builder_finish(asc_iset_builder *b, asc_iset *out) {
  asc_ival *v = b->v;
  size_t n = b->n;
  asc_iset_builder_init(b);
  if (!v && !(v = malloc(sizeof *v))) return -1; /* an empty set still has its block */
  return asc_iset_adopt(v, n, out);
}

int asc_iset_union(const int64_t *starts, const int64_t *ends, size_t n, asc_iset *out) {
  out->n = 0;
  out->v = NULL;
  asc_ival *v = asc_alloc_array(n, sizeof *v);
  if (!v) return -1;
  for (size_t i = 0; i < n; i++) v[i] = (asc_ival){starts[i], ends[i]};
  return asc_iset_adopt(v, n, out);
}

int asc_iset_union2(const asc_iset *a, const asc_iset *b, asc_iset *out) {
  size_t n = a->n + b->n;
  out->v = malloc((n ? n : 1) * sizeof *out->v);
  if (!out->v) return -1;
  size_t i = 0, j = 0, k = 0;
  while (i < a->n || j < b->n) {
    if (j >= b->n || (i < a->n && a->v[i].s <= b->v[j].s))
      out->v[k++] = a->v[i++];
    else
      out->v[k++] = b->v[j++];
  }
  out->n = merge_sorted(out->v, k);
  return 0;
}

int asc_iset_intersect(const asc_iset *a, const asc_iset *b, asc_iset *out) {
  size_t cap = a->n + b->n;
  out->v = malloc((cap ? cap : 1) * sizeof *out->v);
  if (!out->v) return -1;
  size_t i = 0, j = 0, k = 0;
  while (i < a->n && j < b->n) {
    int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
    int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
    if (s < e) out->v[k++] = (asc_ival){s, e};
    if (a->v[i].e < b->v[j].e)
      i++;
    else
      j++;
  }
  out->n = k;
  return 0;
}

/* The first interval of a that ends after t (a's ends are in order, as its intervals are). */
static size_t first_ending_after(const asc_iset *a, int64_t t) {
  size_t lo = 0, hi = a->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a->v[mid].e <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* b's intervals outside a's span are found by binary search and not walked: one step's gaps
 * less a whole trace's set cost the step's share of it (a pipeline's P2P waits, step by step,
 * walked every earlier step's). */
int asc_iset_subtract(const asc_iset *a, const asc_iset *b, asc_iset *out) {
  size_t j = a->n ? first_ending_after(b, a->v[0].s) : 0, k = 0;
  size_t end = a->n ? first_ending_after(b, a->v[a->n - 1].e) : 0;
  if (end < b->n) end++; /* the one that may start inside a's span and end past it */
  size_t cap = a->n + (end > j ? end - j : 0) + 1; /* each of b's splits one of a's at most */
  out->v = malloc(cap * sizeof *out->v);
  if (!out->v) return -1;
  for (size_t i = 0; i < a->n; i++) {
    int64_t s = a->v[i].s, e = a->v[i].e;
    while (j < b->n && b->v[j].e <= s) j++;
    size_t jj = j;
    while (jj < b->n && b->v[jj].s < e) {
      if (b->v[jj].s > s) out->v[k++] = (asc_ival){s, b->v[jj].s};
      if (b->v[jj].e > s) s = b->v[jj].e;
      if (s >= e) break;
      jj++;
    }
    if (s < e) out->v[k++] = (asc_ival){s, e};
  }
  out->n = k;
  return 0;
}

/* By binary search: clipping one step's window out of a whole trace's set costs the step's
 * intervals, not the trace's. */
int asc_iset_clip(const asc_iset *a, int64_t lo, int64_t hi, asc_iset *out) {
  size_t first = first_ending_after(a, lo);
  size_t last = first;
  while (lo < hi && last < a->n && a->v[last].s < hi) last++;
  size_t k = last - first;
  out->n = 0;
  out->v = malloc((k ? k : 1) * sizeof *out->v);
  if (!out->v) return -1;
  for (size_t i = 0; i < k; i++) {
    asc_ival x = a->v[first + i];
    if (x.s < lo) x.s = lo;
    if (x.e > hi) x.e = hi;
    out->v[i] = x;
  }
  out->n = k;
  return 0;
}

int asc_iset_clip_bounds(const asc_iset *a, int64_t lo, int64_t hi, int64_t *s, int64_t *e) {
  size_t first = first_ending_after(a, lo);
  if (lo >= hi || first == a->n || a->v[first].s >= hi) return 0;
  size_t after = first + 1, top = a->n; /* the first interval from first on that starts at hi or later */
  while (after < top) {
    size_t mid = after + (top - after) / 2;
    if (a->v[mid].s < hi)
      after = mid + 1;
    else
      top = mid;
  }
  *s = a->v[first].s < lo ? lo : a->v[first].s;
  *e = a->v[after - 1].e > hi ? hi : a->v[after - 1].e;
  return 1;
}

int asc_iset_gaps(const asc_iset *a, int64_t lo, int64_t hi, asc_iset *out) {
  asc_iset w = {&(asc_ival){lo, hi}, lo < hi ? 1 : 0};
  return asc_iset_subtract(&w, a, out);
}

int64_t asc_iset_total(const asc_iset *a) {
  int64_t t = 0;
  for (size_t i = 0; i < a->n; i++) t = asc_sat_add(t, asc_sat_sub(a->v[i].e, a->v[i].s));
  return t;
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}

double asc_iset_length_percentile(const asc_iset *a, double p) {
  if (a->n == 0) return 0;
  int64_t *len = malloc(a->n * sizeof *len);
  if (!len) return -1;
  for (size_t i = 0; i < a->n; i++) len[i] = asc_sat_sub(a->v[i].e, a->v[i].s);
  qsort(len, a->n, sizeof *len, cmp_i64);
  if (p < 0) p = 0;
  if (p > 100) p = 100;
  double pos = p / 100.0 * (double)(a->n - 1);
  size_t lo = (size_t)pos;
  double frac = pos - (double)lo;
  double r = (double)len[lo];
  if (lo + 1 < a->n) r += frac * (double)(len[lo + 1] - len[lo]);
  free(len);
  return r;
}
