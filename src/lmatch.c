/* Lua binding of the match index. Keys are string columns (compared by interned id), integer
 * columns, or Lua sequences of strings or integers. */
#include <stdlib.h>
#include <string.h>

#include "ascope/match.h"
#include "ascope/stab.h"
#include "ascope/checked.h"
#include "lbind.h"

#define INDEX_MT "ascope.match.index"

static int oom(lua_State *L) { return lasc_oom(L); }

/* Keys as uint64: string ids for strings (through the shared table), values for integers.
 * Pushes the shared table, then the userdata that holds the keys: on the caller's stack the
 * table stays alive, and the ids valid, while the caller works (an index keeps it for as long
 * as the index lives), and the keys are freed with the stack even when a later argument raises. */
static uint64_t *to_keys(lua_State *L, int idx, size_t *n) {
  idx = lua_absindex(L, idx);
  asc_col *c = luaL_testudata(L, idx, ASC_COLUMN_MT);
  if (!c) luaL_checktype(L, idx, LUA_TTABLE);
  asc_strtab *own = c && c->kind == ASC_STR ? lasc_column_strings(L, idx) : NULL;
  asc_strtab *shared = lasc_pushstrings(L);
  size_t m = c ? c->n : (size_t)lua_rawlen(L, idx);
  uint64_t *out = lasc_scratch(L, m, sizeof *out);
  for (size_t i = 0; i < m; i++) {
    if (c && c->kind == ASC_STR) {
      uint32_t id = c->v.s[i];
      if (own != shared && id) {
        size_t len;
        const char *s = asc_strtab_get(own, id, &len);
        if (asc_strtab_intern(shared, s, len, &id)) oom(L);
      }
      out[i] = id;
    } else if (c) {
      out[i] = asc_kind_integer(c->kind) ? (uint64_t)asc_col_int(c, i) : (uint64_t)(int64_t)c->v.f[i];
    } else {
      lua_rawgeti(L, idx, (lua_Integer)i + 1);
      if (lua_type(L, -1) == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        uint32_t id;
        if (asc_strtab_intern(shared, s, len, &id)) oom(L);
        out[i] = id;
      } else {
        out[i] = (uint64_t)lua_tointeger(L, -1);
      }
      lua_pop(L, 1);
    }
  }
  *n = m;
  return out;
}

/* match.index(keys, starts [, durations]) */
static int l_index(lua_State *L) {
  size_t nk, ns, nd = 0;
  lua_settop(L, 3);
  uint64_t *k = to_keys(L, 1, &nk); /* 4: the string table, which the index keeps */
  int64_t *s = lasc_toint64s(L, 2, &ns);
  int64_t *d = lua_isnoneornil(L, 3) ? NULL : lasc_toint64s(L, 3, &nd);
  asc_match_index *ix = lua_newuserdatauv(L, sizeof *ix, 1);
  memset(ix, 0, sizeof *ix);
  luaL_setmetatable(L, INDEX_MT);
  lua_pushvalue(L, 4);
  lua_setiuservalue(L, -2, 1);
  int rc = nk != ns || (d && nd != ns) ? -2 : asc_match_build(ix, k, s, d, ns);
  if (rc == -2) return luaL_error(L, "match.index: keys, starts and durations differ in length");
  if (rc) return oom(L);
  return 1;
}

typedef int64_t (*lookup)(const asc_match_index *, uint64_t, int64_t);

/* One answer of a query, entry `at` of the index (-1: none): 1-based row or null, counted as
 * matched and, when the operator had ended before t, as ended. */
static void put(asc_col *out, size_t i, int64_t at, int64_t t, const asc_match_index *ix,
                lua_Integer *matched, lua_Integer *ended) {
  out->v.i[i] = at < 0 ? ASC_NULL_I64 : asc_match_row(ix, at) + 1;
  if (at < 0) return;
  (*matched)++;
  int64_t end = asc_match_end(ix, at);
  if (end != ASC_NULL_I64 && end < t) (*ended)++;
}

/* Bulk query: a column of 1-based rows of the indexed input (null where nothing matched),
 * the number of matches, and how many of them had ended before their query time
 * (start + dur < t; only known when durations were indexed). */
static int query(lua_State *L, lookup fn) {
  asc_match_index *ix = luaL_checkudata(L, 1, INDEX_MT);
  size_t nk, nt;
  lua_settop(L, 3); /* the converted arrays' holders go above the arguments */
  uint64_t *k = to_keys(L, 2, &nk);
  int64_t *t = lasc_toint64s(L, 3, &nt);
  asc_col out;
  asc_col_init(&out, ASC_I64);
  int rc = nk != nt ? -2 : asc_col_reserve(&out, nt + 1);
  lua_Integer matched = 0, ended = 0;
  if (rc == 0) {
    for (size_t i = 0; i < nt; i++)
      put(&out, i, t[i] == ASC_NULL_I64 ? -1 : fn(ix, k[i], t[i]), t[i], ix, &matched, &ended);
    out.n = nt;
  }
  if (rc == -2) return luaL_error(L, "match: %d keys but %d times", (int)nk, (int)nt);
  if (rc) return oom(L);
  lasc_pushcolumn(L, &out, 0);
  lua_pushinteger(L, matched);
  lua_pushinteger(L, ended);
  return 3;
}

static int m_latest(lua_State *L) { return query(L, asc_match_latest_at); }
static int m_within(lua_State *L) { return query(L, asc_match_within_at); }

/* ix:within_or_latest(keys, times): within where an operator was still running, else latest;
 * the same three results as latest, then how many rows get another row than latest gives, then
 * latest's own three results. One search a row gives both answers, and the keys are converted
 * once: `ascope memory` needs latest and this count on every run. */
static int m_within_or_latest(lua_State *L) {
  asc_match_index *ix = luaL_checkudata(L, 1, INDEX_MT);
  size_t nk, nt;
  lua_settop(L, 3); /* the converted arrays' holders go above the arguments */
  uint64_t *k = to_keys(L, 2, &nk);
  int64_t *t = lasc_toint64s(L, 3, &nt);
  if (nk != nt) return luaL_error(L, "match: %d keys but %d times", (int)nk, (int)nt);
  asc_col init;
  asc_col_init(&init, ASC_I64);
  asc_col *both = lasc_pushcolumn(L, &init, 0); /* on the stack: freed whatever raises */
  if (asc_col_reserve(both, nt + 1)) return oom(L);
  asc_col_init(&init, ASC_I64);
  asc_col *latest = lasc_pushcolumn(L, &init, 0);
  if (asc_col_reserve(latest, nt + 1)) return oom(L);
  lua_Integer bm = 0, be = 0, lm = 0, le = 0, changed = 0;
  for (size_t i = 0; i < nt; i++) {
    int64_t l = -1, w = -1;
    if (t[i] != ASC_NULL_I64) asc_match_both_at(ix, k[i], t[i], &l, &w);
    put(both, i, w >= 0 ? w : l, t[i], ix, &bm, &be);
    put(latest, i, l, t[i], ix, &lm, &le);
    if (w >= 0 && w != l) changed++; /* entries, as rows, are one to one */
  }
  both->n = latest->n = nt;
  lua_pushvalue(L, -2);
  lua_pushinteger(L, bm);
  lua_pushinteger(L, be);
  lua_pushinteger(L, changed);
  lua_pushvalue(L, -5);
  lua_pushinteger(L, lm);
  lua_pushinteger(L, le);
  return 7;
}

/* match.within(keys, starts, durations, qkeys, qtimes): what match.index(keys, starts,
 * durations):within(qkeys, qtimes) answers (a column of 1-based rows, null where no slice holds
 * the time, and the number matched), without building the index: one pass over the slices,
 * memory for the queries only. Keys are integers (an integer column or a sequence). */
static int l_within(lua_State *L) {
  size_t nk, ns, nd, nqk, nqt;
  lua_settop(L, 5);                       /* the converted arrays' holders go above the arguments */
  const asc_col *k = lasc_tointcol(L, 1); /* lane numbers: a U32 column as it is */
  nk = k->n;
  int64_t *s = lasc_toint64s(L, 2, &ns);
  int64_t *d = lasc_toint64s(L, 3, &nd);
  int64_t *qk = lasc_toint64s(L, 4, &nqk);
  int64_t *qt = lasc_toint64s(L, 5, &nqt);
  asc_col out;
  asc_col_init(&out, ASC_I64);
  int rc = nk != ns || nd != ns || nqk != nqt ? -2 : asc_col_reserve(&out, nqt + 1);
  if (rc == 0) rc = asc_stab_within(k, s, d, ns, qk, qt, nqt, out.v.i);
  if (rc) asc_col_free(&out);
  if (rc == -2)
    return luaL_error(L,
                      "match.within: keys, starts and durations, or query keys and times, differ in length");
  if (rc) return oom(L);
  lua_Integer matched = 0;
  for (size_t j = 0; j < nqt; j++) {
    if (out.v.i[j] >= 0) matched++;
    out.v.i[j] = out.v.i[j] < 0 ? ASC_NULL_I64 : out.v.i[j] + 1;
  }
  out.n = nqt;
  lasc_pushcolumn(L, &out, 0);
  lua_pushinteger(L, matched);
  return 2;
}

/* match.last(keys, qkeys): for each query key, the 1-based place of the last of keys equal to
 * it (a column, null where there is none, and the number found). Both are columns of strings
 * or of integers; a missing value is never found. */
static int l_last(lua_State *L) {
  lua_settop(L, 2);
  const asc_col *kc = lasc_checkcolumn(L, 1), *qc = lasc_checkcolumn(L, 2);
  luaL_argcheck(L,
                (kc->kind == ASC_STR) == (qc->kind == ASC_STR) && kc->kind != ASC_F64 && qc->kind != ASC_F64,
                2, "two string columns or two integer columns expected");
  uint64_t none = kc->kind == ASC_STR ? 0 : (uint64_t)ASC_NULL_I64;
  size_t n, m;
  uint64_t *k = to_keys(L, 1, &n);
  uint64_t *q = to_keys(L, 2, &m);
  asc_col out;
  asc_col_init(&out, ASC_I64);
  asc_col *o = lasc_pushcolumn(L, &out, 0); /* on the stack: freed whatever raises */
  if (asc_col_reserve(o, m + 1) || asc_match_last(k, n, q, m, none, o->v.i)) return oom(L);
  lua_Integer found = 0;
  for (size_t j = 0; j < m; j++) {
    if (o->v.i[j] >= 0) found++;
    o->v.i[j] = o->v.i[j] < 0 ? ASC_NULL_I64 : o->v.i[j] + 1;
  }
  o->n = m;
  lua_pushinteger(L, found);
  return 2;
}

static int m_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)((asc_match_index *)luaL_checkudata(L, 1, INDEX_MT))->n);
  return 1;
}

static int m_gc(lua_State *L) {
  asc_match_free(luaL_checkudata(L, 1, INDEX_MT));
  return 0;
}

int lasc_open_match(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"latest", m_latest}, {"within", m_within}, {"within_or_latest", m_within_or_latest}, {NULL, NULL}};
  static const luaL_Reg fns[] = {{"index", l_index}, {"within", l_within}, {"last", l_last}, {NULL, NULL}};
  if (luaL_newmetatable(L, INDEX_MT)) {
    lua_pushcfunction(L, m_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, m_len);
    lua_setfield(L, -2, "__len");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, fns);
  return 1;
}
