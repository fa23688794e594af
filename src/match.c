/* Sorted-array index: one sort at build time, two binary searches per query. */
#include "ascope/match.h"

#include <stdlib.h>
#include <string.h>

#include "ascope/checked.h"
#include "ascope/column.h"

typedef struct {
  uint64_t key;
  int64_t start, end, row;
} item;

/* The entries in (key, start, row) order. Rows are gathered in input order and each pass of a
 * least-significant-digit radix sort is stable, so sorting by (key, start) alone leaves equal
 * pairs in row order. A byte that is the same in every entry (the high bytes of nanosecond
 * timestamps, of small string ids) takes no pass: a trace's entries sort in a handful of
 * linear passes instead of n log n calls of a comparison function. */
static int sort_items(item *it, size_t k) {
  if (k < 2) return 0;
  item *tmp = asc_alloc_array(k, sizeof *tmp);
  if (!tmp) return -1;
  /* byte d of the sort key: d 0-7 the start's (sign flipped, so that unsigned order is signed
   * order), 8-15 the key's; all 16 histograms in one pass */
  enum { BYTES = 16 };
  size_t count[BYTES][256] = {{0}}; /* 32 KiB; not static: an embedding host may build indexes in threads */
  for (size_t i = 0; i < k; i++) {
    uint64_t s = (uint64_t)it[i].start ^ 0x8000000000000000ull, key = it[i].key;
    for (int d = 0; d < 8; d++) count[d][(s >> (8 * d)) & 0xFF]++, count[8 + d][(key >> (8 * d)) & 0xFF]++;
  }
  item *from = it, *to = tmp;
  for (int d = 0; d < BYTES; d++) {
    size_t *c = count[d], sum = 0;
    int used = 0;
    for (int b = 0; b < 256; b++) used += c[b] != 0;
    if (used == 1) continue; /* every entry has the same byte here */
    for (int b = 0; b < 256; b++) {
      size_t v = c[b];
      c[b] = sum;
      sum += v;
    }
    int shift = 8 * (d & 7);
    for (size_t i = 0; i < k; i++) {
      uint64_t v = d < 8 ? (uint64_t)from[i].start ^ 0x8000000000000000ull : from[i].key;
      to[c[(v >> shift) & 0xFF]++] = from[i];
    }
    item *swap = from;
    from = to;
    to = swap;
  }
  if (from != it) memcpy(it, from, k * sizeof *it);
  free(tmp);
  return 0;
}

void asc_match_free(asc_match_index *ix) {
  free(ix->key);
  free(ix->start);
  free(ix->end);
  free(ix->endtree);
  free(ix->runmax);
  free(ix->row);
  free(ix->group);
  ix->group = NULL;
  ix->ngroup = 0;
  ix->key = NULL;
  ix->start = ix->end = ix->endtree = ix->runmax = ix->row = NULL;
  ix->n = 0;
}

/* Whether keys up to max among k entries are dense enough for a table by key (they are string
 * ids of one table, as a rule): a query then searches its key's entries only. */
static int dense_keys(uint64_t max, size_t k) { return max <= 4 * (uint64_t)k + 4096; }

/* Whether entries [lo, hi) are in start order (ties are in row order: they were placed so). */
static int in_start_order(const asc_match_index *ix, size_t lo, size_t hi) {
  for (size_t j = lo + 1; j < hi; j++)
    if (ix->start[j - 1] > ix->start[j]) return 0;
  return 1;
}

/* Entries [lo, hi) sorted by (key, start, row) in place, through it (room for hi - lo). */
static int sort_range(asc_match_index *ix, item *it, size_t lo, size_t hi) {
  for (size_t i = lo; i < hi; i++) it[i - lo] = (item){ix->key[i], ix->start[i], ix->end[i], ix->row[i]};
  if (sort_items(it, hi - lo)) return -1;
  for (size_t i = lo; i < hi; i++) {
    ix->key[i] = it[i - lo].key;
    ix->start[i] = it[i - lo].start;
    ix->end[i] = it[i - lo].end;
    ix->row[i] = it[i - lo].row;
  }
  return 0;
}

/* start + dur of input row i, INT64_MIN when either is unknown */
static int64_t end_of(const int64_t *starts, const int64_t *durs, size_t i) {
  return starts[i] != ASC_NULL_I64 && durs && durs[i] != ASC_NULL_I64 ? asc_sat_add(starts[i], durs[i])
                                                                      : ASC_NULL_I64;
}

/* Entries with dense keys: a counting sort by key straight into the index's arrays, stable, so
 * that each key's entries are in row order, which for a trace written in time order is already
 * start order; only a key whose entries are not is sorted, on its own. Two linear passes for
 * the usual trace where the full radix sort takes one per varying byte (seven or eight). */
static int build_dense(asc_match_index *ix, const uint64_t *keys, const int64_t *starts, const int64_t *durs,
                       size_t n, size_t k, uint64_t max) {
  ix->ngroup = max + 1;
  ix->group = asc_alloc_array((size_t)ix->ngroup + 1, sizeof *ix->group);
  size_t *pos = asc_alloc_array((size_t)ix->ngroup, sizeof *pos);
  if (!ix->group || !pos) return free(pos), -1;
  memset(pos, 0, (size_t)ix->ngroup * sizeof *pos);
  for (size_t i = 0; i < n; i++)
    if (starts[i] != ASC_NULL_I64) pos[keys[i]]++;
  size_t sum = 0;
  for (uint64_t g = 0; g <= max; g++) {
    size_t c = pos[g];
    ix->group[g] = pos[g] = sum;
    sum += c;
  }
  ix->group[max + 1] = k;
  for (size_t i = 0; i < n; i++) {
    if (starts[i] == ASC_NULL_I64) continue;
    size_t p = pos[keys[i]]++;
    ix->key[p] = keys[i];
    ix->start[p] = starts[i];
    ix->end[p] = end_of(starts, durs, i);
    ix->row[p] = (int64_t)i;
  }
  free(pos);
  /* The keys whose entries are out of start order: each sorted on its own when they are few;
   * when many (entries not written in time order), one sort of everything, since each sort
   * has a fixed cost (its histograms) that would otherwise be paid once per key. */
  size_t unsorted = 0;
  for (uint64_t g = 0; g <= max; g++) unsorted += !in_start_order(ix, ix->group[g], ix->group[g + 1]);
  if (unsorted == 0) return 0;
  item *it = asc_alloc_array(k, sizeof *it);
  if (!it) return -1;
  int rc = 0;
  if (unsorted > 64) {
    rc = sort_range(ix, it, 0, k);
  } else {
    for (uint64_t g = 0; g <= max && rc == 0; g++)
      if (!in_start_order(ix, ix->group[g], ix->group[g + 1]))
        rc = sort_range(ix, it, ix->group[g], ix->group[g + 1]);
  }
  free(it);
  return rc;
}

/* The max tree over the entries' ends: node v (1 <= v < n) holds the larger of its children 2v
 * and 2v + 1, node v >= n is entry v - n's end (bottom-up, any n: a node the searches below
 * visit covers a run of entries in order). An unknown end is INT64_MIN, below every time. */
static int64_t node_max(const asc_match_index *ix, size_t v) {
  return v >= ix->n ? ix->end[v - ix->n] : ix->endtree[v];
}

int asc_match_build(asc_match_index *ix, const uint64_t *keys, const int64_t *starts, const int64_t *durs,
                    size_t n) {
  ix->n = 0;
  ix->group = NULL;
  ix->ngroup = 0;
  size_t m = n ? n : 1;
  ix->key = asc_alloc_array(m, sizeof *ix->key);
  ix->start = asc_alloc_array(m, sizeof *ix->start);
  ix->end = asc_alloc_array(m, sizeof *ix->end);
  ix->endtree = asc_alloc_array(m, sizeof *ix->endtree);
  ix->runmax = asc_alloc_array(m, sizeof *ix->runmax);
  ix->row = asc_alloc_array(m, sizeof *ix->row);
  ix->nrows = n;
  if (!ix->key || !ix->start || !ix->end || !ix->endtree || !ix->runmax || !ix->row) {
    asc_match_free(ix);
    return -1;
  }
  size_t k = 0;
  uint64_t max = 0;
  for (size_t i = 0; i < n; i++) {
    if (starts[i] == ASC_NULL_I64) continue;
    k++;
    if (keys[i] > max) max = keys[i];
  }
  if (k > 0 && dense_keys(max, k)) {
    if (build_dense(ix, keys, starts, durs, n, k, max)) {
      asc_match_free(ix);
      return -1;
    }
  } else { /* sparse keys: the entries in row order, then one sort of them all */
    item *it = asc_alloc_array(m, sizeof *it);
    size_t j = 0;
    for (size_t i = 0; it && i < n; i++) {
      if (starts[i] == ASC_NULL_I64) continue;
      ix->key[j] = keys[i];
      ix->start[j] = starts[i];
      ix->end[j] = end_of(starts, durs, i);
      ix->row[j++] = (int64_t)i;
    }
    int rc = it ? sort_range(ix, it, 0, k) : -1;
    free(it);
    if (rc) {
      asc_match_free(ix);
      return -1;
    }
  }
  for (size_t i = 0; i < k; i++) {
    int same = i > 0 && ix->key[i - 1] == ix->key[i];
    ix->runmax[i] = same && ix->runmax[i - 1] > ix->end[i] ? ix->runmax[i - 1] : ix->end[i];
  }
  ix->n = k;
  for (size_t v = k; v-- > 1;) { /* every node after its children */
    int64_t a = node_max(ix, 2 * v), b = node_max(ix, 2 * v + 1);
    ix->endtree[v] = a > b ? a : b;
  }
  if (ix->group) { /* the table by key finds a key's entries: their keys are not read again */
    free(ix->key);
    ix->key = NULL;
  }
  return 0;
}

/* Position after the last entry with (key, start) <= (key, t), and the group's first index. */
static size_t upper(const asc_match_index *ix, uint64_t key, int64_t t, size_t *group_lo) {
  if (ix->group) {
    if (key >= ix->ngroup) return *group_lo = 0;
    size_t lo = ix->group[key], hi = ix->group[key + 1];
    *group_lo = lo;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (ix->start[mid] <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  size_t lo = 0, hi = ix->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ix->key[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  *group_lo = lo;
  hi = ix->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ix->key[mid] < key || (ix->key[mid] == key && ix->start[mid] <= t))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int64_t asc_match_latest(const asc_match_index *ix, uint64_t key, int64_t t) {
  return asc_match_row(ix, asc_match_latest_at(ix, key, t));
}

int64_t asc_match_latest_at(const asc_match_index *ix, uint64_t key, int64_t t) {
  size_t g, u = upper(ix, key, t, &g);
  return u > g ? (int64_t)u - 1 : -1;
}

/* The entry under node v that is the last to reach t (node v's max reaches it). */
static int64_t last_under(const asc_match_index *ix, size_t v, int64_t t) {
  while (v < ix->n) v = node_max(ix, 2 * v + 1) >= t ? 2 * v + 1 : 2 * v;
  return (int64_t)(v - ix->n);
}

/* The latest entry before u (in its group from g) still running at t. The few entries just
 * before u are looked at one by one (the operator still running, as a rule); past them the max
 * tree finds it in O(log n): a walk back over entries that ended before t, one at a time, cost
 * the entries of the key a query when an early one ran long (a one-second op followed by 160k
 * short ones of its name: 14.8 s). */
static int64_t within_from(const asc_match_index *ix, size_t g, size_t u, int64_t t) {
  if (t == ASC_NULL_I64) t++; /* an unknown end reaches nothing */
  /* as a rule nothing earlier of the key still runs: its running max of ends says so at once */
  if (u == g || ix->runmax[u - 1] < t) return -1;
  size_t j = u;
  for (int steps = 0; j > g && steps < 8; j--, steps++)
    if (ix->end[j - 1] >= t) return (int64_t)j - 1;
  /* the runs [g, j) is made of: nodes taken from the left end come in order, those from the
   * right end in reverse order, so the latest match is in the first right node that reaches t
   * or else the last left node that does */
  size_t l = g + ix->n, r = j + ix->n, left[2 * sizeof(size_t) * 8], nleft = 0;
  for (; l < r; l >>= 1, r >>= 1) {
    if (l & 1) left[nleft++] = l++;
    if (r & 1 && node_max(ix, --r) >= t) return last_under(ix, r, t);
  }
  while (nleft > 0)
    if (node_max(ix, left[--nleft]) >= t) return last_under(ix, left[nleft], t);
  return -1;
}

int64_t asc_match_within(const asc_match_index *ix, uint64_t key, int64_t t) {
  return asc_match_row(ix, asc_match_within_at(ix, key, t));
}

int64_t asc_match_within_at(const asc_match_index *ix, uint64_t key, int64_t t) {
  size_t g, u = upper(ix, key, t, &g);
  return within_from(ix, g, u, t);
}

void asc_match_both(const asc_match_index *ix, uint64_t key, int64_t t, int64_t *latest, int64_t *within) {
  asc_match_both_at(ix, key, t, latest, within);
  *latest = asc_match_row(ix, *latest);
  *within = asc_match_row(ix, *within);
}

void asc_match_both_at(const asc_match_index *ix, uint64_t key, int64_t t, int64_t *latest, int64_t *within) {
  size_t g, u = upper(ix, key, t, &g);
  *latest = u > g ? (int64_t)u - 1 : -1;
  *within = within_from(ix, g, u, t);
}

int64_t asc_match_row(const asc_match_index *ix, int64_t at) { return at < 0 ? -1 : ix->row[at]; }

int64_t asc_match_end(const asc_match_index *ix, int64_t at) { return at < 0 ? ASC_NULL_I64 : ix->end[at]; }

typedef struct {
  uint64_t key;
  size_t at;
} placed;

static int by_key_then_place(const void *a, const void *b) {
  const placed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

int asc_match_last(const uint64_t *keys, size_t n, const uint64_t *q, size_t m, uint64_t none, int64_t *out) {
  placed *p = asc_alloc_array(n, sizeof *p);
  if (!p) return -1;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (keys[i] != none) p[k++] = (placed){keys[i], i};
  }
  qsort(p, k, sizeof *p, by_key_then_place);
  for (size_t j = 0; j < m; j++) {
    size_t lo = 0, hi = k; /* the first entry past q[j]: the one before it is its last */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (p[mid].key <= q[j])
        lo = mid + 1;
      else
        hi = mid;
    }
    out[j] = q[j] != none && lo > 0 && p[lo - 1].key == q[j] ? (int64_t)p[lo - 1].at : -1;
  }
  free(p);
  return 0;
}
