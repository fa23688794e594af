/* Sets of half-open int64 intervals [s, e) kept sorted and disjoint. Built from any list of
 * intervals (overlapping or nested), then combined in O(n log n) / O(n + m). */
#ifndef ASCOPE_INTERVAL_H
#define ASCOPE_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct asc_ival {
  int64_t s, e;
} asc_ival;

typedef struct asc_iset {
  asc_ival *v;
  size_t n;
} asc_iset;

/* Union of n intervals given as starts and ends (ends[i] < starts[i] and INT64_MIN values are
 * skipped; empty intervals are dropped). Touching intervals merge. */
int asc_iset_union(const int64_t *starts, const int64_t *ends, size_t n, asc_iset *out);
/* The same union of n intervals already in v (a malloc'd block): the set takes v over and
 * sorts and merges it in place, so building a set needs no second copy. Returns 0. */
int asc_iset_adopt(asc_ival *v, size_t n, asc_iset *out);
/* The same union of intervals given one at a time, in memory bounded by the union rather than
 * by the count: they are gathered in a buffer that is sorted and merged in place whenever it
 * fills, and grows only when the merged part fills half of it. A busy set of many slices is
 * usually far smaller than they are (back-to-back kernels merge), so its building holds a
 * fraction of the 16 bytes a slice (and the sort's own copy of them) that collecting all first
 * would. The result is asc_iset_union's. Add returns 0, or -1 when memory is short (then, as
 * after finish, only free is left to call). */
typedef struct asc_iset_builder {
  asc_ival *v;
  size_t n, cap;
} asc_iset_builder;
void asc_iset_builder_init(asc_iset_builder *b);
int asc_iset_builder_add(asc_iset_builder *b, int64_t s, int64_t e);
/* The set (the builder's buffer becomes the set's; the builder is left empty). Returns 0, or
 * -1 when memory is short. */
int asc_iset_builder_finish(asc_iset_builder *b, asc_iset *out);
void asc_iset_builder_free(asc_iset_builder *b);
int asc_iset_union2(const asc_iset *a, const asc_iset *b, asc_iset *out);
int asc_iset_intersect(const asc_iset *a, const asc_iset *b, asc_iset *out);
int asc_iset_subtract(const asc_iset *a, const asc_iset *b, asc_iset *out);
/* The parts of [lo, hi) that a does not cover. */
int asc_iset_gaps(const asc_iset *a, int64_t lo, int64_t hi, asc_iset *out);
int asc_iset_clip(const asc_iset *a, int64_t lo, int64_t hi, asc_iset *out);
/* The first start and last end of asc_iset_clip(a, lo, hi) in *s and *e, without building it
 * (two binary searches): 1, or 0 when the clip is empty. */
int asc_iset_clip_bounds(const asc_iset *a, int64_t lo, int64_t hi, int64_t *s, int64_t *e);
int64_t asc_iset_total(const asc_iset *a);
void asc_iset_free(asc_iset *a);

/* Percentile p (0..100) of the lengths, linear interpolation between order statistics (the
 * numpy default). 0 for an empty set. */
double asc_iset_length_percentile(const asc_iset *a, double p);

#endif
