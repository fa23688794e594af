/* json.writer(path): large JSON outputs (Chrome traces of millions of events) written from
 * columns by a row template in C, to a temporary file renamed into place on close.
 *
 *   local w = assert(json.writer("out/trace.json"))
 *   w:write('{"traceEvents":[\n')
 *   w:rows({ '{"ph":"C","ts":', { ts_ns, scale = 3 }, ',"args":{"mb":', { mb, missing = "0" }, '}}' },
 *          { order = order_col, sep = ",\n", need = { ts_ns }, positive = size, missing = dur })
 *   w:write("]}\n"); assert(w:close())
 *
 * A template part is literal text or {column, scale = N (integers / 10^N, exact),
 * missing = "text" (for a missing value), string = true (JSON-quote the value), max = B (a
 * quoted value longer than B bytes is cut as a report label, see ascope/label.h)}. Row options:
 * order (column of 1-based rows, default all), sep (between rows, also before the first row
 * when first = false), need (columns that must have a value), positive (a column that must be
 * > 0), missing (a column that must have no value). Returns the number of rows written.
 * w:frames(tree [, label_max]) writes a call-stack tree's "stackFrames" members (see
 * ascope/stacktree.h) straight from the tree, never as one Lua string. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/decimal.h"
#include "ascope/fs.h"
#include "ascope/json_escape.h"
#include "ascope/label.h"
#include "ascope/stacktree.h"
#include "lbind.h"

#define WRITER_MT "ascope.json.writer"

/* Output is assembled in a buffer of our own and handed to stdio in large blocks: a trace row
 * is a dozen short pieces, and a stdio call per piece cost more than building the row. */
enum { BUF_CAP = 1 << 20 };

typedef struct {
  asc_atomic out;
  int open;
  long long rows;
  char *buf;
  size_t n;
} jw;

static void flush(jw *w) {
  asc_atomic_write(&w->out, w->buf, w->n); /* an error is kept for the commit */
  w->n = 0;
}

static void out(jw *w, const char *s, size_t n) {
  if (n == 0) return;
  if (w->n + n > BUF_CAP) {
    flush(w);
    if (n > BUF_CAP) {
      asc_atomic_write(&w->out, s, n);
      return;
    }
  }
  memcpy(w->buf + w->n, s, n);
  w->n += n;
}

static void outc(jw *w, char c) {
  if (w->n == BUF_CAP) flush(w);
  w->buf[w->n++] = c;
}

static jw *check(lua_State *L) {
  jw *w = luaL_checkudata(L, 1, WRITER_MT);
  if (!w->open) luaL_error(L, "json writer is closed");
  return w;
}

static void put_piece(void *ud, const char *s, size_t n) { out(ud, s, n); }

static void put_json_string(jw *w, const char *s, size_t n) {
  outc(w, '"');
  asc_json_escape(s, n, put_piece, w);
  outc(w, '"');
}

typedef struct {
  const char *text; /* literal, or the text for a missing value */
  size_t len;
  asc_col *col;
  asc_strtab *st;
  int scale, quote;
  size_t max;           /* quoted strings longer than this are cut as labels */
  unsigned char *plain; /* quoted strings, by id: 0 not known yet, 1 no escaping, 2 escaping */
  asc_dcache *doubles;  /* shared by the parts of one call */
} part;

static int is_null(const asc_col *c, size_t i) {
  return asc_kind_integer(c->kind) ? asc_col_int(c, i) == ASC_NULL_I64
         : c->kind == ASC_F64      ? !isfinite(c->v.f[i]) /* an infinity has no JSON spelling */
                                   : c->v.s[i] == 0;
}

static void put_cell(jw *w, const part *p, size_t row) {
  char buf[40];
  size_t n;
  if (!p->col || is_null(p->col, row)) {
    out(w, p->text, p->len);
    return;
  }
  switch (p->col->kind) {
  case ASC_I64:
  case ASC_U32:
    n = p->scale ? asc_format_scaled(asc_col_int(p->col, row), p->scale, buf)
                 : asc_format_int(asc_col_int(p->col, row), buf);
    if (p->quote) outc(w, '"');
    out(w, buf, n);
    if (p->quote) outc(w, '"');
    break;
  case ASC_F64: {
    const char *t = asc_format_double_cached(p->doubles, p->col->v.f[row], 0, &n);
    out(w, t, n);
    break;
  }
  case ASC_STR: {
    uint32_t id = p->col->v.s[row];
    const char *s = asc_strtab_get(p->st, id, &n);
    if (!p->quote) {
      out(w, s, n);
      break;
    }
    size_t keep = asc_label_cut(s, n, p->max);
    if (keep < n) {
      outc(w, '"');
      asc_json_escape(s, keep, put_piece, w);
      out(w, ASC_LABEL_MORE, sizeof ASC_LABEL_MORE - 1);
      outc(w, '"');
      break;
    }
    /* names and call sites repeat: look at each distinct string once */
    if (!p->plain[id]) p->plain[id] = asc_json_plain(s, n) ? 1 : 2;
    if (p->plain[id] == 2) {
      put_json_string(w, s, n);
    } else {
      outc(w, '"');
      out(w, s, n);
      outc(w, '"');
    }
    break;
  }
  }
}

static asc_col *opt_col(lua_State *L, int opts, const char *key) {
  asc_col *c = NULL;
  if (lua_getfield(L, opts, key) != LUA_TNIL) c = lasc_checkcolumn(L, -1);
  lua_pop(L, 1); /* the column stays referenced by the options table */
  return c;
}

static int m_rows(lua_State *L) {
  jw *w = check(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  int opts = lua_istable(L, 3) ? 3 : 0;
  int np = (int)lua_rawlen(L, 2);
  part *parts = lua_newuserdatauv(L, (size_t)(np + 1) * sizeof *parts, 0);
  asc_dcache *doubles = lua_newuserdatauv(L, sizeof *doubles, 0);
  asc_dcache_init(doubles);
  size_t nrows = (size_t)-1;
  for (int j = 0; j < np; j++) {
    memset(&parts[j], 0, sizeof parts[j]);
    parts[j].doubles = doubles;
    parts[j].text = "null";
    parts[j].len = 4;
    lua_rawgeti(L, 2, j + 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      parts[j].text = lua_tolstring(L, -1, &parts[j].len);
    } else {
      luaL_checktype(L, -1, LUA_TTABLE);
      lua_getfield(L, -1, "scale");
      parts[j].scale = (int)luaL_optinteger(L, -1, 0);
      lua_getfield(L, -2, "missing");
      if (lua_type(L, -1) == LUA_TSTRING) parts[j].text = lua_tolstring(L, -1, &parts[j].len);
      lua_getfield(L, -3, "string");
      parts[j].quote = lua_toboolean(L, -1);
      parts[j].max = SIZE_MAX;
      if (lua_getfield(L, -4, "max") != LUA_TNIL) {
        lua_Integer max = luaL_checkinteger(L, -1);
        luaL_argcheck(L, max >= 0, 2, "max must not be negative");
        parts[j].max = (size_t)max;
      }
      lua_pop(L, 1);
      lua_rawgeti(L, -4, 1);
      parts[j].col = lasc_checkcolumn(L, -1);
      if (parts[j].col->kind == ASC_STR) {
        parts[j].st = lasc_column_strings(L, -1);
        if (parts[j].quote) {
          size_t ids = (size_t)asc_strtab_count(parts[j].st) + 1;
          parts[j].plain = lua_newuserdatauv(L, ids, 0);
          memset(parts[j].plain, 0, ids);
          lua_insert(L, -6); /* below this part's values and spec: it lives as long as the call */
        }
      }
      lua_pop(L, 4);
      if (nrows == (size_t)-1)
        nrows = parts[j].col->n;
      else if (parts[j].col->n != nrows)
        return luaL_error(L, "json writer: columns differ in length");
    }
    lua_pop(L, 1);
  }
  if (nrows == (size_t)-1) nrows = 0;
  const char *sep = ",\n";
  size_t seplen = 2;
  int first = 1;
  asc_col *positive = NULL, *missing = NULL;
  asc_col *need[16];
  int nneed = 0;
  const asc_col *order = NULL;
  size_t norder = nrows;
  if (opts) {
    if (lua_getfield(L, opts, "sep") == LUA_TSTRING) sep = lua_tolstring(L, -1, &seplen);
    lua_pop(L, 1);
    if (lua_getfield(L, opts, "first") == LUA_TBOOLEAN) first = lua_toboolean(L, -1);
    lua_pop(L, 1);
    positive = opt_col(L, opts, "positive");
    missing = opt_col(L, opts, "missing");
    if (lua_getfield(L, opts, "need") == LUA_TTABLE) {
      int k = (int)lua_rawlen(L, -1);
      for (int i = 1; i <= k && nneed < 16; i++) {
        lua_rawgeti(L, -1, i);
        need[nneed++] = lasc_checkcolumn(L, -1);
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
    if (lua_getfield(L, opts, "order") != LUA_TNIL) {
      order = lasc_tointcol(L, -1); /* a row list is read in place, not copied */
      norder = order->n;
      lua_remove(L, -2); /* the rows' holder stays on the stack until the call returns */
    } else {
      lua_pop(L, 1);
    }
  }
  long long written = 0;
  for (size_t k = 0; k < norder; k++) {
    size_t row = k;
    if (order) {
      int64_t o = asc_col_int(order, k);
      if (o == ASC_NULL_I64) return luaL_error(L, "json writer: a missing row in the order");
      if (o < 1 || (size_t)o > nrows)
        return luaL_error(L, "json writer: row %I out of range", (lua_Integer)o);
      row = (size_t)o - 1;
    }
    int keep = 1;
    for (int i = 0; i < nneed && keep; i++) keep = row < need[i]->n && !is_null(need[i], row);
    if (keep && positive)
      keep = asc_kind_integer(positive->kind)
                 ? asc_col_int(positive, row) != ASC_NULL_I64 && asc_col_int(positive, row) > 0
             : positive->kind == ASC_F64 ? positive->v.f[row] > 0
                                         : positive->v.s[row] != 0;
    if (keep && missing) keep = is_null(missing, row);
    if (!keep) continue;
    if (!first) out(w, sep, seplen);
    first = 0;
    for (int j = 0; j < np; j++) put_cell(w, &parts[j], row);
    written++;
  }
  w->rows += written;
  lua_pushinteger(L, written);
  return 1;
}

static int m_write(lua_State *L) {
  jw *w = check(L);
  int top = lua_gettop(L);
  for (int i = 2; i <= top; i++) {
    size_t n;
    const char *s = luaL_checklstring(L, i, &n);
    out(w, s, n);
  }
  return 0;
}

static int m_frames(lua_State *L) {
  jw *w = check(L);
  asc_stacktree *t = lasc_checkstacktree(L, 2);
  lua_Integer max = luaL_optinteger(L, 3, -1);
  luaL_argcheck(L, max >= 0 || lua_isnoneornil(L, 3), 3, "not negative");
  if (asc_stacktree_write(t, max < 0 ? SIZE_MAX : (size_t)max, put_piece, w))
    return luaL_error(L, "json writer: out of memory");
  return 0;
}

static int m_close(lua_State *L) {
  jw *w = luaL_checkudata(L, 1, WRITER_MT);
  if (!w->open) return 0;
  w->open = 0;
  flush(w);
  free(w->buf);
  w->buf = NULL;
  asc_error err; /* a failed write is kept in w->out and reported by the commit */
  if (asc_atomic_commit(&w->out, &err)) return lasc_pusherror(L, &err);
  lua_pushboolean(L, 1);
  return 1;
}

static int m_gc(lua_State *L) {
  jw *w = luaL_checkudata(L, 1, WRITER_MT);
  if (w->open) asc_atomic_abort(&w->out);
  w->open = 0;
  free(w->buf);
  w->buf = NULL;
  return 0;
}

static int l_writer(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  jw *w = lua_newuserdatauv(L, sizeof *w, 0);
  memset(w, 0, sizeof *w);
  luaL_setmetatable(L, WRITER_MT);
  asc_error err;
  if (!(w->buf = malloc(BUF_CAP))) return lasc_oom(L);
  if (asc_atomic_open(&w->out, path, &err)) return lasc_pusherror(L, &err);
  w->open = 1;
  return 1;
}

/* Adds json.writer to the module table on top of the stack. */
void lasc_json_writer_register(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"write", m_write}, {"rows", m_rows}, {"frames", m_frames}, {"close", m_close}, {NULL, NULL}};
  if (luaL_newmetatable(L, WRITER_MT)) {
    lua_pushcfunction(L, m_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, l_writer);
  lua_setfield(L, -2, "writer");
}
