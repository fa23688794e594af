/* The bisect rule: latest start <= t within the same key, ties to the later input row. */
#include <stdlib.h>

#include "ascope/column.h"
#include "ascope/match.h"
#include "ctest.h"

/* The index's order, (key, start, row), checked entry by entry on n pseudo-random rows whose
 * keys and starts repeat (ties), whose starts are negative as well as positive and whose keys
 * differ in high bytes only: every byte the radix sort may skip or not. */
static int sorted_as_compared(size_t n, unsigned seed) {
  uint64_t *k = malloc(n * sizeof *k);
  int64_t *st = malloc(n * sizeof *st);
  int ok = k && st;
  srand(seed);
  for (size_t i = 0; ok && i < n; i++) {
    k[i] = (uint64_t)(rand() % 5) << (rand() % 2 ? 40 : 0);
    st[i] = (int64_t)(rand() % 200 - 100) * (rand() % 3 ? 1 : 1000000007LL);
  }
  asc_match_index ix;
  ok = ok && asc_match_build(&ix, k, st, NULL, n) == 0 && ix.n == n;
  for (size_t i = 1; ok && i < ix.n; i++) {
    int before = ix.key[i - 1] < ix.key[i] ||
                 (ix.key[i - 1] == ix.key[i] &&
                  (ix.start[i - 1] < ix.start[i] || (ix.start[i - 1] == ix.start[i] && ix.row[i - 1] < ix.row[i])));
    ok = before && ix.key[i] == k[ix.row[i]] && ix.start[i] == st[ix.row[i]];
  }
  if (k && st) asc_match_free(&ix);
  free(k);
  free(st);
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
  CHECK(sorted_as_compared(1, 1));
  CHECK(sorted_as_compared(2, 2));
  CHECK(sorted_as_compared(1000, 3));
  CHECK(sorted_as_compared(100000, 4));
  CTEST_END();
}
