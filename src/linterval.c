/* Lua binding of interval sets: one userdata per set, methods that return new sets. */
#include <stdlib.h>
#include <string.h>

#include "ascope/checked.h"
#include "ascope/interval.h"
#include "ascope/taskpath.h"
#include "lbind.h"

#define ISET_MT "ascope.iset"

static asc_iset *check_iset(lua_State *L, int idx) { return luaL_checkudata(L, idx, ISET_MT); }

static asc_iset *push_iset(lua_State *L, asc_iset *moved) {
  asc_iset *u = lua_newuserdatauv(L, sizeof *u, 0);
  *u = *moved;
  moved->v = NULL;
  moved->n = 0;
  luaL_setmetatable(L, ISET_MT);
  return u;
}

static int oom(lua_State *L) { return lasc_oom(L); }

/* Union of intervals from two columns or sequences; the second holds ends, or durations when
 * durations is set. An optional third argument (column or sequence of 1-based rows) selects
 * the rows to use, so a lane or a class of events needs no copied columns. An empty selection
 * is an empty set: whether rows were given is told by the argument, never by the pointer
 * (an empty column has none). */
static int build(lua_State *L, int durations) {
  const char *fn = durations ? "interval.from_durations" : "interval.union";
  size_t ns, ne;
  int clip = !lua_isnoneornil(L, 4), selected = !lua_isnoneornil(L, 3);
  int64_t lo = clip ? luaL_checkinteger(L, 4) : 0, hi = clip ? luaL_checkinteger(L, 5) : 0;
  lua_settop(L, 5);                      /* the converted arrays' holders go above the arguments */
  int64_t *s = lasc_toint64s(L, 1, &ns); /* held on the stack: an error below frees them */
  int64_t *e = lasc_toint64s(L, 2, &ne);
  const asc_col *rows = selected ? lasc_tointcol(L, 3) : NULL; /* row lists are U32 */
  size_t n = selected ? rows->n : ns;
  asc_iset_builder bld;
  asc_iset_builder_init(&bld);
  int rc = ns != ne ? -2 : 0;
  for (size_t k = 0; rc == 0 && k < n; k++) {
    size_t i = k;
    if (selected) {
      int64_t r = asc_col_int(rows, k);
      if (r < 1 || (size_t)r > ns) {
        rc = -3;
        break;
      }
      i = (size_t)r - 1;
    }
    int64_t a = s[i], b = !durations                                     ? e[i]
                          : s[i] == ASC_NULL_I64 || e[i] == ASC_NULL_I64 ? ASC_NULL_I64
                                                                         : asc_sat_add(s[i], e[i]);
    if (clip) { /* only what meets [lo, hi), cut to it: the union of the cut pieces is the clip of the union
                 */
      if (a == ASC_NULL_I64 || b == ASC_NULL_I64 || b <= a || b <= lo || a >= hi || lo >= hi) continue;
      if (a < lo) a = lo;
      if (b > hi) b = hi;
    }
    if (asc_iset_builder_add(&bld, a, b)) rc = -1;
  }
  asc_iset r;
  if (rc == 0) rc = asc_iset_builder_finish(&bld, &r);
  asc_iset_builder_free(&bld);
  if (rc == -2) return luaL_error(L, "%s: %d starts but %d ends or durations", fn, (int)ns, (int)ne);
  if (rc == -3) return luaL_error(L, "%s: a row number is out of range", fn);
  if (rc) return oom(L);
  push_iset(L, &r);
  return 1;
}

/* interval.union(starts, ends [, rows [, lo, hi]]): with lo and hi, the union clipped to
 * [lo, hi) (what :clip(lo, hi) gives) without ever holding the intervals outside it. */
static int l_union(lua_State *L) { return build(L, 0); }

/* interval.from_durations(starts, durations [, rows [, lo, hi]]) */
static int l_from_durations(lua_State *L) { return build(L, 1); }

typedef int (*binop)(const asc_iset *, const asc_iset *, asc_iset *);

static int do_binop(lua_State *L, binop op) {
  asc_iset r;
  if (op(check_iset(L, 1), check_iset(L, 2), &r)) return oom(L);
  push_iset(L, &r);
  return 1;
}

static int m_union(lua_State *L) { return do_binop(L, asc_iset_union2); }
static int m_intersect(lua_State *L) { return do_binop(L, asc_iset_intersect); }
static int m_subtract(lua_State *L) { return do_binop(L, asc_iset_subtract); }

static int m_gaps(lua_State *L) {
  asc_iset *a = check_iset(L, 1), r;
  if (asc_iset_gaps(a, luaL_checkinteger(L, 2), luaL_checkinteger(L, 3), &r)) return oom(L);
  push_iset(L, &r);
  return 1;
}

static int m_clip(lua_State *L) {
  asc_iset *a = check_iset(L, 1), r;
  if (asc_iset_clip(a, luaL_checkinteger(L, 2), luaL_checkinteger(L, 3), &r)) return oom(L);
  push_iset(L, &r);
  return 1;
}

static int m_total(lua_State *L) {
  lua_pushinteger(L, asc_iset_total(check_iset(L, 1)));
  return 1;
}

static int m_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_iset(L, 1)->n);
  return 1;
}

/* set:get(i) -> start, end */
static int m_get(lua_State *L) {
  asc_iset *a = check_iset(L, 1);
  lua_Integer i = luaL_checkinteger(L, 2);
  if (i < 1 || (size_t)i > a->n) return 0;
  lua_pushinteger(L, a->v[i - 1].s);
  lua_pushinteger(L, a->v[i - 1].e);
  return 2;
}

/* set:bounds([lo, hi]) -> first start, last end (nil when empty); with lo and hi, those of
 * set:clip(lo, hi), without building it (a step's bounds cost no copy of the trace's set) */
static int m_bounds(lua_State *L) {
  asc_iset *a = check_iset(L, 1);
  int64_t s, e;
  if (lua_isnoneornil(L, 2)) {
    if (!a->n) return 0;
    s = a->v[0].s;
    e = a->v[a->n - 1].e;
  } else if (!asc_iset_clip_bounds(a, luaL_checkinteger(L, 2), luaL_checkinteger(L, 3), &s, &e)) {
    return 0;
  }
  lua_pushinteger(L, s);
  lua_pushinteger(L, e);
  return 2;
}

/* set:stats() -> {count, total, max, p50, p95, mean}: statistics of the interval lengths */
static int m_stats(lua_State *L) {
  asc_iset *a = check_iset(L, 1);
  int64_t mx = 0, tot = asc_iset_total(a);
  for (size_t i = 0; i < a->n; i++)
    if (asc_sat_sub(a->v[i].e, a->v[i].s) > mx) mx = asc_sat_sub(a->v[i].e, a->v[i].s);
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, (lua_Integer)a->n);
  lua_setfield(L, -2, "count");
  lua_pushinteger(L, tot);
  lua_setfield(L, -2, "total");
  lua_pushinteger(L, mx);
  lua_setfield(L, -2, "max");
  lua_pushnumber(L, asc_iset_length_percentile(a, 50));
  lua_setfield(L, -2, "p50");
  lua_pushnumber(L, asc_iset_length_percentile(a, 95));
  lua_setfield(L, -2, "p95");
  lua_pushnumber(L, a->n ? (double)tot / (double)a->n : 0);
  lua_setfield(L, -2, "mean");
  return 1;
}

static int m_percentile(lua_State *L) {
  lua_pushnumber(L, asc_iset_length_percentile(check_iset(L, 1), luaL_checknumber(L, 2)));
  return 1;
}

/* set:covered(t) -> true when some interval holds t */
static int m_covers(lua_State *L) {
  asc_iset *a = check_iset(L, 1);
  int64_t t = luaL_checkinteger(L, 2);
  size_t lo = 0, hi = a->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a->v[mid].e <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  lua_pushboolean(L, lo < a->n && a->v[lo].s <= t);
  return 1;
}

/* set:columns() -> starts, ends as columns */
static int m_columns(lua_State *L) {
  asc_iset *a = check_iset(L, 1);
  asc_col s, e;
  asc_col_init(&s, ASC_I64);
  asc_col_init(&e, ASC_I64);
  if (asc_col_reserve(&s, a->n + 1) || asc_col_reserve(&e, a->n + 1)) {
    asc_col_free(&s);
    asc_col_free(&e);
    return oom(L);
  }
  for (size_t i = 0; i < a->n; i++) s.v.i[i] = a->v[i].s, e.v.i[i] = a->v[i].e;
  s.n = e.n = a->n;
  lasc_pushcolumn(L, &s, 0);
  lasc_pushcolumn(L, &e, 0);
  return 2;
}

static int m_gc(lua_State *L) {
  asc_iset_free(check_iset(L, 1));
  return 0;
}

static int m_tostring(lua_State *L) {
  asc_iset *a = check_iset(L, 1);
  lua_pushfstring(L, "iset(%d intervals, total %I)", (int)a->n, (lua_Integer)asc_iset_total(a));
  return 1;
}

/* 1-based rows from a column or a sequence as 0-based indexes in a userdata on the stack; a
 * row below 1 becomes SIZE_MAX, which the path refuses as out of range */
static size_t *to_rows(lua_State *L, int idx, size_t *n) {
  const asc_col *c = lasc_tointcol(L, idx);
  size_t *out = lasc_newarray(L, c->n, sizeof *out);
  for (size_t k = 0; k < c->n; k++) {
    int64_t r = asc_col_int(c, k);
    out[k] = r >= 1 ? (size_t)(r - 1) : SIZE_MAX;
  }
  *n = c->n;
  return out;
}

/* interval.longest_path(starts, durations, lanes, rows, producers, consumers, lo, hi): the
 * longest dependency path through the tasks at rows (see ascope/taskpath.h). Returns its
 * length, its rows (the last task first), the number of tasks in the graph and what each task
 * on the path adds (a list beside the rows); nil when no task is timed. */
static int l_longest_path(lua_State *L) {
  size_t ns, nd, nr, np, nc;
  lua_settop(L, 8);
  int64_t lo = luaL_checkinteger(L, 7), hi = luaL_checkinteger(L, 8);
  const int64_t *ts = lasc_toint64s(L, 1, &ns);
  const int64_t *dur = lasc_toint64s(L, 2, &nd);
  const asc_col *lane = lasc_tointcol(L, 3);
  size_t *rows = to_rows(L, 4, &nr);
  size_t *prod = to_rows(L, 5, &np);
  size_t *cons = to_rows(L, 6, &nc);
  if (nd != ns || lane->n != ns) return luaL_error(L, "interval.longest_path: the columns differ in length");
  if (np != nc)
    return luaL_error(L, "interval.longest_path: %d producers but %d consumers", (int)np, (int)nc);
  size_t most;
  if (asc_size_add(nr, np, &most)) return oom(L);
  asc_taskpath p = {.path = lasc_newarray(L, most, sizeof(size_t)),
                    .gain = lasc_newarray(L, most, sizeof(int64_t))};
  int rc = asc_taskpath_longest(ts, dur, lane, ns, rows, nr, prod, cons, np, lo, hi, &p);
  if (rc == -2) return luaL_error(L, "interval.longest_path: a row number is out of range");
  if (rc) return oom(L);
  if (p.length < 0) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushinteger(L, p.length);
  lua_createtable(L, p.n > INT32_MAX ? 0 : (int)p.n, 0);
  lua_pushinteger(L, (lua_Integer)p.nodes);
  lua_createtable(L, p.n > INT32_MAX ? 0 : (int)p.n, 0);
  for (size_t k = 0; k < p.n; k++) {
    lua_pushinteger(L, (lua_Integer)p.path[k] + 1);
    lua_rawseti(L, -4, (lua_Integer)k + 1);
    lua_pushinteger(L, p.gain[k]);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  return 4;
}

int lasc_open_interval(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"union", m_union}, {"intersect", m_intersect},   {"subtract", m_subtract}, {"gaps", m_gaps},
      {"clip", m_clip},   {"total", m_total},           {"get", m_get},           {"bounds", m_bounds},
      {"stats", m_stats}, {"percentile", m_percentile}, {"covers", m_covers},     {"columns", m_columns},
      {NULL, NULL}};
  static const luaL_Reg fns[] = {{"union", l_union},
                                 {"from_durations", l_from_durations},
                                 {"longest_path", l_longest_path},
                                 {NULL, NULL}};
  if (luaL_newmetatable(L, ISET_MT)) {
    lua_pushcfunction(L, m_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, m_len);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, m_tostring);
    lua_setfield(L, -2, "__tostring");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, fns);
  return 1;
}
