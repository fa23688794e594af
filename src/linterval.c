/* Lua binding of interval sets: one userdata per set, methods that return new sets. */
#include <stdlib.h>
#include <string.h>

#include "ascope/interval.h"
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

static int oom(lua_State *L) { return luaL_error(L, "out of memory"); }

/* interval.union(starts, ends): columns or sequences of int64 */
static int l_union(lua_State *L) {
  size_t ns, ne;
  int os, oe;
  int64_t *s = lasc_toint64s(L, 1, &ns, &os);
  int64_t *e = lasc_toint64s(L, 2, &ne, &oe);
  asc_iset r;
  int rc = ns == ne ? asc_iset_union(s, e, ns, &r) : -2;
  if (os) free(s);
  if (oe) free(e);
  if (rc == -2) return luaL_error(L, "interval.union: %d starts but %d ends", (int)ns, (int)ne);
  if (rc) return oom(L);
  push_iset(L, &r);
  return 1;
}

/* interval.from_durations(starts, durations) */
static int l_from_durations(lua_State *L) {
  size_t ns, nd;
  int os, od;
  int64_t *s = lasc_toint64s(L, 1, &ns, &os);
  int64_t *d = lasc_toint64s(L, 2, &nd, &od);
  if (ns != nd) {
    if (os) free(s);
    if (od) free(d);
    return luaL_error(L, "interval.from_durations: %d starts but %d durations", (int)ns, (int)nd);
  }
  int64_t *e = malloc((ns ? ns : 1) * sizeof *e);
  int rc = -1;
  asc_iset r;
  if (e) {
    for (size_t i = 0; i < ns; i++)
      e[i] = s[i] == ASC_NULL_I64 || d[i] == ASC_NULL_I64 ? ASC_NULL_I64 : s[i] + d[i];
    rc = asc_iset_union(s, e, ns, &r);
  }
  free(e);
  if (os) free(s);
  if (od) free(d);
  if (rc) return oom(L);
  push_iset(L, &r);
  return 1;
}

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

/* set:bounds() -> first start, last end (nil when empty) */
static int m_bounds(lua_State *L) {
  asc_iset *a = check_iset(L, 1);
  if (!a->n) return 0;
  lua_pushinteger(L, a->v[0].s);
  lua_pushinteger(L, a->v[a->n - 1].e);
  return 2;
}

/* set:stats() -> {count, total, max, p50, p95, mean}: statistics of the interval lengths */
static int m_stats(lua_State *L) {
  asc_iset *a = check_iset(L, 1);
  int64_t mx = 0, tot = asc_iset_total(a);
  for (size_t i = 0; i < a->n; i++)
    if (a->v[i].e - a->v[i].s > mx) mx = a->v[i].e - a->v[i].s;
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

int lasc_open_interval(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"union", m_union}, {"intersect", m_intersect},   {"subtract", m_subtract}, {"gaps", m_gaps},
      {"clip", m_clip},   {"total", m_total},           {"get", m_get},           {"bounds", m_bounds},
      {"stats", m_stats}, {"percentile", m_percentile}, {"covers", m_covers},     {"columns", m_columns},
      {NULL, NULL}};
  static const luaL_Reg fns[] = {{"union", l_union}, {"from_durations", l_from_durations}, {NULL, NULL}};
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
