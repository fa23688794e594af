/* Interval algebra against hand-computed answers, including overlapping (not nested) input. */
#include <stdlib.h>

#include "ascope/column.h"
#include "ascope/interval.h"
#include "ctest.h"

/* The builder's set is the union's, whether the intervals merge into few (it then merges as it
 * goes and stays small) or stay apart (it grows), with empty, reversed and missing ones mixed in. */
static void check_builder(size_t n, int64_t spread, int64_t len, unsigned seed, size_t max_cap) {
  int64_t *s = malloc(n * sizeof *s), *e = malloc(n * sizeof *e);
  CHECK(s && e);
  if (!s || !e) return;
  srand(seed);
  for (size_t i = 0; i < n; i++) {
    s[i] = (int64_t)rand() % spread;
    e[i] = s[i] + (int64_t)rand() % len - len / 8; /* some reversed or empty */
    if (i % 97 == 0) e[i] = ASC_NULL_I64;
    if (i % 89 == 0) s[i] = ASC_NULL_I64;
  }
  asc_iset u, b;
  asc_iset_builder bld;
  asc_iset_builder_init(&bld);
  int ok = 1;
  for (size_t i = 0; i < n && ok; i++) ok = asc_iset_builder_add(&bld, s[i], e[i]) == 0;
  CHECK(ok);
  CHECK(bld.cap <= max_cap);
  CHECK(asc_iset_builder_finish(&bld, &b) == 0);
  CHECK(bld.v == NULL && bld.n == 0);
  CHECK(asc_iset_union(s, e, n, &u) == 0);
  CHECK(u.n == b.n);
  int same = u.n == b.n;
  for (size_t i = 0; same && i < u.n; i++) same = u.v[i].s == b.v[i].s && u.v[i].e == b.v[i].e;
  CHECK(same);
  asc_iset_free(&u);
  asc_iset_free(&b);
  asc_iset_builder_free(&bld);
  free(s);
  free(e);
}

/* a random set on [lo, lo + span): the union of n intervals of up to len */
static int random_set(int64_t lo, int64_t span, size_t n, int64_t len, asc_iset *out) {
  int64_t s[64], e[64];
  if (n > 64) n = 64;
  for (size_t i = 0; i < n; i++) {
    s[i] = lo + (int64_t)rand() % span;
    e[i] = s[i] + 1 + (int64_t)rand() % len;
  }
  return asc_iset_union(s, e, n, out);
}

static int holds(const asc_iset *a, int64_t x) {
  for (size_t i = 0; i < a->n; i++)
    if (a->v[i].s <= x && x < a->v[i].e) return 1;
  return 0;
}

/* a - b point by point on the grid, b often much wider than a (a step's gaps less a whole
 * trace's set), the result sorted, disjoint and without empty intervals */
static int subtract_as_points(unsigned seed) {
  srand(seed);
  int ok = 1;
  for (int round = 0; ok && round < 400; round++) {
    asc_iset a, b, d;
    int64_t alo = rand() % 300, aspan = 1 + rand() % 60;
    ok = random_set(alo, aspan, (size_t)(rand() % 6), 1 + rand() % 20, &a) == 0 &&
         random_set(0, 400, (size_t)(rand() % 40), 1 + rand() % 12, &b) == 0 && asc_iset_subtract(&a, &b, &d) == 0;
    for (int64_t x = -5; ok && x < 420; x++) ok = holds(&d, x) == (holds(&a, x) && !holds(&b, x));
    for (size_t i = 0; ok && i < d.n; i++) ok = d.v[i].s < d.v[i].e && (i == 0 || d.v[i - 1].e < d.v[i].s);
    asc_iset_free(&a);
    asc_iset_free(&b);
    asc_iset_free(&d);
  }
  return ok;
}

int main(void) {
  check_builder(300000, 1000000, 200, 1, 65536);        /* dense: merges as it goes, room for 65536 */
  check_builder(300000, 1000000000, 50, 2, 2 * 300000); /* sparse: nearly all stay apart, it grows */
  check_builder(100, 1000, 30, 3, 256);                 /* below the size where it starts merging */
  asc_iset_builder none;
  asc_iset_builder_init(&none);
  asc_iset z;
  CHECK(asc_iset_builder_finish(&none, &z) == 0);
  CHECK(z.n == 0 && z.v != NULL);
  asc_iset_free(&z);

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
  CHECK(subtract_as_points(3));
  CHECK(asc_iset_subtract(&u, &b, &d) == 0);
  CHECK(d.n == 2 && d.v[0].s == 0 && d.v[0].e == 15 && d.v[1].s == 32 && d.v[1].e == 35);

  /* clip by binary search: u = [0,20) [30,50) */
  asc_iset c;
  CHECK(asc_iset_clip(&u, 10, 40, &c) == 0 && c.n == 2 && c.v[0].s == 10 && c.v[0].e == 20 &&
        c.v[1].s == 30 && c.v[1].e == 40);
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
  /* the clip's bounds, without it */
  int64_t bs = 0, be = 0;
  CHECK(asc_iset_clip_bounds(&u, 10, 40, &bs, &be) == 1 && bs == 10 && be == 40);
  CHECK(asc_iset_clip_bounds(&u, 5, 25, &bs, &be) == 1 && bs == 5 && be == 20);
  CHECK(asc_iset_clip_bounds(&u, 20, 31, &bs, &be) == 1 && bs == 30 && be == 31);
  CHECK(asc_iset_clip_bounds(&u, -100, 100, &bs, &be) == 1 && bs == 0 && be == 50);
  CHECK(asc_iset_clip_bounds(&u, 20, 30, &bs, &be) == 0);
  CHECK(asc_iset_clip_bounds(&u, 50, 90, &bs, &be) == 0);
  CHECK(asc_iset_clip_bounds(&u, -9, 0, &bs, &be) == 0);
  CHECK(asc_iset_clip_bounds(&u, 40, 10, &bs, &be) == 0);

  asc_iset empty;
  CHECK(asc_iset_union(NULL, NULL, 0, &empty) == 0 && empty.n == 0 && asc_iset_total(&empty) == 0);
  CHECK(asc_iset_clip(&empty, 0, 10, &c) == 0 && c.n == 0);
  asc_iset_free(&c);
  CHECK(asc_iset_clip_bounds(&empty, 0, 10, &bs, &be) == 0);
  asc_iset_free(&u);
  asc_iset_free(&g);
  asc_iset_free(&b);
  asc_iset_free(&x);
  asc_iset_free(&d);
  asc_iset_free(&empty);
  CTEST_END();
}
