/* The longest path through a step's tasks: see ascope/taskpath.h. The nodes are numbered as
 * they are added; a hash from row to node answers "is this row a node" for the flows, and one
 * from lane to its latest node gives the lane edges during the walk. */
#include <stdlib.h>
#include <string.h>

#include "ascope/checked.h"
#include "ascope/hash.h"
#include "ascope/taskpath.h"

#define NONE UINT32_MAX

/* open addressing from a 64-bit key to a node number; capacity a power of two, at most half full */
typedef struct nodemap {
  uint64_t *key;
  uint32_t *val; /* NONE: empty slot */
  size_t mask;
} nodemap;

static int map_init(nodemap *m, size_t entries) {
  size_t cap = 16;
  while (cap / 2 < entries) {
    if (asc_size_mul(cap, 2, &cap)) return -1;
  }
  m->key = asc_alloc_array(cap, sizeof *m->key);
  m->val = asc_alloc_array(cap, sizeof *m->val);
  m->mask = cap - 1;
  if (!m->key || !m->val) return -1;
  memset(m->val, 0xff, cap * sizeof *m->val);
  return 0;
}

static void map_free(nodemap *m) {
  free(m->key);
  free(m->val);
}

/* the slot of key: where it is, or the empty slot where it would go */
static size_t map_slot(const nodemap *m, uint64_t key) {
  size_t i = (size_t)asc_hash_key(key) & m->mask;
  while (m->val[i] != NONE && m->key[i] != key) i = (i + 1) & m->mask;
  return i;
}

typedef struct node {
  int64_t ts, end; /* start and end, as read: the order of the walk */
  int64_t s, e;    /* clipped start and end */
  int64_t dist;    /* the longest path that ends here */
  int64_t reach;   /* the latest end along it */
  int64_t gain;    /* what this task adds to it */
  size_t row;
  uint32_t from;  /* the node before it on that path, or NONE */
  uint32_t npred; /* flows into it; their producers are at pred[first, first + npred) */
  size_t first;
  int64_t lane;
  unsigned char done;
} node;

typedef struct order_key {
  int64_t ts, end;
  size_t row;
  uint32_t node;
} order_key;

/* (start, end, row): of two tasks that start together, the one over first comes first (an
 * event record at t is a predecessor of the task that starts at t) */
static int by_start(const void *a, const void *b) {
  const order_key *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

static int64_t clip(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

typedef struct graph {
  node *nd;
  size_t n;
  nodemap rows;
  uint32_t *edge_p, *edge_c; /* flows between nodes, in edge order */
  size_t ne;
  uint32_t *pred; /* producers grouped by consumer, each group in edge order */
} graph;

static void graph_free(graph *g) {
  free(g->nd);
  map_free(&g->rows);
  free(g->edge_p);
  free(g->edge_c);
  free(g->pred);
}

/* node number of row r, adding it when it is new and timed; NONE when it is not a node */
static uint32_t add_node(graph *g, const int64_t *ts, const int64_t *dur, const asc_col *lane, size_t r,
                         int64_t lo, int64_t hi) {
  size_t slot = map_slot(&g->rows, r);
  if (g->rows.val[slot] != NONE) return g->rows.val[slot];
  if (ts[r] == ASC_NULL_I64 || dur[r] == ASC_NULL_I64) return NONE;
  node *d = &g->nd[g->n];
  memset(d, 0, sizeof *d);
  d->row = r;
  d->ts = ts[r];
  d->end = asc_sat_add(ts[r], dur[r]);
  d->s = clip(ts[r], lo, hi);
  d->e = clip(asc_sat_add(ts[r], dur[r]), lo, hi);
  d->lane = asc_col_int(lane, r);
  d->from = NONE;
  g->rows.key[slot] = r;
  g->rows.val[slot] = (uint32_t)g->n;
  return (uint32_t)g->n++;
}

/* the nodes and the flows between them, the flows grouped by consumer (a counting sort keeps
 * each consumer's flows in edge order) */
static int build(graph *g, const int64_t *ts, const int64_t *dur, const asc_col *lane, size_t nrows,
                 const size_t *rows, size_t nr, const size_t *prod, const size_t *cons, size_t ne, int64_t lo,
                 int64_t hi) {
  size_t most;
  if (asc_size_add(nr, ne, &most) || most >= NONE) return -1;
  g->nd = asc_alloc_array(most, sizeof *g->nd);
  g->edge_p = asc_alloc_array(ne, sizeof *g->edge_p);
  g->edge_c = asc_alloc_array(ne, sizeof *g->edge_c);
  g->pred = asc_alloc_array(ne, sizeof *g->pred);
  if (!g->nd || !g->edge_p || !g->edge_c || !g->pred || map_init(&g->rows, most)) return -1;
  for (size_t k = 0; k < nr; k++) {
    if (rows[k] >= nrows) return -2;
    add_node(g, ts, dur, lane, rows[k], lo, hi);
  }
  for (size_t k = 0; k < ne; k++) {
    if (prod[k] >= nrows || cons[k] >= nrows) return -2;
    uint32_t c = g->rows.val[map_slot(&g->rows, cons[k])];
    if (c == NONE) continue;
    uint32_t p = add_node(g, ts, dur, lane, prod[k], lo, hi);
    if (p == NONE) continue;
    g->edge_p[g->ne] = p;
    g->edge_c[g->ne++] = c;
    g->nd[c].npred++;
  }
  size_t at = 0;
  for (size_t i = 0; i < g->n; i++) {
    g->nd[i].first = at;
    at += g->nd[i].npred;
    g->nd[i].npred = 0;
  }
  for (size_t k = 0; k < g->ne; k++) {
    node *c = &g->nd[g->edge_c[k]];
    g->pred[c->first + c->npred++] = g->edge_p[k];
  }
  return 0;
}

/* the path through p extended by d, taken when strictly longer than d's best so far */
static void consider(graph *g, node *d, uint32_t p) {
  const node *q = &g->nd[p];
  if (!q->done) return; /* starts after d: not a predecessor in time order */
  int64_t add = asc_sat_sub(d->e, d->s > q->reach ? d->s : q->reach);
  if (add < 0) add = 0;
  int64_t len = asc_sat_add(q->dist, add);
  if (len > d->dist) {
    d->dist = len;
    d->from = p;
    d->gain = add;
    d->reach = d->e > q->reach ? d->e : q->reach;
  }
}

/* walk the nodes in (start, end, row) order: each takes the best of its lane predecessor and its
 * flows; *best_node is the end of the longest path (the first met among equals) */
static int walk(graph *g, uint32_t *best_node) {
  order_key *ord = asc_alloc_array(g->n, sizeof *ord);
  nodemap lanes = {0};
  if (!ord || map_init(&lanes, g->n)) {
    free(ord);
    map_free(&lanes);
    return -1;
  }
  for (size_t i = 0; i < g->n; i++) {
    ord[i].ts = g->nd[i].ts;
    ord[i].end = g->nd[i].end;
    ord[i].row = g->nd[i].row;
    ord[i].node = (uint32_t)i;
  }
  qsort(ord, g->n, sizeof *ord, by_start);
  int64_t best = -1;
  *best_node = NONE;
  for (size_t k = 0; k < g->n; k++) {
    uint32_t i = ord[k].node;
    node *d = &g->nd[i];
    d->dist = d->gain = asc_sat_sub(d->e, d->s);
    d->reach = d->e;
    size_t slot = map_slot(&lanes, (uint64_t)d->lane);
    if (lanes.val[slot] != NONE) consider(g, d, lanes.val[slot]);
    for (uint32_t j = 0; j < d->npred; j++) consider(g, d, g->pred[d->first + j]);
    d->done = 1;
    lanes.key[slot] = (uint64_t)d->lane;
    lanes.val[slot] = i;
    if (d->dist > best) {
      best = d->dist;
      *best_node = i;
    }
  }
  free(ord);
  map_free(&lanes);
  return 0;
}

int asc_taskpath_longest(const int64_t *ts, const int64_t *dur, const asc_col *lane, size_t nrows,
                         const size_t *rows, size_t nr, const size_t *prod, const size_t *cons, size_t ne,
                         int64_t lo, int64_t hi, asc_taskpath *out) {
  out->length = -1;
  out->nodes = out->n = 0;
  graph g = {0};
  uint32_t end = NONE;
  int rc = build(&g, ts, dur, lane, nrows, rows, nr, prod, cons, ne, lo, hi);
  if (rc == 0) rc = walk(&g, &end);
  if (rc == 0) {
    out->nodes = g.n;
    /* from always points back in walk order, so this ends, within the nodes' count */
    for (uint32_t i = end; i != NONE; i = g.nd[i].from, out->n++) {
      out->path[out->n] = g.nd[i].row;
      out->gain[out->n] = g.nd[i].gain;
    }
    if (end != NONE) out->length = g.nd[end].dist;
  }
  graph_free(&g);
  return rc;
}
