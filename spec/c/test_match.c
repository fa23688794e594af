/* The bisect rule: latest start <= t within the same key, ties to the later input row. */
#include "ascope/column.h"
#include "ascope/match.h"
#include "ctest.h"

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
  CTEST_END();
}
