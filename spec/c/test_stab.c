/* Point lookups without an index: the latest start that holds t, ties to the later row. */
#include "ascope/column.h"
#include "ascope/stab.h"
#include "ctest.h"

int main(void) {
  int64_t k64[] = {1, 1, 1, 2, 1, 1};
  uint32_t k32[] = {1, 1, 1, 2, 1, 1};
  asc_col keys[2] = {{ASC_I64, 6, 6, {.i = k64}}, {ASC_U32, 6, 6, {.u = k32}}};
  int64_t st[] = {0, 10, 10, 0, ASC_NULL_I64, INT64_MAX - 5};
  int64_t du[] = {100, 20, 5, 100, 5, 100}; /* the last one's end saturates */
  int64_t qk[] = {1, 1, 1, 2, 1, 3, 1, 1};
  int64_t qt[] = {12, 25, 31, 100, 101, 5, ASC_NULL_I64, INT64_MAX - 1};
  int64_t out[8];
  for (int w = 0; w < 2; w++) { /* lane numbers as int64 and as a 4-byte column: the same answers */
    const asc_col *k = &keys[w];
    CHECK(asc_stab_within(k, st, du, 6, qk, qt, 8, out) == 0);
    CHECK(out[0] == 2); /* rows 1 and 2 start at 10: the later one */
    CHECK(out[1] == 1); /* row 2 ended at 15 */
    CHECK(out[2] == 0); /* only the long slice is left */
    CHECK(out[3] == 3); /* the end is part of the slice */
    CHECK(out[4] == -1);
    CHECK(out[5] == -1); /* no slice of key 3 */
    CHECK(out[6] == -1); /* a missing time matches nothing */
    CHECK(out[7] == 5);
    CHECK(asc_stab_within(k, st, du, 0, qk, qt, 2, out) == 0);
    CHECK(out[0] == -1 && out[1] == -1);
    CHECK(asc_stab_within(k, st, du, 6, qk, qt, 0, out) == 0);
  }
  CTEST_END();
}
