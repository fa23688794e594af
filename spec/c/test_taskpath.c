/* The longest path through tasks: lane order, flows, clipping, times at the ends of int64. */
#include "ascope/column.h"
#include "ascope/taskpath.h"
#include "ctest.h"

int main(void) {
  /* rows 0..4: two lanes; row 4 starts at the very end of the int64 range */
  int64_t ts[] = {0, 5, 20, 30, INT64_MAX - 2};
  int64_t du[] = {10, 10, 5, ASC_NULL_I64, 100};
  uint32_t ln[] = {1, 2, 1, 2, 1};
  asc_col lane = {ASC_U32, 5, 5, {.u = ln}};
  size_t path[8];
  int64_t gain[8];
  asc_taskpath p = {.path = path, .gain = gain};

  size_t rows[] = {0, 1, 2, 0}; /* row 0 twice: one node */
  CHECK(asc_taskpath_longest(ts, du, &lane, 5, rows, 4, NULL, NULL, 0, 0, 100, &p) == 0);
  CHECK(p.nodes == 3);
  CHECK(p.length == 15); /* lane 1: 0..10, then 20..25 */
  CHECK(p.n == 2 && path[0] == 2 && path[1] == 0 && gain[0] == 5 && gain[1] == 10);

  size_t prod[] = {0, 3}, cons[] = {1, 1}; /* 0 -> 1 chains the lanes; row 3 has no duration */
  CHECK(asc_taskpath_longest(ts, du, &lane, 5, rows, 3, prod, cons, 2, 0, 100, &p) == 0);
  CHECK(p.nodes == 3);
  CHECK(p.length == 15 && p.n == 2 && path[0] == 1 && gain[0] == 5); /* 0..10 then 10..15 */

  CHECK(asc_taskpath_longest(ts, du, &lane, 5, rows, 3, NULL, NULL, 0, 3, 8, &p) == 0);
  CHECK(p.length == 5); /* clipped to [3, 8]: never longer than the stage */

  size_t last[] = {4};
  CHECK(asc_taskpath_longest(ts, du, &lane, 5, last, 1, NULL, NULL, 0, INT64_MIN + 1, INT64_MAX, &p) == 0);
  CHECK(p.length == 2); /* the end saturates at INT64_MAX instead of wrapping */

  size_t untimed[] = {3};
  CHECK(asc_taskpath_longest(ts, du, &lane, 5, untimed, 1, NULL, NULL, 0, 0, 100, &p) == 0);
  CHECK(p.length == -1 && p.nodes == 0 && p.n == 0);

  /* a zero-length record at 50 on lane 2 (row 6) feeds the task that starts at 50 on lane 1
   * (row 5, an earlier row): the shorter of two tasks that start together comes first */
  int64_t ts2[] = {0, 0, 0, 0, 0, 50, 50, 40};
  int64_t du2[] = {0, 0, 0, 0, 0, 30, 0, 10};
  uint32_t ln2[] = {1, 1, 1, 1, 1, 1, 2, 2};
  asc_col lane2 = {ASC_U32, 8, 8, {.u = ln2}};
  size_t rows2[] = {5, 6, 7};
  size_t prod2[] = {6}, cons2[] = {5};
  CHECK(asc_taskpath_longest(ts2, du2, &lane2, 8, rows2, 3, prod2, cons2, 1, 0, 100, &p) == 0);
  CHECK(p.length == 40); /* 40..50 on lane 2, its record, then 50..80 on lane 1 */
  CHECK(p.n == 3 && path[0] == 5 && path[1] == 6 && path[2] == 7 && gain[0] == 30 && gain[1] == 0);

  size_t bad[] = {5};
  CHECK(asc_taskpath_longest(ts, du, &lane, 5, bad, 1, NULL, NULL, 0, 0, 100, &p) == -2);
  size_t badc[] = {9};
  CHECK(asc_taskpath_longest(ts, du, &lane, 5, rows, 1, prod, badc, 1, 0, 100, &p) == -2);
  CTEST_END();
}
