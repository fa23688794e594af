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
int asc_iset_union2(const asc_iset *a, const asc_iset *b, asc_iset *out);
int asc_iset_intersect(const asc_iset *a, const asc_iset *b, asc_iset *out);
int asc_iset_subtract(const asc_iset *a, const asc_iset *b, asc_iset *out);
/* The parts of [lo, hi) that a does not cover. */
int asc_iset_gaps(const asc_iset *a, int64_t lo, int64_t hi, asc_iset *out);
int asc_iset_clip(const asc_iset *a, int64_t lo, int64_t hi, asc_iset *out);
int64_t asc_iset_total(const asc_iset *a);
void asc_iset_free(asc_iset *a);

/* Percentile p (0..100) of the lengths, linear interpolation between order statistics (the
 * numpy default). 0 for an empty set. */
double asc_iset_length_percentile(const asc_iset *a, double p);

#endif
