/* Lua handle for columns: a userdata holding the C array, read through __index/__len, never
 * copied into Lua tables unless a script asks for it (totable). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/checked.h"
#include "ascope/hash.h"
#include "ascope/label.h"
#include "ascope/idmap.h"
#include "ascope/topgroups.h"
#include "lbind.h"

typedef struct {
  asc_strtab *t;
} strings_ud;

static int strings_gc(lua_State *L) {
  strings_ud *u = luaL_checkudata(L, 1, ASC_STRINGS_MT);
  asc_strtab_free(u->t);
  u->t = NULL;
  return 0;
}

asc_strtab *lasc_checkstrings(lua_State *L, int idx) {
  return ((strings_ud *)luaL_checkudata(L, idx, ASC_STRINGS_MT))->t;
}

static const char STRINGS_KEY = 's';

/* The registry holds the shared table weakly: it lives as long as a column (or a script)
 * holds it, so every live string column shares one table and its ids compare, and once the
 * results that use it are dropped the strings are freed and the next scan starts a new table.
 * Interned strings never outlive the results that use them. */
asc_strtab *lasc_pushstrings(lua_State *L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &STRINGS_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 1, 0);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &STRINGS_KEY);
  }
  if (lua_rawgeti(L, -1, 1) == LUA_TUSERDATA) {
    lua_remove(L, -2);
    return lasc_checkstrings(L, -1);
  }
  lua_pop(L, 1);
  strings_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->t = NULL;
  luaL_setmetatable(L, ASC_STRINGS_MT);
  if (!(u->t = asc_strtab_new())) lasc_oom(L);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, 1);
  lua_remove(L, -2);
  return u->t;
}

static int strings_info(lua_State *L) {
  asc_strtab *t = lasc_checkstrings(L, 1);
  lua_pushinteger(L, asc_strtab_count(t));
  lua_pushinteger(L, (lua_Integer)asc_strtab_bytes(t));
  return 2;
}

static int strings_intern(lua_State *L) {
  asc_strtab *t = lasc_checkstrings(L, 1);
  size_t n;
  const char *s = luaL_checklstring(L, 2, &n);
  uint32_t id;
  if (asc_strtab_intern(t, s, n, &id)) return lasc_oom(L);
  lua_pushinteger(L, id);
  return 1;
}

static int strings_get(lua_State *L) {
  asc_strtab *t = lasc_checkstrings(L, 1);
  size_t n;
  const char *s = asc_strtab_get(t, (uint32_t)luaL_checkinteger(L, 2), &n);
  if (s)
    lua_pushlstring(L, s, n);
  else
    lua_pushnil(L);
  return 1;
}

/* ---- columns ---- */

typedef struct {
  asc_col c;
} column_ud;

asc_col *lasc_checkcolumn(lua_State *L, int idx) {
  return &((column_ud *)luaL_checkudata(L, idx, ASC_COLUMN_MT))->c;
}

asc_col *lasc_pushcolumn(lua_State *L, asc_col *moved, int strings_idx) {
  if (strings_idx) strings_idx = lua_absindex(L, strings_idx);
  column_ud *u = lua_newuserdatauv(L, sizeof *u, 1);
  u->c = *moved;
  asc_col_init(moved, moved->kind);
  luaL_setmetatable(L, ASC_COLUMN_MT);
  if (u->c.kind == ASC_STR) {
    if (strings_idx)
      lua_pushvalue(L, strings_idx);
    else
      lasc_pushstrings(L);
    lua_setiuservalue(L, -2, 1);
  }
  return &u->c;
}

asc_strtab *lasc_column_strings(lua_State *L, int idx) {
  asc_strtab *t = NULL;
  if (lua_getiuservalue(L, idx, 1) == LUA_TUSERDATA) t = lasc_checkstrings(L, -1);
  lua_pop(L, 1);
  return t;
}

void lasc_pushcell(lua_State *L, const asc_col *c, const asc_strtab *st, size_t i) {
  switch (c->kind) {
  case ASC_I64:
  case ASC_U32: {
    int64_t x = asc_col_int(c, i);
    if (x == ASC_NULL_I64)
      lua_pushnil(L);
    else
      lua_pushinteger(L, x);
    break;
  }
  case ASC_F64:
    if (isnan(c->v.f[i]))
      lua_pushnil(L);
    else
      lua_pushnumber(L, c->v.f[i]);
    break;
  case ASC_STR: {
    size_t n;
    const char *s = st ? asc_strtab_get(st, c->v.s[i], &n) : NULL;
    if (s)
      lua_pushlstring(L, s, n);
    else
      lua_pushnil(L);
    break;
  }
  }
}

static size_t check_row(lua_State *L, const asc_col *c, int idx) {
  lua_Integer i = luaL_checkinteger(L, idx);
  luaL_argcheck(L, i >= 1 && (size_t)i <= c->n, idx, "row out of range");
  return (size_t)i - 1;
}

static int col_get(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  lasc_pushcell(L, c, c->kind == ASC_STR ? lasc_column_strings(L, 1) : NULL, check_row(L, c, 2));
  return 1;
}

static int col_id(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  luaL_argcheck(L, c->kind == ASC_STR, 1, "not a string column");
  lua_pushinteger(L, c->v.s[check_row(L, c, 2)]);
  return 1;
}

static int col_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lasc_checkcolumn(L, 1)->n);
  return 1;
}

static int col_kind(lua_State *L) {
  lua_pushstring(L, asc_kind_name(lasc_checkcolumn(L, 1)->kind));
  return 1;
}

static int col_totable(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  asc_strtab *st = c->kind == ASC_STR ? lasc_column_strings(L, 1) : NULL;
  lua_createtable(L, (int)c->n, 0);
  for (size_t i = 0; i < c->n; i++) {
    lasc_pushcell(L, c, st, i);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int is_null(const asc_col *c, size_t i) {
  return asc_kind_integer(c->kind) ? asc_col_int(c, i) == ASC_NULL_I64
         : c->kind == ASC_F64      ? isnan(c->v.f[i])
                                   : c->v.s[i] == 0;
}

/* count of non-null, sum, min, max over numeric columns */
static int col_stats(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  luaL_argcheck(L, c->kind != ASC_STR, 1, "not a numeric column");
  size_t k = 0;
  if (asc_kind_integer(c->kind)) {
    __int128 sum = 0; /* sums of ns timestamps overflow int64 */
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    for (size_t i = 0; i < c->n; i++) {
      int64_t x = asc_col_int(c, i);
      if (x == ASC_NULL_I64) continue;
      k++, sum += x;
      if (x < mn) mn = x;
      if (x > mx) mx = x;
    }
    lua_pushinteger(L, (lua_Integer)k);
    if (sum >= INT64_MIN && sum <= INT64_MAX)
      lua_pushinteger(L, (lua_Integer)sum);
    else
      lua_pushnumber(L, (double)sum);
    if (k)
      lua_pushinteger(L, mn), lua_pushinteger(L, mx);
    else
      lua_pushnil(L), lua_pushnil(L);
  } else {
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < c->n; i++) {
      double x = c->v.f[i];
      if (isnan(x)) continue;
      k++, sum += x;
      if (x < mn) mn = x;
      if (x > mx) mx = x;
    }
    lua_pushinteger(L, (lua_Integer)k);
    lua_pushnumber(L, sum);
    if (k)
      lua_pushnumber(L, mn), lua_pushnumber(L, mx);
    else
      lua_pushnil(L), lua_pushnil(L);
  }
  return 4;
}

/* Stable ascending order of rows as a column of 1-based row numbers; nulls last. */
static int cmp_rows(const void *a, const void *b, void *ud) {
  const asc_col *sort_col = ud;
  int64_t i = *(const int64_t *)a - 1, j = *(const int64_t *)b - 1;
  int ni = is_null(sort_col, (size_t)i), nj = is_null(sort_col, (size_t)j);
  if (ni != nj) return ni - nj;
  if (!ni) {
    if (asc_kind_integer(sort_col->kind)) {
      int64_t x = asc_col_int(sort_col, (size_t)i), y = asc_col_int(sort_col, (size_t)j);
      if (x != y) return x < y ? -1 : 1;
    } else if (sort_col->kind == ASC_F64) {
      double x = sort_col->v.f[i], y = sort_col->v.f[j];
      if (x != y) return x < y ? -1 : 1;
    } else {
      uint32_t x = sort_col->v.s[i], y = sort_col->v.s[j];
      if (x != y) return x < y ? -1 : 1;
    }
  }
  return i < j ? -1 : i > j;
}

static int col_order(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  asc_col out;
  asc_col_init(&out, ASC_I64);
  if (asc_col_reserve(&out, c->n ? c->n : 1)) return lasc_oom(L);
  for (size_t i = 0; i < c->n; i++) out.v.i[i] = (int64_t)i + 1;
  out.n = c->n;
  qsort_r(out.v.i, out.n, sizeof(int64_t), cmp_rows, c);
  lasc_pushcolumn(L, &out, 0);
  return 1;
}

/* A new column with the rows named by a column or table of 1-based row numbers. */
static int col_take(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  const asc_col *rows = lasc_tointcol(L, 2); /* 3: kept until the call returns */
  size_t n = rows->n;
  asc_col out;
  asc_col_init(&out, c->kind);
  if (asc_col_reserve(&out, n ? n : 1)) {
    return lasc_oom(L);
  }
  size_t w = asc_kind_size(c->kind);
  for (size_t k = 0; k < n; k++) {
    int64_t r = asc_col_int(rows, k);
    if (r == ASC_NULL_I64) { /* no row: a missing value */
      if (c->kind == ASC_I64)
        out.v.i[k] = ASC_NULL_I64;
      else if (c->kind == ASC_F64)
        out.v.f[k] = NAN;
      else if (c->kind == ASC_U32)
        out.v.u[k] = ASC_NULL_U32;
      else
        out.v.s[k] = 0;
      continue;
    }
    if (r < 1 || (size_t)r > c->n) {
      asc_col_free(&out);
      return luaL_error(L, "take: row %d out of range", (int)r);
    }
    memcpy((char *)out.v.p + k * w, (char *)c->v.p + (size_t)(r - 1) * w, w);
  }
  out.n = n;
  lua_getiuservalue(L, 1, 1);
  lasc_pushcolumn(L, &out, lua_isnil(L, -1) ? 0 : -1);
  return 1;
}

static int num_at(const asc_col *c, size_t i, double *out);

/* column.downsample(x, y, order, pixels) -> xs, ys: the points (x[r], y[r]) for the rows r of
 * order (a column of 1-based rows, in x order; nil: every row), reduced to the lowest and the
 * highest y of each of `pixels` equal x buckets, in order, as Lua lists. Rows where x or y is
 * missing are skipped. A chart of a million points then draws a few thousand. */
static int column_downsample(lua_State *L) {
  asc_col *x = lasc_checkcolumn(L, 1), *y = lasc_checkcolumn(L, 2);
  lua_Integer pixels = luaL_checkinteger(L, 4);
  lua_settop(L, 4); /* the order's holder goes above the arguments */
  const asc_col *order = lua_isnoneornil(L, 3) ? NULL : lasc_tointcol(L, 3); /* read in place */
  size_t n = order ? order->n : x->n;
  if (x->n != y->n || x->kind == ASC_STR || y->kind == ASC_STR) {
    return luaL_error(L, "column.downsample: numeric columns of one length expected");
  }
  double x0 = 0, x1 = 0;
  int have = 0;
  for (size_t k = 0; k < n; k++) {
    size_t r = order ? (size_t)asc_col_int(order, k) - 1 : k;
    double xv, yv;
    if (r >= x->n || !num_at(x, r, &xv) || !num_at(y, r, &yv)) continue;
    if (!have || xv < x0) x0 = xv;
    if (!have || xv > x1) x1 = xv;
    have = 1;
  }
  lua_newtable(L);
  lua_newtable(L);
  int tx = lua_gettop(L) - 1, ty = tx + 1;
  lua_Integer out = 0;
  double span = x1 > x0 ? x1 - x0 : 1;
  long long cur = -1;
  size_t lo = 0, hi = 0;
  double lov = 0, hiv = 0;
#define EMIT(row)                                                                                            \
  do {                                                                                                       \
    double ex_ = 0, ey_ = 0;                                                                                 \
    num_at(x, (row), &ex_);                                                                                  \
    num_at(y, (row), &ey_);                                                                                  \
    lua_pushnumber(L, ex_);                                                                                  \
    lua_rawseti(L, tx, ++out);                                                                               \
    lua_pushnumber(L, ey_);                                                                                  \
    lua_rawseti(L, ty, out);                                                                                 \
  } while (0)
  for (size_t k = 0; have && k <= n; k++) {
    size_t r = 0;
    double xv = 0, yv = 0;
    int ok = 0;
    if (k < n) {
      r = order ? (size_t)asc_col_int(order, k) - 1 : k;
      ok = r < x->n && num_at(x, r, &xv) && num_at(y, r, &yv);
      if (!ok) continue;
    }
    long long col = k < n ? (long long)((xv - x0) / span * (double)pixels) : -2;
    if (col >= pixels) col = pixels - 1;
    if (col != cur) {
      if (cur >= 0) {
        size_t a = lo < hi ? lo : hi, b = lo < hi ? hi : lo; /* keep x order */
        EMIT(a);
        if (b != a) EMIT(b);
      }
      cur = col;
      lo = hi = r;
      lov = hiv = yv;
    } else {
      if (yv < lov) lov = yv, lo = r;
      if (yv > hiv) hiv = yv, hi = r;
    }
  }
#undef EMIT
  return 2;
}

static int col_push(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  int r;
  if (lua_isnoneornil(L, 2)) {
    r = asc_col_push_null(c);
  } else if (c->kind == ASC_I64) {
    r = asc_col_push_i64(c, luaL_checkinteger(L, 2));
  } else if (c->kind == ASC_U32) {
    lua_Integer x = luaL_checkinteger(L, 2);
    luaL_argcheck(L, x >= 0 && (uint64_t)x < ASC_NULL_U32, 2, "out of range for a row or group column");
    r = asc_col_push_u32(c, (uint32_t)x);
  } else if (c->kind == ASC_F64) {
    r = asc_col_push_f64(c, luaL_checknumber(L, 2));
  } else {
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    asc_strtab *st = lasc_column_strings(L, 1);
    uint32_t id;
    r = asc_strtab_intern(st, s, n, &id) || asc_col_push_str(c, id);
  }
  if (r) return lasc_oom(L);
  return 0;
}

asc_idmap *lasc_push_idmap(lua_State *L, size_t nstr, size_t n, size_t *slots) {
  if (!asc_idmap_wanted(nstr, n)) return NULL;
  size_t bytes = asc_idmap_bytes(n);
  if (bytes == SIZE_MAX || bytes > SIZE_MAX - sizeof(asc_idmap)) luaL_error(L, "too many rows");
  asc_idmap *map = lasc_scratch(L, 1, sizeof *map + bytes);
  asc_idmap_init(map, map + 1, n);
  *slots = n + 1;
  return map;
}

/* col:map(fn) for a string column: fn is called once per distinct string and the results
 * (nil, integers, numbers or strings; one kind) form a new column of the same length. When
 * every result is nil the column stays a string column: a map of strings that finds nothing
 * is still a column of (missing) strings, which group keys and writers expect. Each distinct
 * id's result is kept in C (by id, or by its number in an idmap when the table is much larger
 * than the column), so a row costs a lookup, not a Lua table access and a string's hash; fn
 * adding rows to the column it maps is an error. */
typedef struct {
  unsigned char seen, missing;
  union {
    int64_t i;
    double d;
    uint32_t s;
  } v;
} map_memo;

/* The first result (at the top of the stack) decides the out column's kind; the rows so far
 * were all missing. Room for all `rows` is reserved. */
static int map_kind(lua_State *L, asc_col *out, int t, size_t rows) {
  int kind = t == LUA_TSTRING ? ASC_STR : lua_isinteger(L, -1) ? ASC_I64 : ASC_F64;
  size_t k = out->n;
  asc_col_free(out);
  asc_col_init(out, (asc_kind)kind);
  if (asc_col_reserve(out, rows ? rows : 1)) return -1;
  for (size_t j = 0; j < k; j++)
    if (asc_col_push_null(out)) return -1;
  return 0;
}

static int col_map(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  luaL_argcheck(L, c->kind == ASC_STR, 1, "map works on string columns");
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  asc_strtab *st = lasc_column_strings(L, 1);
  asc_col empty;
  asc_col_init(&empty, ASC_I64);
  asc_col *out = lasc_pushcolumn(L, &empty, 0); /* 3: owned by Lua even if fn raises */
  asc_strtab *shared = lasc_pushstrings(L);     /* 4 */
  size_t nstr = (size_t)asc_strtab_count(st) + 1, slots = nstr, bytes;
  asc_idmap *map = lasc_push_idmap(L, nstr, c->n, &slots); /* 5: the map, when wanted */
  if (asc_size_mul(slots, sizeof(map_memo), &bytes)) return luaL_error(L, "map: too many strings");
  map_memo *memo = lasc_scratch(L, 1, bytes);
  memset(memo, 0, bytes);
  int kind = -1;
  if (asc_col_reserve(out, c->n ? c->n : 1)) return lasc_oom(L);
  for (size_t i = 0; i < c->n; i++) {
    uint32_t id = c->v.s[i];
    map_memo *m = NULL;
    if (id && id < nstr) {
      m = &memo[map ? asc_idmap_number(map, id) : id];
      if (!m->seen) {
        size_t len;
        const char *s = asc_strtab_get(st, id, &len);
        lua_pushvalue(L, 2);
        lua_pushlstring(L, s, len);
        size_t rows = c->n;
        lua_call(L, 1, 1);
        /* the memo and the map are sized by the rows there were: fn must not add any */
        if (c->n != rows) return luaL_error(L, "map: the function added rows to the column it maps");
        int t = lua_type(L, -1);
        m->seen = 1;
        m->missing = t == LUA_TNIL || t == LUA_TBOOLEAN; /* a boolean is no value, as ever */
        if (!m->missing && kind < 0) {
          if (map_kind(L, out, t, c->n)) return lasc_oom(L);
          kind = out->kind;
        }
        if (m->missing) {
          /* nothing to keep */
        } else if (out->kind == ASC_STR) {
          size_t rn;
          const char *r = luaL_checklstring(L, -1, &rn);
          if (asc_strtab_intern(shared, r, rn, &m->v.s)) return lasc_oom(L);
        } else if (out->kind == ASC_I64) {
          if (!lua_isinteger(L, -1)) return luaL_error(L, "map: results of different kinds");
          m->v.i = lua_tointeger(L, -1);
        } else {
          m->v.d = luaL_checknumber(L, -1);
        }
        lua_pop(L, 1);
      }
    }
    int r;
    if (!m || m->missing)
      r = asc_col_push_null(out);
    else if (out->kind == ASC_STR)
      r = asc_col_push_str(out, m->v.s);
    else if (out->kind == ASC_I64)
      r = asc_col_push_i64(out, m->v.i);
    else
      r = asc_col_push_f64(out, m->v.d);
    if (r) return lasc_oom(L);
  }
  if (kind < 0 && map_kind(L, out, LUA_TSTRING, c->n)) return lasc_oom(L); /* all missing: strings */
  if (out->kind == ASC_STR) {
    lua_pushvalue(L, 4);
    lua_setiuservalue(L, 3, 1);
  }
  lua_pushvalue(L, 3);
  return 1;
}

static int col_gc(lua_State *L) {
  asc_col_free(lasc_checkcolumn(L, 1));
  return 0;
}

static int col_tostring(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  lua_pushfstring(L, "column<%s>(%d rows)", asc_kind_name(c->kind), (int)c->n);
  return 1;
}

static int col_index(lua_State *L) {
  if (lua_type(L, 2) == LUA_TNUMBER) {
    asc_col *c = lasc_checkcolumn(L, 1);
    lua_Integer i = lua_tointeger(L, 2);
    if (i < 1 || (size_t)i > c->n) return lua_pushnil(L), 1;
    lasc_pushcell(L, c, c->kind == ASC_STR ? lasc_column_strings(L, 1) : NULL, (size_t)i - 1);
    return 1;
  }
  luaL_getmetatable(L, ASC_COLUMN_MT);
  lua_getfield(L, -1, "methods");
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

void *lasc_newarray(lua_State *L, size_t n, size_t size) {
  size_t bytes;
  if (asc_size_mul(n ? n : 1, size, &bytes)) lasc_oom(L);
  return lua_newuserdatauv(L, bytes, 0);
}

#define SCRATCH_MT "ascope.scratch"

static int scratch_free(lua_State *L) {
  void **box = luaL_checkudata(L, 1, SCRATCH_MT);
  free(*box);
  *box = NULL;
  return 0;
}

void *lasc_scratch(lua_State *L, size_t n, size_t size) {
  size_t bytes;
  if (asc_size_mul(n ? n : 1, size, &bytes)) lasc_oom(L);
  void **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  if (luaL_newmetatable(L, SCRATCH_MT)) {
    lua_pushcfunction(L, scratch_free);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, scratch_free);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_toclose(L, -1);
  if (!(*box = malloc(bytes))) lasc_oom(L);
  /* counted as the collector counts a userdata of that size: its pace follows what is
   * allocated, and scratch it did not see let the Lua heap's own garbage grow (`ascope
   * timeline` on the 1 GiB bench trace: 5 MB more at its peak) */
  size_t kib = bytes >> 10;
  if (kib) lua_gc(L, LUA_GCSTEP, kib > INT_MAX ? INT_MAX : (int)kib);
  return *box;
}

int64_t *lasc_toint64s(lua_State *L, int idx, size_t *n) {
  idx = lua_absindex(L, idx);
  asc_col *c = luaL_testudata(L, idx, ASC_COLUMN_MT);
  if (c && c->kind == ASC_I64) {
    lua_pushvalue(L, idx); /* the column keeps its values */
    *n = c->n;
    return c->v.i;
  }
  if (c) {
    /* a string column's ids are not its values: read as numbers they would be rows or times
     * that mean nothing */
    if (c->kind == ASC_STR) luaL_argerror(L, idx, "a string column where numbers are expected");
    int64_t *out = lasc_newarray(L, c->n, sizeof *out);
    for (size_t i = 0; i < c->n; i++)
      out[i] = c->kind == ASC_F64 ? asc_f64_to_i64(c->v.f[i]) : asc_col_int(c, i);
    *n = c->n;
    return out;
  }
  luaL_checktype(L, idx, LUA_TTABLE);
  size_t m = (size_t)lua_rawlen(L, idx);
  int64_t *out = lasc_newarray(L, m, sizeof *out);
  for (size_t i = 0; i < m; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    int isint;
    lua_Integer v = lua_tointegerx(L, -1, &isint);
    if (!isint) {
      if (lua_isnil(L, -1))
        v = ASC_NULL_I64;
      else if (lua_type(L, -1) == LUA_TNUMBER)
        v = asc_f64_to_i64(lua_tonumber(L, -1));
      else
        luaL_error(L, "bad argument #%d: element %d is not a number", idx, (int)i + 1);
    }
    out[i] = v;
    lua_pop(L, 1);
  }
  *n = m;
  return out;
}

const asc_col *lasc_tointcol(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  asc_col *c = luaL_testudata(L, idx, ASC_COLUMN_MT);
  if (c && asc_kind_integer(c->kind)) {
    lua_pushvalue(L, idx); /* the column keeps its values */
    return c;
  }
  size_t n;
  int64_t *v = lasc_toint64s(L, idx, &n); /* pushes the converted values' holder */
  asc_col tmp;
  asc_col_init(&tmp, ASC_I64);
  asc_col *out = lasc_pushcolumn(L, &tmp, 0);
  if (asc_col_reserve(out, n + 1)) lasc_oom(L);
  if (n) memcpy(out->v.i, v, n * sizeof *v);
  out->n = n;
  lua_remove(L, -2); /* the holder: the column has the values now */
  return out;
}

static int buf_gc(lua_State *L) {
  lasc_buf *b = lua_touserdata(L, 1);
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
  return 0;
}

lasc_buf *lasc_newbuf(lua_State *L) {
  lasc_buf *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->p = NULL;
  b->n = b->cap = 0;
  if (luaL_newmetatable(L, "ascope.buf")) {
    lua_pushcfunction(L, buf_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

void lasc_addl(lua_State *L, lasc_buf *b, const char *s, size_t n) {
  if (n == 0) return; /* an empty piece may come with a NULL pointer */
  if (b->n + n > b->cap) {
    size_t nc = b->cap ? b->cap : 256;
    while (b->n + n > nc) nc *= 2;
    char *p = realloc(b->p, nc);
    if (!p) lasc_oom(L);
    b->p = p;
    b->cap = nc;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

void lasc_adds(lua_State *L, lasc_buf *b, const char *s) { lasc_addl(L, b, s, strlen(s)); }

void lasc_addc(lua_State *L, lasc_buf *b, char c) { lasc_addl(L, b, &c, 1); }

int lasc_progress_init(lua_State *L, int opts, lasc_progress *p) {
  lua_getfield(L, opts, "progress");
  p->L = L;
  p->fn = lua_gettop(L);
  lua_pushnil(L);
  p->err = lua_gettop(L);
  p->failed = 0;
  return lua_isfunction(L, p->fn);
}

int lasc_progress_call(void *ud, long long done, long long total) {
  lasc_progress *p = ud;
  if (p->failed) return 1;
  lua_pushvalue(p->L, p->fn);
  lua_pushinteger(p->L, done);
  lua_pushinteger(p->L, total);
  if (lua_pcall(p->L, 2, 1, 0) != LUA_OK) {
    lua_replace(p->L, p->err);
    p->failed = 1;
    return 1;
  }
  int stop = lua_type(p->L, -1) == LUA_TSTRING;
  lua_pop(p->L, 1);
  return stop;
}

void lasc_progress_rethrow(lasc_progress *p) {
  if (!p->failed) return;
  lua_pushvalue(p->L, p->err);
  lua_error(p->L);
}

/* column.concat({col, col, ...}) -> one column with the rows of all, in order (same kind) */
static int column_concat(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer k = (lua_Integer)lua_rawlen(L, 1);
  luaL_argcheck(L, k >= 1, 1, "no columns to concatenate");
  size_t total = 0;
  asc_kind kind = ASC_I64;
  for (lua_Integer i = 1; i <= k; i++) {
    lua_rawgeti(L, 1, i);
    asc_col *c = lasc_checkcolumn(L, -1);
    if (i == 1 || (asc_kind_integer(c->kind) && asc_kind_integer(kind) && !total))
      kind = c->kind; /* empty integer columns before it do not decide the kind */
    else if (asc_kind_integer(c->kind) && asc_kind_integer(kind))
      kind = c->kind == kind || !c->n ? kind : ASC_I64; /* rows with integers: the wider kind */
    else if (c->kind != kind)
      return luaL_error(L, "column.concat: columns of different kinds");
    if (kind == ASC_STR && lasc_column_strings(L, -1) != lasc_pushstrings(L))
      return luaL_error(L, "column.concat: string columns from another string table");
    if (kind == ASC_STR) lua_pop(L, 1);
    total += c->n;
    lua_pop(L, 1);
  }
  asc_col out;
  asc_col_init(&out, kind);
  if (asc_col_reserve(&out, total + 1)) return lasc_oom(L);
  size_t w = asc_kind_size(kind);
  for (lua_Integer i = 1; i <= k; i++) {
    lua_rawgeti(L, 1, i);
    asc_col *c = lasc_checkcolumn(L, -1);
    if (c->kind != kind) /* a U32 column widened */
      for (size_t j = 0; j < c->n; j++) out.v.i[out.n + j] = asc_col_int(c, j);
    else if (c->n)
      memcpy((char *)out.v.p + out.n * w, c->v.p, c->n * w);
    out.n += c->n;
    lua_pop(L, 1);
  }
  lasc_pushcolumn(L, &out, 0);
  return 1;
}

/* column.fill(kind, value, n): n copies of one value (nil for missing) */
static int column_fill(lua_State *L) {
  static const char *const kinds[] = {"integer", "number", "string", NULL};
  asc_col c;
  asc_col_init(&c, (asc_kind)luaL_checkoption(L, 1, NULL, kinds));
  lua_Integer n = luaL_checkinteger(L, 3);
  luaL_argcheck(L, n >= 0, 3, "negative count");
  if (asc_col_reserve(&c, (size_t)n + 1)) return lasc_oom(L);
  int null = lua_isnil(L, 2);
  int64_t iv = ASC_NULL_I64;
  double fv = NAN;
  uint32_t sv = 0;
  if (!null && c.kind == ASC_I64) iv = luaL_checkinteger(L, 2);
  if (!null && c.kind == ASC_F64) fv = luaL_checknumber(L, 2);
  if (!null && c.kind == ASC_STR) {
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);
    asc_strtab *st = lasc_pushstrings(L); /* stays on the stack until the column holds it */
    if (asc_strtab_intern(st, s, len, &sv)) return lasc_oom(L);
  }
  for (lua_Integer i = 0; i < n; i++) {
    if (c.kind == ASC_I64)
      c.v.i[i] = iv;
    else if (c.kind == ASC_F64)
      c.v.f[i] = fv;
    else
      c.v.s[i] = sv;
  }
  c.n = (size_t)n;
  lasc_pushcolumn(L, &c, 0);
  return 1;
}

static int num_at(const asc_col *c, size_t i, double *out) {
  if (asc_kind_integer(c->kind)) {
    int64_t x = asc_col_int(c, i);
    if (x == ASC_NULL_I64) return 0;
    *out = (double)x;
  } else if (c->kind == ASC_F64) {
    if (isnan(c->v.f[i])) return 0;
    *out = c->v.f[i];
  } else {
    return 0;
  }
  return 1;
}

/* the text a group ranks by: its key, or `none` for the group without one */
typedef struct {
  asc_strtab *st;
  const char *none;
  size_t none_len;
  const asc_idmap *map; /* the groups are the map's numbers, not string ids (NULL: ids) */
} group_names;

static uint32_t group_id(const group_names *g, size_t k) {
  return g->map && k ? g->map->ids[k - 1] : (uint32_t)k;
}

static const char *group_name(void *ud, size_t k, size_t *len) {
  const group_names *g = ud;
  const char *s = k && g->st ? asc_strtab_get(g->st, group_id(g, k), len) : NULL;
  if (s) return s;
  *len = g->none_len;
  return g->none;
}

/* column.group_sum(keys, values, opts) sums values by key over the rows that pass the filters:
 *   positive = col  (col > 0)      negative = col  (col < 0)      missing = col  (col has no value)
 *   alive_at = {starts, durations, t}  (start <= t < start + duration; no duration = still alive)
 *   rows = col  (an integer column of 1-based rows: only these, e.g. the rows of one pool)
 * keys is a string column or nil (one group). Returns a list of {key, sum, count} (key nil for
 * rows without a key) and the totals sum, count. Rows whose value is missing are left out.
 * With top = N the list holds only the N first groups in rank order (larger sum, then smaller
 * key, then first seen; the group without a key ranks by the text none = "..."), and after the
 * totals come the number of groups and the sum and count of the group without a key: no Lua
 * table or string is made for the other groups. key_max = B cuts the keys of the list to
 * labels of at most B bytes (see ascope/label.h). */
static int column_group_sum(lua_State *L) {
  /* with every option its columns, scratch and results pass the 20 slots Lua promises */
  luaL_checkstack(L, 32, "column.group_sum");
  asc_col *keys = lua_isnil(L, 1) ? NULL : lasc_checkcolumn(L, 1);
  asc_col *vals = lasc_checkcolumn(L, 2);
  luaL_argcheck(L, !keys || keys->kind == ASC_STR, 1, "keys must be a string column");
  luaL_argcheck(L, !keys || keys->n == vals->n, 1, "keys and values differ in length");
  asc_col *pos = NULL, *neg = NULL, *miss = NULL, *st = NULL, *du = NULL, *only = NULL;
  int64_t t = 0;
  lua_Integer top = -1, key_max = -1;
  group_names names = {NULL, "", 0, NULL};
  if (lua_istable(L, 3)) {
    if (lua_getfield(L, 3, "top") != LUA_TNIL) {
      top = luaL_checkinteger(L, -1);
      luaL_argcheck(L, top >= 0, 3, "top must not be negative");
    }
    if (lua_getfield(L, 3, "key_max") != LUA_TNIL) {
      key_max = luaL_checkinteger(L, -1);
      luaL_argcheck(L, key_max >= 0, 3, "key_max must not be negative");
    }
    if (lua_getfield(L, 3, "none") != LUA_TNIL) names.none = luaL_checklstring(L, -1, &names.none_len);
    if (lua_getfield(L, 3, "rows") != LUA_TNIL) only = lasc_checkcolumn(L, -1);
    luaL_argcheck(L, !only || asc_kind_integer(only->kind), 3, "rows must be an integer column");
    if (lua_getfield(L, 3, "positive") != LUA_TNIL) pos = lasc_checkcolumn(L, -1);
    if (lua_getfield(L, 3, "negative") != LUA_TNIL) neg = lasc_checkcolumn(L, -1);
    if (lua_getfield(L, 3, "missing") != LUA_TNIL) miss = lasc_checkcolumn(L, -1);
    if (lua_getfield(L, 3, "alive_at") == LUA_TTABLE) {
      lua_rawgeti(L, -1, 1);
      st = lasc_checkcolumn(L, -1);
      lua_rawgeti(L, -2, 2);
      du = lasc_checkcolumn(L, -1);
      lua_rawgeti(L, -3, 3);
      t = luaL_checkinteger(L, -1);
      luaL_argcheck(L, st->kind == ASC_I64 && du->kind == ASC_I64, 3, "alive_at needs integer columns");
    }
  }
  size_t n = vals->n;
  if ((pos && pos->n != n) || (neg && neg->n != n) || (miss && miss->n != n) ||
      (st && (st->n != n || du->n != n)))
    return luaL_error(L, "group_sum: columns differ in length");
  size_t nrows = only ? only->n : n, nk = 1;
  asc_idmap map;
  if (keys) nk = (size_t)asc_strtab_count(lasc_column_strings(L, 1)) + 1;
  if (keys && top >= 0 && asc_idmap_wanted(nk, nrows)) { /* groups by first meeting: only the top is listed */
    size_t bytes = asc_idmap_bytes(nrows);
    if (bytes == SIZE_MAX) return luaL_error(L, "group_sum: too many rows");
    asc_idmap_init(&map, lasc_scratch(L, 1, bytes), nrows);
    names.map = &map;
    nk = nrows + 1;
  }
  double *sum = lasc_scratch(L, nk, sizeof *sum);
  int64_t *cnt = lasc_scratch(L, nk, sizeof *cnt);
  memset(sum, 0, nk * sizeof *sum);
  memset(cnt, 0, nk * sizeof *cnt);
  double total = 0;
  lua_Integer total_n = 0;
  for (size_t j = 0; j < nrows; j++) {
    size_t i = j;
    if (only) {
      int64_t r = asc_col_int(only, j);
      if (r < 1 || (uint64_t)r > n) return luaL_error(L, "group_sum: row %d out of range", (int)r);
      i = (size_t)r - 1;
    }
    double v, x;
    if (!num_at(vals, i, &v)) continue;
    if (pos && !(num_at(pos, i, &x) && x > 0)) continue;
    if (neg && !(num_at(neg, i, &x) && x < 0)) continue;
    if (miss && !is_null(miss, i)) continue;
    if (st) {
      int64_t s0 = st->v.i[i], d = du->v.i[i];
      if (s0 == ASC_NULL_I64 || s0 > t || (d != ASC_NULL_I64 && s0 + d <= t)) continue;
    }
    uint32_t k = !keys ? 0 : names.map ? asc_idmap_number(&map, keys->v.s[i]) : keys->v.s[i];
    sum[k] += v;
    cnt[k]++;
    total += v;
    total_n++;
  }
  names.st = keys ? lasc_column_strings(L, 1) : NULL;
  if (names.map) nk = (size_t)map.n + 1;
  size_t *picked = NULL, npicked = nk;
  if (top >= 0) {
    size_t room = (uint64_t)top < nk ? (size_t)top : nk, bytes;
    if (asc_size_mul(room ? room : 1, sizeof *picked, &bytes))
      return luaL_error(L, "group_sum: top too large");
    picked = lua_newuserdatauv(L, bytes, 0);
    npicked = asc_top_groups(sum, cnt, nk, room, group_name, &names, picked);
  }
  lua_newtable(L);
  lua_Integer m = 0, groups = 0;
  for (size_t j = 0; j < npicked; j++) {
    size_t k = picked ? picked[j] : j;
    if (!cnt[k]) continue;
    lua_createtable(L, 0, 3);
    if (k) {
      size_t len;
      const char *s = asc_strtab_get(names.st, group_id(&names, k), &len);
      size_t keep = key_max >= 0 ? asc_label_cut(s, len, (size_t)key_max) : len;
      lua_pushlstring(L, s, keep);
      if (keep < len) {
        lua_pushliteral(L, ASC_LABEL_MORE);
        lua_concat(L, 2);
      }
      lua_setfield(L, -2, "key");
    }
    lua_pushnumber(L, sum[k]);
    lua_setfield(L, -2, "sum");
    lua_pushinteger(L, (lua_Integer)cnt[k]);
    lua_setfield(L, -2, "count");
    lua_rawseti(L, -2, ++m);
  }
  lua_pushnumber(L, total);
  lua_pushinteger(L, total_n);
  if (top < 0) return 3;
  for (size_t k = 0; k < nk; k++) groups += cnt[k] != 0;
  lua_pushinteger(L, groups);
  if (cnt[0])
    lua_pushnumber(L, sum[0]);
  else
    lua_pushinteger(L, 0); /* no such group: the integer 0 a count of nothing is */
  lua_pushinteger(L, (lua_Integer)cnt[0]);
  return 6;
}

/* Is row i of `by` before row j (a smaller value; a missing one is after every value)? Integer
 * columns compare as integers: nanosecond times are past a double's exact range. */
static int before(const asc_col *by, size_t i, size_t j) {
  if (asc_kind_integer(by->kind)) {
    int64_t a = asc_col_int(by, i), b = asc_col_int(by, j);
    return a != ASC_NULL_I64 && (b == ASC_NULL_I64 || a < b);
  }
  double a, b;
  return num_at(by, i, &a) && (!num_at(by, j, &b) || a < b);
}

/* col:argmax([rows [, present [, earliest]]]) -> row of the largest value and the value; nil if
 * none. rows: an integer column of 1-based rows to look at (default all). present: a column as
 * long as col; a row where it has no value is not looked at (a total whose instant is missing).
 * Of equal values, the row with the smallest `earliest` value (a column as long as col: the
 * instant a total was seen) is taken, else the first in the order of rows: a total the rows
 * give again later was reached at its first instant, and a file's order need not be time's. */
static int col_argmax(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  luaL_argcheck(L, c->kind != ASC_STR, 1, "not a numeric column");
  asc_col *only = lua_isnoneornil(L, 2) ? NULL : lasc_checkcolumn(L, 2);
  luaL_argcheck(L, !only || asc_kind_integer(only->kind), 2, "rows must be an integer column");
  asc_col *present = lua_isnoneornil(L, 3) ? NULL : lasc_checkcolumn(L, 3);
  luaL_argcheck(L, !present || present->n == c->n, 3, "present must be as long as the column");
  asc_col *by = lua_isnoneornil(L, 4) ? NULL : lasc_checkcolumn(L, 4);
  luaL_argcheck(L, !by || (by->n == c->n && by->kind != ASC_STR), 4,
                "earliest must be a numeric column as long as the column");
  size_t best = 0, m = only ? only->n : c->n;
  double bv = 0;
  int found = 0;
  for (size_t j = 0; j < m; j++) {
    size_t i = j;
    if (only) {
      int64_t r = asc_col_int(only, j);
      luaL_argcheck(L, r >= 1 && (uint64_t)r <= c->n, 2, "row out of range");
      i = (size_t)r - 1;
    }
    double v;
    if (present && is_null(present, i)) continue;
    if (!num_at(c, i, &v)) continue;
    if (!found || v > bv || (by && v == bv && before(by, i, best))) best = i, bv = v, found = 1;
  }
  if (!found) return 0;
  lua_pushinteger(L, (lua_Integer)best + 1);
  lasc_pushcell(L, c, NULL, best);
  return 2;
}

/* column.group(a [, b [, want]]) groups rows by the value of one column or the pair of values
 * of two (any kinds, same length). Returns the group number of every row (an integer column,
 * 1-based, numbered in order of first appearance), the list of distinct values ({a} or {a, b};
 * nil for a missing value), and a table group -> integer column of its rows. want = {ids =
 * false} or {rows = false} gives nil in place of that result: a result nobody reads is then
 * never allocated (on a big trace each is four bytes a row). want.missing = false leaves out
 * the rows of the groups whose value (or either value of the pair) is missing: their entry in
 * the rows table is false (a caller that lists tagged rows by lane and tag never holds the
 * untagged ones, usually most of the trace). want.keys = "first" gives, in place of the list of
 * distinct values, an integer column of each group's first row (`take` it from the columns for
 * the values): no Lua table a group, which for a million distinct names is most of the cost. */
typedef struct {
  uint64_t a, b;
  uint32_t g;
} gslot;

static uint64_t cell_bits(const asc_col *c, size_t i) {
  if (asc_kind_integer(c->kind)) return (uint64_t)asc_col_int(c, i);
  if (c->kind == ASC_STR) return c->v.s[i];
  uint64_t u;
  double d = isnan(c->v.f[i]) ? NAN : c->v.f[i];
  memcpy(&u, &d, 8);
  return u;
}

static uint64_t pair_hash(uint64_t x, uint64_t y) { return asc_hash_step(asc_hash_key(x), y); }

static int want_field(lua_State *L, int opts, const char *k) {
  if (!lua_istable(L, opts)) return 1;
  int t = lua_getfield(L, opts, k);
  int want = t == LUA_TNIL || lua_toboolean(L, -1);
  lua_pop(L, 1);
  return want;
}

/* The group of (x, y), which is in the table. */
static uint32_t find_group(const gslot *tab, size_t cap, uint64_t x, uint64_t y) {
  size_t k = (size_t)pair_hash(x, y) & (cap - 1);
  while (tab[k].a != x || tab[k].b != y) k = (k + 1) & (cap - 1);
  return tab[k].g;
}

static int column_group(lua_State *L) {
  asc_col *a = lasc_checkcolumn(L, 1);
  asc_col *b = lua_isnoneornil(L, 2) ? NULL : lasc_checkcolumn(L, 2);
  if (b && b->n != a->n) return luaL_error(L, "column.group: columns differ in length");
  luaL_argcheck(L, lua_isnoneornil(L, 3) || lua_istable(L, 3), 3, "table of wanted results expected");
  int want_ids = want_field(L, 3, "ids"), want_rows = want_field(L, 3, "rows");
  int want_missing = want_field(L, 3, "missing");
  int want_first = 0;
  if (lua_istable(L, 3)) {
    lua_getfield(L, 3, "keys");
    want_first = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "first") == 0;
    luaL_argcheck(L, want_first || lua_isnil(L, -1), 3, "keys: \"first\" or nothing expected");
    lua_pop(L, 1);
  }
  lua_settop(L, 3);
  asc_strtab *sa = a->kind == ASC_STR ? lasc_column_strings(L, 1) : NULL;
  asc_strtab *sb = b && b->kind == ASC_STR ? lasc_column_strings(L, 2) : NULL;
  size_t n = a->n, cap = 64;
  /* group numbers and rows are 4-byte columns */
  if (n > ASC_MAX_U32_ROWS)
    return luaL_error(L, "column.group: more than %u rows", (unsigned)ASC_MAX_U32_ROWS);
  /* the table grows with the number of groups, which is usually tiny next to the rows */
  lasc_buf *tb = lasc_newbuf(L); /* 4: owns the hash table */
  tb->p = calloc(cap, sizeof(gslot));
  if (!tb->p) return lasc_oom(L);
  tb->cap = cap * sizeof(gslot);
  /* the group of every row, made in place in the group numbers returned; when they are not
   * wanted, the rows find their group again in the table instead of from a copy of them (four
   * bytes a row that a caller who wants only the rows would pay for) */
  uint32_t *gid = NULL;
  if (want_ids) {
    asc_col ids;
    asc_col_init(&ids, ASC_U32);
    asc_col *out = lasc_pushcolumn(L, &ids, 0); /* 5 */
    if (asc_col_reserve(out, n + 1)) return lasc_oom(L);
    out->n = n;
    gid = out->v.u;
  } else {
    lua_pushnil(L); /* 5 */
  }
  asc_col *first = NULL;
  if (want_first) { /* 6: each group's first row */
    asc_col fc;
    asc_col_init(&fc, ASC_U32);
    first = lasc_pushcolumn(L, &fc, 0);
  } else {
    lua_newtable(L); /* 6: distinct values */
  }
  uint32_t ng = 0;
  /* by group: whether a value is missing (one byte, only when their rows are not wanted) and
   * the number of rows (four bytes) */
  lasc_buf *mb = lasc_newbuf(L); /* 7 */
  lasc_buf *cb = lasc_newbuf(L); /* 8 */
  for (size_t i = 0; i < n; i++) {
    gslot *tab = (gslot *)tb->p;
    uint64_t x = cell_bits(a, i), y = b ? cell_bits(b, i) : 0;
    size_t k = (size_t)pair_hash(x, y) & (cap - 1);
    while (tab[k].g && (tab[k].a != x || tab[k].b != y)) k = (k + 1) & (cap - 1);
    if (tab[k].g) {
      if (gid) gid[i] = tab[k].g;
      ((uint32_t *)cb->p)[tab[k].g - 1]++;
      continue;
    }
    tab[k] = (gslot){x, y, ++ng};
    if (first) {
      if (asc_col_push_u32(first, (uint32_t)i + 1)) return lasc_oom(L);
    } else {
      lua_createtable(L, 2, 0);
      lasc_pushcell(L, a, sa, i);
      lua_rawseti(L, -2, 1);
      if (b) {
        lasc_pushcell(L, b, sb, i);
        lua_rawseti(L, -2, 2);
      }
      lua_rawseti(L, 6, ng);
    }
    if (gid) gid[i] = ng;
    uint32_t one = 1;
    lasc_addl(L, cb, (const char *)&one, sizeof one); /* group ng's count at [ng - 1] */
    if (!want_missing) {
      char miss = is_null(a, i) || (b && is_null(b, i));
      lasc_addl(L, mb, &miss, 1); /* group ng at mb->p[ng - 1] */
    }
    if ((size_t)ng * 2 > cap) { /* rehash into a table twice the size */
      size_t nc = cap * 2;
      gslot *nt = calloc(nc, sizeof *nt);
      if (!nt) return lasc_oom(L);
      for (size_t j = 0; j < cap; j++) {
        if (!tab[j].g) continue;
        size_t q = (size_t)pair_hash(tab[j].a, tab[j].b) & (nc - 1);
        while (nt[q].g) q = (q + 1) & (nc - 1);
        nt[q] = tab[j];
      }
      free(tb->p);
      tb->p = (char *)nt;
      tb->cap = nc * sizeof *nt;
      cap = nc;
    }
  }
  if (want_rows) {
    /* rows of each group */
    const uint32_t *count = (const uint32_t *)cb->p;
    asc_col **rc = lua_newuserdatauv(L, ((size_t)ng + 1) * sizeof *rc, 0); /* 9 */
    lua_newtable(L);                                                       /* 10 */
    for (uint32_t g = 1; g <= ng; g++) {
      if (!want_missing && mb->p[g - 1]) {
        rc[g] = NULL;
        lua_pushboolean(L, 0);
        lua_rawseti(L, 10, g);
        continue;
      }
      asc_col r;
      asc_col_init(&r, ASC_U32);
      rc[g] = lasc_pushcolumn(L, &r, 0);
      if (asc_col_reserve(rc[g], (size_t)count[g - 1] + 1)) return lasc_oom(L);
      lua_rawseti(L, 10, g);
    }
    const gslot *tab = (const gslot *)tb->p;
    for (size_t i = 0; i < n; i++) {
      uint32_t g = gid ? gid[i] : find_group(tab, cap, cell_bits(a, i), b ? cell_bits(b, i) : 0);
      asc_col *r = rc[g];
      if (r) r->v.u[r->n++] = (uint32_t)i + 1;
    }
  }
  free(tb->p);
  tb->p = NULL;
  tb->cap = 0;
  lua_pushvalue(L, 5);
  lua_pushvalue(L, 6);
  if (want_rows)
    lua_pushvalue(L, 10);
  else
    lua_pushnil(L);
  return 3;
}

/* column.group_max(keys, values) -> keys, maxima: the distinct keys of an integer column (a
 * missing key is none), in order of first appearance among the rows whose value (an integer
 * column) is not missing, and each one's largest value. One pass with a table by key: the
 * latest launch of each of a trace's 86k tasks took a Lua table and 55 ms. */
static int column_group_max(lua_State *L) {
  asc_col *k = lasc_checkcolumn(L, 1), *v = lasc_checkcolumn(L, 2);
  luaL_argcheck(L, asc_kind_integer(k->kind), 1, "an integer column expected");
  luaL_argcheck(L, asc_kind_integer(v->kind), 2, "an integer column expected");
  if (k->n != v->n) return luaL_error(L, "column.group_max: columns differ in length");
  lua_settop(L, 2);
  size_t n = k->n, cap = 1024;
  /* slots hold group numbers (4 bytes: fresh memory costs a page fault a page), the keys are
   * the result's */
  lasc_buf *tb = lasc_newbuf(L); /* 3: owns the slots */
  tb->p = calloc(cap, sizeof(uint32_t));
  if (!tb->p) return lasc_oom(L);
  tb->cap = cap * sizeof(uint32_t);
  asc_col kc, mc;
  asc_col_init(&kc, ASC_I64);
  asc_col_init(&mc, ASC_I64);
  asc_col *keys = lasc_pushcolumn(L, &kc, 0); /* 4 */
  asc_col *most = lasc_pushcolumn(L, &mc, 0); /* 5 */
  for (size_t i = 0; i < n; i++) {
    int64_t key = asc_col_int(k, i), val = asc_col_int(v, i);
    if (key == ASC_NULL_I64 || val == ASC_NULL_I64) continue;
    uint32_t *slot = (uint32_t *)tb->p;
    size_t j = (size_t)asc_hash_key((uint64_t)key) & (cap - 1);
    while (slot[j] && keys->v.i[slot[j] - 1] != key) j = (j + 1) & (cap - 1);
    if (slot[j]) {
      if (val > most->v.i[slot[j] - 1]) most->v.i[slot[j] - 1] = val;
      continue;
    }
    if (keys->n >= UINT32_MAX - 1) return luaL_error(L, "column.group_max: too many keys");
    if (asc_col_push_i64(keys, key) || asc_col_push_i64(most, val)) return lasc_oom(L);
    slot[j] = (uint32_t)keys->n;
    if (keys->n * 2 > cap) { /* the slots twice as many, filled again from the keys */
      size_t nc = cap * 2;
      uint32_t *ns = calloc(nc, sizeof *ns);
      if (!ns) return lasc_oom(L);
      for (size_t g = 0; g < keys->n; g++) {
        size_t r = (size_t)asc_hash_key((uint64_t)keys->v.i[g]) & (nc - 1);
        while (ns[r]) r = (r + 1) & (nc - 1);
        ns[r] = (uint32_t)g + 1;
      }
      free(tb->p);
      tb->p = (char *)ns;
      tb->cap = nc * sizeof *ns;
      cap = nc;
    }
  }
  free(tb->p);
  tb->p = NULL;
  tb->cap = 0;
  return 2;
}

/* column.rows_overlapping(starts, durations, lo, hi): 1-based rows whose [start, start + duration)
 * meets [lo, hi); a row without a duration counts as the instant at its start. */
static int column_rows_overlapping(lua_State *L) {
  asc_col *st = lasc_checkcolumn(L, 1), *du = lasc_checkcolumn(L, 2);
  luaL_argcheck(L, st->kind == ASC_I64 && du->kind == ASC_I64 && st->n == du->n, 2,
                "integer columns of one length expected");
  int64_t lo = luaL_checkinteger(L, 3), hi = luaL_checkinteger(L, 4);
  if (st->n > ASC_MAX_U32_ROWS)
    return luaL_error(L, "column.rows_overlapping: more than %u rows", (unsigned)ASC_MAX_U32_ROWS);
  asc_col out;
  asc_col_init(&out, ASC_U32);
  asc_col *o = lasc_pushcolumn(L, &out, 0);
  for (size_t i = 0; i < st->n; i++) {
    int64_t s0 = st->v.i[i], d = du->v.i[i];
    if (s0 == ASC_NULL_I64 || s0 >= hi) continue;
    int64_t e = d == ASC_NULL_I64 ? s0 : s0 + d;
    if (e < lo || (d != ASC_NULL_I64 && d > 0 && e == lo)) continue;
    if (asc_col_push_u32(o, (uint32_t)i + 1)) return lasc_oom(L);
  }
  return 1;
}

/* column.rows_starting(starts, durations, lo, hi [, rows]): the 1-based rows, of `rows` in its
 * order when given (a row list), whose start is in [lo, hi) and whose duration is known (and,
 * when negative, does not end before lo): a step's slices out of a lane's, with the columns
 * read in C rather than a row at a time. */
static int column_rows_starting(lua_State *L) {
  asc_col *st = lasc_checkcolumn(L, 1), *du = lasc_checkcolumn(L, 2);
  luaL_argcheck(L, st->kind == ASC_I64 && du->kind == ASC_I64 && st->n == du->n, 2,
                "integer columns of one length expected");
  int64_t lo = luaL_checkinteger(L, 3), hi = luaL_checkinteger(L, 4);
  lua_settop(L, 5);
  const asc_col *rows = lua_isnil(L, 5) ? NULL : lasc_tointcol(L, 5);
  size_t n = rows ? rows->n : st->n;
  if (st->n > ASC_MAX_U32_ROWS)
    return luaL_error(L, "column.rows_starting: more than %u rows", (unsigned)ASC_MAX_U32_ROWS);
  asc_col out;
  asc_col_init(&out, ASC_U32);
  asc_col *o = lasc_pushcolumn(L, &out, 0);
  for (size_t k = 0; k < n; k++) {
    int64_t r = rows ? asc_col_int(rows, k) : (int64_t)k + 1;
    if (r < 1 || (uint64_t)r > st->n)
      return luaL_error(L, "column.rows_starting: a row number is out of range");
    int64_t s0 = st->v.i[r - 1], d = du->v.i[r - 1];
    /* a negative duration that ends before lo is not in the window (rows_overlapping agrees) */
    if (s0 == ASC_NULL_I64 || s0 < lo || s0 >= hi || d == ASC_NULL_I64 || asc_sat_add(s0, d) < lo) continue;
    if (asc_col_push_u32(o, (uint32_t)r)) return lasc_oom(L);
  }
  return 1;
}

/* col:lookup(t) for an integer column: a new column with t[value] for every row (t's values
 * are all integers, all numbers or all strings; nil for values t does not have). */
typedef struct {
  int state; /* 0: not read yet, 1: nil, 2: the value below */
  union {
    int64_t i;
    double f;
    uint32_t s;
  } v;
} lookup_slot;

/* t[key] (pushed) converted to the output's kind into *slot; 0, or 1 when memory is short. */
static int lookup_read(lua_State *L, int64_t key, int kind, asc_strtab *shared, lookup_slot *slot) {
  if (lua_rawgeti(L, 2, key) == LUA_TNIL) {
    slot->state = 1;
  } else {
    slot->state = 2;
    if (kind == ASC_STR) {
      size_t len;
      const char *s = luaL_checklstring(L, -1, &len);
      if (asc_strtab_intern(shared, s, len, &slot->v.s)) return 1;
    } else if (kind == ASC_I64) {
      slot->v.i = luaL_checkinteger(L, -1);
    } else {
      slot->v.f = luaL_checknumber(L, -1);
    }
  }
  lua_pop(L, 1);
  return 0;
}

static int col_lookup(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  luaL_argcheck(L, asc_kind_integer(c->kind), 1, "lookup works on integer columns");
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  /* t[1..len], read from the table once each: a column has many rows and few distinct keys
   * (group numbers); len is the largest key, at most the number of rows */
  size_t len = 0;
  for (size_t i = 0; i < c->n; i++) {
    int64_t key = asc_col_int(c, i);
    if (key >= 1 && (uint64_t)key > len) len = (size_t)key;
  }
  if (len > c->n) len = c->n;
  lasc_buf *cb = lasc_newbuf(L); /* 3 */
  cb->p = calloc(len ? len : 1, sizeof(lookup_slot));
  if (!cb->p) return lasc_oom(L);
  lookup_slot *cache = (lookup_slot *)cb->p;
  /* the kind is the first non-nil value's, in row order */
  int kind = -1;
  for (size_t i = 0; i < c->n && kind < 0; i++) {
    int64_t key = asc_col_int(c, i);
    if (key == ASC_NULL_I64) continue;
    int cached = key >= 1 && (uint64_t)key <= len;
    if (cached && cache[key - 1].state) continue;
    int t = lua_rawgeti(L, 2, key);
    if (t != LUA_TNIL) kind = t == LUA_TSTRING ? ASC_STR : lua_isinteger(L, -1) ? ASC_I64 : ASC_F64;
    lua_pop(L, 1);
    if (cached && t == LUA_TNIL) cache[key - 1].state = 1;
  }
  asc_col empty;
  asc_col_init(&empty, kind < 0 ? ASC_I64 : (asc_kind)kind);
  asc_col *out = lasc_pushcolumn(L, &empty, 0); /* 4 */
  asc_strtab *shared = lasc_pushstrings(L);     /* 5 */
  if (asc_col_reserve(out, c->n + 1)) return lasc_oom(L);
  for (size_t i = 0; i < c->n; i++) {
    int64_t key = asc_col_int(c, i);
    lookup_slot one = {0, {0}}, *slot = &one;
    if (key != ASC_NULL_I64 && kind >= 0) {
      if (key >= 1 && (uint64_t)key <= len) slot = &cache[key - 1];
      if (slot->state != 1 && slot->state != 2 && lookup_read(L, key, kind, shared, slot)) return lasc_oom(L);
    }
    int r = slot->state != 2       ? asc_col_push_null(out)
            : out->kind == ASC_STR ? asc_col_push_str(out, slot->v.s)
            : out->kind == ASC_I64 ? asc_col_push_i64(out, slot->v.i)
                                   : asc_col_push_f64(out, slot->v.f);
    if (r) return lasc_oom(L);
  }
  free(cb->p);
  cb->p = NULL;
  if (out->kind == ASC_STR) {
    lua_pushvalue(L, 5);
    lua_setiuservalue(L, 4, 1);
  }
  lua_pushvalue(L, 4);
  return 1;
}

/* column.new(kind [, values]) */
static int column_new(lua_State *L) {
  static const char *const kinds[] = {"integer", "number", "string", NULL};
  asc_col c;
  asc_col_init(&c, (asc_kind)luaL_checkoption(L, 1, NULL, kinds));
  asc_col *col = lasc_pushcolumn(L, &c, 0);
  if (lua_istable(L, 2)) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, 2);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_pushcfunction(L, col_push);
      lua_pushvalue(L, -2);
      lua_rawgeti(L, 2, i);
      lua_call(L, 2, 0);
    }
  }
  (void)col;
  return 1;
}

static int column_strings(lua_State *L) {
  lasc_pushstrings(L);
  return 1;
}

void lasc_register_column(lua_State *L) {
  static const luaL_Reg strings_meta[] = {{"__gc", strings_gc}, {NULL, NULL}};
  static const luaL_Reg strings_methods[] = {
      {"info", strings_info}, {"intern", strings_intern}, {"get", strings_get}, {NULL, NULL}};
  static const luaL_Reg col_meta[] = {{"__gc", col_gc},
                                      {"__len", col_len},
                                      {"__index", col_index},
                                      {"__tostring", col_tostring},
                                      {NULL, NULL}};
  static const luaL_Reg col_methods[] = {
      {"get", col_get},     {"id", col_id},         {"kind", col_kind},     {"totable", col_totable},
      {"stats", col_stats}, {"order", col_order},   {"take", col_take},     {"push", col_push},
      {"map", col_map},     {"argmax", col_argmax}, {"lookup", col_lookup}, {NULL, NULL}};
  if (luaL_newmetatable(L, ASC_STRINGS_MT)) {
    luaL_setfuncs(L, strings_meta, 0);
    luaL_newlib(L, strings_methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, ASC_COLUMN_MT)) {
    luaL_setfuncs(L, col_meta, 0);
    luaL_newlib(L, col_methods);
    lua_setfield(L, -2, "methods");
  }
  lua_pop(L, 1);
}

int lasc_open_column(lua_State *L) {
  static const luaL_Reg fns[] = {{"new", column_new},
                                 {"concat", column_concat},
                                 {"fill", column_fill},
                                 {"group_sum", column_group_sum},
                                 {"group", column_group},
                                 {"group_max", column_group_max},
                                 {"downsample", column_downsample},
                                 {"rows_overlapping", column_rows_overlapping},
                                 {"rows_starting", column_rows_starting},
                                 {"strings", column_strings},
                                 {NULL, NULL}};
  lasc_register_column(L);
  luaL_newlib(L, fns);
  return 1;
}
