/* Top N groups by a bounded heap (see ascope/topgroups.h): O(groups log N), not a sort of
 * every group. */
#include "ascope/topgroups.h"

#include <string.h>

typedef struct {
  const double *sum;
  asc_group_key key;
  void *ud;
} ranking;

/* 1 when group a ranks before group b */
static int before(const ranking *r, size_t a, size_t b) {
  if (r->sum[a] != r->sum[b]) return r->sum[a] > r->sum[b];
  size_t la, lb;
  const char *ka = r->key(r->ud, a, &la), *kb = r->key(r->ud, b, &lb);
  int c = memcmp(ka, kb, la < lb ? la : lb);
  if (c) return c < 0;
  if (la != lb) return la < lb;
  return a < b;
}

/* the heap keeps its last-ranked group at the root */
static void sift_down(const ranking *r, size_t *h, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, w = i;
    if (l < n && before(r, h[w], h[l])) w = l;
    if (l + 1 < n && before(r, h[w], h[l + 1])) w = l + 1;
    if (w == i) return;
    size_t t = h[i];
    h[i] = h[w];
    h[w] = t;
    i = w;
  }
}

static void sift_up(const ranking *r, size_t *h, size_t i) {
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!before(r, h[p], h[i])) return;
    size_t t = h[i];
    h[i] = h[p];
    h[p] = t;
    i = p;
  }
}

size_t asc_top_groups(const double *sum, const int64_t *cnt, size_t nk, size_t n, asc_group_key key, void *ud,
                      size_t *out) {
  ranking r = {sum, key, ud};
  size_t m = 0;
  if (n == 0) return 0;
  for (size_t k = 0; k < nk; k++) {
    if (!cnt[k]) continue;
    if (m < n) {
      out[m] = k;
      sift_up(&r, out, m++);
    } else if (before(&r, k, out[0])) {
      out[0] = k;
      sift_down(&r, out, m, 0);
    }
  }
  /* take the last-ranked off the root into the back: out ends in rank order */
  for (size_t end = m; end > 1; end--) {
    size_t t = out[0];
    out[0] = out[end - 1];
    out[end - 1] = t;
    sift_down(&r, out, end - 1, 0);
  }
  return m;
}
