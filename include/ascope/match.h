/* A grouped, sorted index (key -> starts in time order, with durations) and bulk lookups:
 * the latest start <= t, and the latest start <= t whose [start, start + dur] holds t. */
#ifndef ASCOPE_MATCH_H
#define ASCOPE_MATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct asc_match_index {
  size_t n;
  uint64_t *key; /* sorted by (key, start, row); NULL once built when group finds a key's entries */
  int64_t *start;
  int64_t *end;     /* start + dur, INT64_MIN when unknown */
  int64_t *endtree; /* a max tree of the ends: [v] = max of nodes 2v and 2v + 1 (see match.c) */
  int64_t *runmax;  /* running max of end within the key's group */
  int64_t *row;     /* 0-based row in the input */
  size_t nrows;     /* input rows */
  /* key k's entries are [group[k], group[k + 1]) when k < ngroup; NULL when the keys are too
   * sparse for a table by key (they are string ids, dense, as a rule) and a search finds them */
  size_t *group;
  uint64_t ngroup;
} asc_match_index;

/* Rows with a null start are left out. durs may be NULL (ends unknown). */
int asc_match_build(asc_match_index *ix, const uint64_t *keys, const int64_t *starts, const int64_t *durs,
                    size_t n);
void asc_match_free(asc_match_index *ix);
/* Row of the latest start <= t for key, ties going to the later input row; -1 when none. */
int64_t asc_match_latest(const asc_match_index *ix, uint64_t key, int64_t t);
/* Row of the latest start <= t with t <= start + dur; -1 when none. */
int64_t asc_match_within(const asc_match_index *ix, uint64_t key, int64_t t);
/* Both answers from one search: *latest and *within as the two functions above give them. */
void asc_match_both(const asc_match_index *ix, uint64_t key, int64_t t, int64_t *latest, int64_t *within);
/* The same three as entries of the index (0-based places, -1 when none), whose row and end
 * asc_match_row and asc_match_end give: the index keeps no end by input row. */
int64_t asc_match_latest_at(const asc_match_index *ix, uint64_t key, int64_t t);
int64_t asc_match_within_at(const asc_match_index *ix, uint64_t key, int64_t t);
void asc_match_both_at(const asc_match_index *ix, uint64_t key, int64_t t, int64_t *latest, int64_t *within);
/* Entry at's 0-based input row (-1 for at -1), and its start + dur (INT64_MIN: unknown, or at -1). */
int64_t asc_match_row(const asc_match_index *ix, int64_t at);
int64_t asc_match_end(const asc_match_index *ix, int64_t at);

/* For each of m query keys q[j], the 0-based place of the last of the n keys equal to it, or -1
 * (a flow end's start: the last start with its id). Keys equal to `none` (a missing value) are
 * never found. One sort of (key, place) pairs, 16 bytes a key. Returns 0, or -1 when memory is
 * short (out untouched). */
int asc_match_last(const uint64_t *keys, size_t n, const uint64_t *q, size_t m, uint64_t none, int64_t *out);

#endif
