/* The bisect rule: latest start <= t within the same key, ties to the later input row. */
#include <stdlib.h>
#include <string.h>

#include "ascope/column.h"
#include "ascope/match.h"
#include "ctest.h"

/* The index's order, (key, start, row), checked entry by entry on n pseudo-random rows whose
 * keys and starts repeat (ties) and whose starts are negative as well as positive. Mode 0: keys
 * that differ in high bytes only (sparse: the full radix sort, every byte it may skip or not);
 * 1: dense keys (the counting sort by key, each key's entries then sorted); 2: dense keys in
 * time order but for key 3, which runs backwards, and a row in seven without a start (the
 * counting sort leaves the keys in order as they are); 3: a key for every three rows, at random
 * starts (so many keys out of order that everything is sorted at once). */
static int sorted_as_compared(size_t n, unsigned seed, int mode) {
  uint64_t *k = malloc(n * sizeof *k);
  int64_t *st = malloc(n * sizeof *st);
  int ok = k && st;
  srand(seed);
  for (size_t i = 0; ok && i < n; i++) {
    k[i] = (uint64_t)(rand() % 5) << (mode == 0 && rand() % 2 ? 40 : 0);
    st[i] = (int64_t)(rand() % 200 - 100) * (rand() % 3 ? 1 : 1000000007LL);
    if (mode == 2) st[i] = i % 7 == 6 ? ASC_NULL_I64 : k[i] == 3 ? -(int64_t)(i / 2) : (int64_t)(i / 2) - 50;
    if (mode == 3) k[i] = i / 3;
  }
  size_t with_start = 0;
  for (size_t i = 0; ok && i < n; i++) with_start += st[i] != ASC_NULL_I64;
  asc_match_index ix;
  ok = ok && asc_match_build(&ix, k, st, NULL, n) == 0 && ix.n == with_start && (mode == 0 || ix.group);
  /* an entry's key: the index's own, or, once a table by key finds the entries (which frees
   * the keys), its input row's */
#define KEY(i) (ix.key ? ix.key[i] : k[ix.row[i]])
  ok = ok && (ix.group != NULL) == (ix.key == NULL);
  for (size_t i = 1; ok && i < ix.n; i++) {
    int before = KEY(i - 1) < KEY(i) ||
                 (KEY(i - 1) == KEY(i) &&
                  (ix.start[i - 1] < ix.start[i] || (ix.start[i - 1] == ix.start[i] && ix.row[i - 1] < ix.row[i])));
    ok = before && KEY(i) == k[ix.row[i]] && ix.start[i] == st[ix.row[i]];
  }
  for (size_t i = 0; ok && ix.group && i < ix.n; i++) /* each entry inside its key's range */
    ok = ix.group[KEY(i)] <= i && i < ix.group[KEY(i) + 1];
#undef KEY
  if (k && st) asc_match_free(&ix);
  free(k);
  free(st);
  return ok;
}

/* The same answers whether the keys are dense (a table of each key's entries) or sparse (a
 * search for the key): the keys 0..4 and the same keys times 2^40, queried at random times,
 * with keys that have no entries and one past the largest. */
static int dense_as_sparse(size_t n, unsigned seed) {
  uint64_t *dk = malloc(n * sizeof *dk), *sk = malloc(n * sizeof *sk);
  int64_t *st = malloc(n * sizeof *st), *du = malloc(n * sizeof *du);
  int ok = dk && sk && st && du;
  srand(seed);
  for (size_t i = 0; ok && i < n; i++) {
    dk[i] = (uint64_t)(rand() % 3) * 2; /* 0, 2, 4: 1 and 3 have no entries */
    sk[i] = dk[i] << 40;
    st[i] = rand() % 1000;
    du[i] = rand() % 50;
  }
  asc_match_index d, s;
  memset(&d, 0, sizeof d);
  memset(&s, 0, sizeof s);
  ok = ok && asc_match_build(&d, dk, st, du, n) == 0 && asc_match_build(&s, sk, st, du, n) == 0;
  ok = ok && d.group != NULL && s.group == NULL;
  for (int q = 0; ok && q < 20000; q++) {
    uint64_t key = (uint64_t)(rand() % 6);
    int64_t t = rand() % 1100 - 50, dl, dw, sl, sw;
    asc_match_both(&d, key, t, &dl, &dw);
    asc_match_both(&s, key << 40, t, &sl, &sw);
    ok = dl == sl && dw == sw && dl == asc_match_latest(&d, key, t) && dw == asc_match_within(&d, key, t);
  }
  asc_match_free(&d);
  asc_match_free(&s);
  free(dk);
  free(sk);
  free(st);
  free(du);
  return ok;
}

/* asc_match_within against the rule read off the rows: of the key's rows with start <= t and a
 * known end >= t, the latest by (start, row). Keys dense (mode 0) or sparse (1); some starts and
 * durations unknown; in a row in `longs`, a duration that outlasts everything after it (the
 * case where a walk back over ended entries was the cost). */
static int within_as_rule(size_t n, unsigned seed, int mode, int longs) {
  uint64_t *k = malloc(n * sizeof *k);
  int64_t *st = malloc(n * sizeof *st), *du = malloc(n * sizeof *du);
  int ok = k && st && du;
  srand(seed);
  for (size_t i = 0; ok && i < n; i++) {
    k[i] = (uint64_t)(rand() % 4) << (mode ? 40 : 0);
    st[i] = rand() % 17 == 0 ? ASC_NULL_I64 : (int64_t)(i * 10 + rand() % 30);
    du[i] = rand() % 13 == 0 ? ASC_NULL_I64 : longs && rand() % longs == 0 ? (int64_t)(n * 10) : rand() % 25;
  }
  asc_match_index ix;
  ok = ok && asc_match_build(&ix, k, st, du, n) == 0;
  for (int q = 0; ok && q < 4000; q++) {
    uint64_t key = (uint64_t)(rand() % 5) << (mode ? 40 : 0);
    int64_t t = q == 0 ? INT64_MIN : q == 1 ? INT64_MAX : (int64_t)(rand() % (n * 10 + 60)) - 30, want = -1;
    for (size_t i = 0; i < n; i++) {
      if (k[i] != key || st[i] == ASC_NULL_I64 || st[i] > t || du[i] == ASC_NULL_I64 || st[i] + du[i] < t) continue;
      if (want < 0 || st[i] > st[want] || (st[i] == st[want] && (int64_t)i > want)) want = (int64_t)i;
    }
    ok = asc_match_within(&ix, key, t) == want;
  }
  if (k && st && du) asc_match_free(&ix);
  free(k);
  free(st);
  free(du);
  return ok;
}

int main(void) {
  uint64_t k[] = {1, 1, 2, 1, 1};
  int64_t st[] = {1000, 3000, 2000, 3000, ASC_NULL_I64};
  int64_t du[] = {500, 100, 1000, 10, 5};
  asc_match_index ix;
  CHECK(asc_match_build(&ix, k, st, du, 5) == 0);
  CHECK(ix.n == 4); /* the null start is left out */
  CHECK(asc_match_latest(&ix, 1, 999) == -1);
  CHECK(asc_match_latest(&ix, 1, 1000) == 0);
  CHECK(asc_match_latest(&ix, 1, 2999) == 0);
  CHECK(asc_match_latest(&ix, 1, 3000) == 3); /* tie at 3000: the later row */
  CHECK(asc_match_latest(&ix, 2, 99999) == 2);
  CHECK(asc_match_latest(&ix, 3, 5000) == -1);
  CHECK(asc_match_within(&ix, 1, 1400) == 0);
  CHECK(asc_match_within(&ix, 1, 1600) == -1);
  CHECK(asc_match_within(&ix, 1, 3050) == 1); /* row 3 ended at 3010, row 1 lasts to 3100 */
  CHECK(asc_match_within(&ix, 2, 3000) == 2);
  CHECK(asc_match_within(&ix, 2, 3001) == -1);
  asc_match_free(&ix);
  for (int mode = 0; mode < 4; mode++) {
    CHECK(sorted_as_compared(1, 1, mode));
    CHECK(sorted_as_compared(2, 2, mode));
    CHECK(sorted_as_compared(1000, 3, mode));
    CHECK(sorted_as_compared(100000, 4, mode));
  }
  { /* the last place of each key; the missing value (here 0) is never found */
    uint64_t keys[] = {7, 9, 7, 0, 8, 0}, q[] = {7, 8, 5, 9, 0};
    int64_t at[5];
    CHECK(asc_match_last(keys, 6, q, 5, 0, at) == 0);
    CHECK(at[0] == 2 && at[1] == 4 && at[2] == -1 && at[3] == 1 && at[4] == -1);
    CHECK(asc_match_last(keys, 0, q, 5, 0, at) == 0 && at[0] == -1 && at[3] == -1);
  }
  for (int mode = 0; mode < 2; mode++) {
    CHECK(within_as_rule(1, 7, mode, 0));
    CHECK(within_as_rule(40, 8, mode, 5));
    CHECK(within_as_rule(3000, 9, mode, 0));
    CHECK(within_as_rule(3000, 10, mode, 300));
    CHECK(within_as_rule(3000, 11, mode, 7));
  }
  CHECK(dense_as_sparse(1, 5));
  CHECK(dense_as_sparse(3000, 6));
  CTEST_END();
}
