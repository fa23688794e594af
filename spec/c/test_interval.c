/* Interval algebra against hand-computed answers, including overlapping (not nested) input. */
#include <stdlib.h>

#include "ascope/interval.h"
#include "ctest.h"

int main(void) {
  int64_t s[] = {10, 0, 5, 40, 30, 60};
  int64_t e[] = {20, 8, 12, 50, 45, 60}; /* [60,60) is empty and dropped */
  asc_iset u;
  CHECK(asc_iset_union(s, e, 6, &u) == 0);
  CHECK(u.n == 2);
  CHECK(u.v[0].s == 0 && u.v[0].e == 20);
  CHECK(u.v[1].s == 30 && u.v[1].e == 50);
  CHECK(asc_iset_total(&u) == 40);

  asc_iset g;
  CHECK(asc_iset_gaps(&u, -5, 70, &g) == 0);
  CHECK(g.n == 3 && g.v[0].s == -5 && g.v[0].e == 0 && g.v[1].s == 20 && g.v[1].e == 30 && g.v[2].s == 50 &&
        g.v[2].e == 70);
  CHECK(asc_iset_length_percentile(&g, 50) == 10.0);
  CHECK(asc_iset_length_percentile(&g, 100) == 20.0);

  int64_t s2[] = {15, 35}, e2[] = {32, 60};
  asc_iset b, x, d;
  CHECK(asc_iset_union(s2, e2, 2, &b) == 0);
  CHECK(asc_iset_intersect(&u, &b, &x) == 0);
  CHECK(x.n == 3 && x.v[0].s == 15 && x.v[0].e == 20 && x.v[1].s == 30 && x.v[1].e == 32 && x.v[2].s == 35 &&
        x.v[2].e == 50);
  CHECK(asc_iset_subtract(&u, &b, &d) == 0);
  CHECK(d.n == 2 && d.v[0].s == 0 && d.v[0].e == 15 && d.v[1].s == 32 && d.v[1].e == 35);

  /* clip by binary search: u = [0,20) [30,50) */
  asc_iset c;
  CHECK(asc_iset_clip(&u, 10, 40, &c) == 0 && c.n == 2 && c.v[0].s == 10 && c.v[0].e == 20 && c.v[1].s == 30 &&
        c.v[1].e == 40);
  asc_iset_free(&c);
  CHECK(asc_iset_clip(&u, 20, 30, &c) == 0 && c.n == 0); /* the gap between, ends touching */
  asc_iset_free(&c);
  CHECK(asc_iset_clip(&u, 50, 90, &c) == 0 && c.n == 0);
  asc_iset_free(&c);
  CHECK(asc_iset_clip(&u, -9, 0, &c) == 0 && c.n == 0);
  asc_iset_free(&c);
  CHECK(asc_iset_clip(&u, 40, 10, &c) == 0 && c.n == 0); /* an empty window */
  asc_iset_free(&c);
  CHECK(asc_iset_clip(&u, -100, 100, &c) == 0 && c.n == 2 && asc_iset_total(&c) == 40);
  asc_iset_free(&c);

  asc_iset empty;
  CHECK(asc_iset_union(NULL, NULL, 0, &empty) == 0 && empty.n == 0 && asc_iset_total(&empty) == 0);
  CHECK(asc_iset_clip(&empty, 0, 10, &c) == 0 && c.n == 0);
  asc_iset_free(&c);
  asc_iset_free(&u);
  asc_iset_free(&g);
  asc_iset_free(&b);
  asc_iset_free(&x);
  asc_iset_free(&d);
  asc_iset_free(&empty);
  CTEST_END();
}
