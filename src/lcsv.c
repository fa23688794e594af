/* Lua binding of the CSV primitive: csv.read (typed columns), csv.open/csv.rows (records),
 * csv.header, and csv.writer. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/checked.h"
#include "ascope/csv.h"
#include "ascope/decimal.h"
#include "lbind.h"

#define READER_MT "ascope.csv.reader"
#define WRITER_MT "ascope.csv.writer"

/* A file read on a thread of its own, while csv.read's `beside` runs in the calling thread. It
 * interns into a table of its own, as `beside` may intern into the shared one meanwhile; its
 * strings are moved into the shared table once both are done. */
typedef struct {
  const char *path;
  const asc_csv_spec *spec;
  asc_csv_result res;
  asc_error err;
  int rc;
} side_read;

static void *read_on_thread(void *ud) {
  side_read *s = ud;
  s->rc = asc_csv_read(s->path, s->spec, &s->res, &s->err);
  return NULL;
}

/* The string columns' ids from `own` to `shared` (asc_strtab_drain; own is left empty). */
static int move_strings(asc_strtab *shared, asc_strtab *own, asc_csv_result *res, size_t ncols) {
  uint32_t *map = asc_strtab_drain_map(shared, own);
  if (!map) return -1;
  for (size_t j = 0; j < ncols; j++) {
    asc_col *c = &res->cols[j];
    if (c->kind == ASC_STR)
      for (size_t i = 0; i < c->n; i++) c->v.s[i] = map[c->v.s[i]];
  }
  free(map);
  return 0;
}

/* csv.read(path, {columns = {["Name"] = "string", ["Size(KB)"] = "number", ...},
 *                 optional = {["X"] = true}, bad = "error"|"null", progress = fn, beside = fn})
 * beside: a function run in the calling thread while the file is read on another (its result is
 * its own to keep, by upvalue; no progress then, as Lua runs on one thread). An error in it is
 * raised once the read is over, whose columns are then let go. */
static int l_read(lua_State *L) {
  static const char *const types[] = {"string", "integer", "number", "us", NULL};
  const char *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  lasc_pushstrings(L);           /* 3 */
  lua_getfield(L, 2, "columns"); /* 4 */
  luaL_argcheck(L, lua_istable(L, 4), 2, "columns: a table of header name -> type");
  lua_getfield(L, 2, "optional"); /* 5 */
  size_t nc = 0;
  for (lua_pushnil(L); lua_next(L, 4); lua_pop(L, 1)) nc++;
  asc_csv_colspec *cols = lua_newuserdatauv(L, (nc + 1) * sizeof *cols, 0); /* 6 */
  lua_newtable(L);                                                          /* 7: names */
  size_t k = 0;
  for (lua_pushnil(L); lua_next(L, 4); lua_pop(L, 1)) {
    luaL_argcheck(L, lua_type(L, -2) == LUA_TSTRING, 2, "columns: keys must be header names");
    cols[k].name = lua_tostring(L, -2);
    lua_pushvalue(L, -2);
    lua_rawseti(L, 7, (lua_Integer)k + 1);
    const char *t = luaL_checkstring(L, -1);
    cols[k].optional = t[0] == '?';
    lua_pushstring(L, t + (t[0] == '?'));
    cols[k].type = (asc_ctype)luaL_checkoption(L, -1, NULL, types);
    lua_pop(L, 1);
    if (lua_istable(L, 5)) {
      lua_pushvalue(L, -2);
      cols[k].optional |= lua_gettable(L, 5) != LUA_TNIL && lua_toboolean(L, -1);
      lua_pop(L, 1);
    }
    k++;
  }
  asc_csv_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.cols = cols;
  spec.ncols = nc;
  spec.strings = lasc_checkstrings(L, 3);
  lua_getfield(L, 2, "bad"); /* 8 */
  spec.bad_as_null = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "null") == 0;
  int beside = lua_getfield(L, 2, "beside") != LUA_TNIL; /* 9 */
  luaL_argcheck(L, !beside || lua_isfunction(L, 9), 2, "beside: a function");
  lasc_progress pc;
  memset(&pc, 0, sizeof pc);
  if (!beside && lasc_progress_init(L, 2, &pc)) {
    spec.progress = lasc_progress_call;
    spec.progress_ud = &pc;
  }
  asc_csv_result res;
  asc_error err;
  int rc;
  if (beside) {
    side_read s;
    memset(&s, 0, sizeof s);
    s.path = path;
    s.spec = &spec;
    asc_strtab *shared = spec.strings, *own = asc_strtab_new();
    if (!own) lasc_oom(L);
    spec.strings = own;
    pthread_t th;
    int threaded = pthread_create(&th, NULL, read_on_thread, &s) == 0;
    if (!threaded) read_on_thread(&s); /* no thread to be had: one after the other */
    lua_pushvalue(L, 9);
    int brc = lua_pcall(L, 0, 0, 0);
    if (threaded) pthread_join(th, NULL);
    res = s.res;
    err = s.err;
    rc = s.rc;
    int oom = brc == LUA_OK && !rc && move_strings(shared, own, &res, nc);
    asc_strtab_free(own);
    if (brc != LUA_OK || oom) {
      if (!rc) asc_csv_result_free(&res, nc);
      if (oom) lasc_oom(L);
      return lua_error(L);
    }
  } else {
    rc = asc_csv_read(path, &spec, &res, &err);
  }
  if (pc.failed) {
    if (!rc) asc_csv_result_free(&res, nc);
    lasc_progress_rethrow(&pc);
  }
  if (rc) return lasc_pusherror(L, &err);
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, (lua_Integer)res.nrows);
  lua_setfield(L, -2, "n");
  lua_createtable(L, 0, (int)nc);
  lua_newtable(L); /* present */
  for (size_t j = 0; j < nc; j++) {
    lua_rawgeti(L, 7, (lua_Integer)j + 1);
    lua_pushboolean(L, res.present[j]);
    lua_settable(L, -3);
    lua_rawgeti(L, 7, (lua_Integer)j + 1);
    lasc_pushcolumn(L, &res.cols[j], 3);
    lua_settable(L, -4);
  }
  lua_setfield(L, -3, "present");
  lua_setfield(L, -2, "columns");
  lua_pushinteger(L, res.bad_cells);
  lua_setfield(L, -2, "bad_cells");
  if (res.cut_line) {
    lua_pushfstring(
        L, "%s:%I: the last line has no line end (was the file cut?): %s", path, (lua_Integer)res.cut_line,
        res.cut_fields < res.header_fields ? "its row has fewer fields than the header and is left out"
                                           : "its row is used");
    lua_setfield(L, -2, "cut");
    lua_pushboolean(L, res.cut_fields < res.header_fields); /* the file was surely cut */
    lua_setfield(L, -2, "cut_dropped");
  }
  /* rows of another width are read (missing cells empty, extra ones left out), never in silence */
  lua_pushinteger(L, res.ragged_rows);
  lua_setfield(L, -2, "ragged_rows");
  if (res.ragged_rows) {
    lasc_pusherrortext(L, &res.first_ragged);
    lua_setfield(L, -2, "first_ragged");
  }
  if (res.bad_cells) {
    lasc_pusherrortext(L, &res.first_bad);
    lua_setfield(L, -2, "first_bad");
  }
  asc_csv_result_free(&res, nc);
  return 1;
}

/* ---- record reader ---- */

typedef struct {
  asc_csv_reader *r;
} reader_ud;

static asc_csv_reader *check_reader(lua_State *L) {
  reader_ud *u = luaL_checkudata(L, 1, READER_MT);
  if (!u->r) luaL_error(L, "csv reader is closed");
  return u->r;
}

static int reader_close(lua_State *L) {
  reader_ud *u = luaL_checkudata(L, 1, READER_MT);
  asc_csv_close(u->r);
  u->r = NULL;
  return 0;
}

/* reader:next() -> {field, ...}, line | nil at the end | raises nothing: nil, message on error */
static int reader_next(lua_State *L) {
  asc_csv_reader *r = check_reader(L);
  asc_csv_record rec;
  asc_error err;
  int got = asc_csv_next(r, &rec, &err);
  if (got < 0) {
    lua_pushnil(L); /* nil, nil, message: the iterator ends and the message is kept */
    lua_pushnil(L);
    lasc_pusherrortext(L, &err);
    return 3;
  }
  if (got == 0) return 0;
  lua_createtable(L, (int)rec.nfields, 0);
  for (size_t i = 0; i < rec.nfields; i++) {
    const char *v = rec.fields[i];
    size_t n = asc_trim(&v, rec.lens[i]);
    lua_pushlstring(L, v, n);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_pushinteger(L, rec.line);
  return 2;
}

static int l_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  reader_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->r = NULL;
  luaL_setmetatable(L, READER_MT);
  asc_error err;
  if (asc_csv_open(path, &u->r, &err)) return lasc_pusherror(L, &err);
  return 1;
}

/* ---- writer ---- */

typedef struct {
  asc_csv_writer *w;
  size_t rows;
} writer_ud;

static asc_csv_writer *check_writer(lua_State *L) {
  writer_ud *u = luaL_checkudata(L, 1, WRITER_MT);
  if (!u->w) luaL_error(L, "csv writer is closed");
  return u->w;
}

static void write_value(lua_State *L, asc_csv_writer *w, int idx) {
  char buf[40];
  size_t n;
  const char *s;
  switch (lua_type(L, idx)) {
  case LUA_TNIL: s = "", n = 0; break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) {
      n = (size_t)snprintf(buf, sizeof buf, "%lld", (long long)lua_tointeger(L, idx));
    } else {
      double d = lua_tonumber(L, idx);
      n = asc_format_double(d, buf);
      /* whole doubles keep a ".0" so the column reads back as float, as pandas writes it */
      if (n && !strpbrk(buf, ".eEn")) memcpy(buf + n, ".0", 3), n += 2;
    }
    s = buf;
    break;
  case LUA_TBOOLEAN: s = lua_toboolean(L, idx) ? "true" : "false", n = strlen(s); break;
  default: s = luaL_tolstring(L, idx, &n), lua_pop(L, 1);
  }
  asc_csv_write_field(w, s, n); /* a write error is kept and reported by writer:close() */
}

/* writer:row(v1, v2, ...) or writer:row({v1, v2, ...}) */
static int writer_row(lua_State *L) {
  asc_csv_writer *w = check_writer(L);
  writer_ud *u = lua_touserdata(L, 1);
  int top = lua_gettop(L);
  if (top == 2 && lua_istable(L, 2)) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, 2);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, 2, i);
      write_value(L, w, -1);
      lua_pop(L, 1);
    }
  } else {
    for (int i = 2; i <= top; i++) write_value(L, w, i);
  }
  asc_csv_end_row(w);
  u->rows++;
  return 0;
}

typedef struct {
  asc_col *col; /* NULL for a constant */
  asc_strtab *st;
  unsigned char *quote; /* by string id: 0 not known yet, else 1 + asc_csv_quoting() */
  asc_dcache *doubles;  /* shared by the number columns of one call */
  const char *text;     /* constant text, or the text of a missing value */
  size_t text_len;
  int text_quote; /* its quoting */
  int scale;      /* > 0: integers are printed divided by 10^scale (ns -> ms is 6) */
} colspec;

static int write_cell(asc_csv_writer *w, const colspec *c, size_t row) {
  char buf[40];
  size_t n = 0;
  const char *s;
  if (!c->col) return asc_csv_write_field_q(w, c->text, c->text_len, c->text_quote);
  switch (c->col->kind) {
  case ASC_I64:
  case ASC_U32: {
    int64_t v = asc_col_int(c->col, row);
    if (v == ASC_NULL_I64) break;
    n = c->scale ? asc_format_scaled(v, c->scale, buf) : asc_format_int(v, buf);
    return asc_csv_write_field_q(w, buf, n, ASC_CSV_PLAIN);
  }
  case ASC_F64:
    s = asc_format_double_cached(c->doubles, c->col->v.f[row], 1, &n);
    if (!n) break;
    return asc_csv_write_field_q(w, s, n, ASC_CSV_PLAIN);
  case ASC_STR: {
    uint32_t id = c->col->v.s[row];
    s = id ? asc_strtab_get(c->st, id, &n) : NULL;
    if (!s) break;
    /* call stacks repeat: decide their quoting once per distinct string */
    if (!c->quote[id]) c->quote[id] = (unsigned char)(1 + asc_csv_quoting(s, n));
    return asc_csv_write_field_q(w, s, n, c->quote[id] - 1);
  }
  }
  return asc_csv_write_field_q(w, c->text, c->text_len, c->text_quote); /* a missing value */
}

/* writer:columns({spec, ...} [, order]) writes one row per entry of order (a column of 1-based
 * row numbers; default every row). A spec is a column, a constant string, or
 * {column, scale = 6, missing = "0.0"}: integers divided by 10^scale exactly (ns -> ms),
 * `missing` printed for a missing value. Returns the number of rows written. */
static int writer_columns(lua_State *L) {
  asc_csv_writer *w = check_writer(L);
  writer_ud *u = lua_touserdata(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 3); /* the order (or nil) stays at 3, below what the loop pushes */
  int ncols = (int)lua_rawlen(L, 2);
  colspec *cs = lua_newuserdatauv(L, (size_t)(ncols + 1) * sizeof *cs, 0);
  asc_dcache *doubles = lua_newuserdatauv(L, sizeof *doubles, 0);
  asc_dcache_init(doubles);
  size_t nrows = (size_t)-1;
  for (int j = 0; j < ncols; j++) {
    memset(&cs[j], 0, sizeof cs[j]);
    cs[j].doubles = doubles;
    cs[j].text = "";
    lua_rawgeti(L, 2, j + 1);
    int spec = lua_gettop(L);
    if (lua_type(L, spec) == LUA_TSTRING) {
      cs[j].text = lua_tolstring(L, spec, &cs[j].text_len); /* kept alive by the specs table */
      cs[j].text_quote = asc_csv_quoting(cs[j].text, cs[j].text_len);
      lua_pop(L, 1);
      continue;
    }
    if (lua_istable(L, spec)) {
      lua_getfield(L, spec, "scale");
      cs[j].scale = (int)luaL_optinteger(L, -1, 0);
      lua_getfield(L, spec, "missing");
      if (lua_type(L, -1) == LUA_TSTRING) cs[j].text = lua_tolstring(L, -1, &cs[j].text_len);
      cs[j].text_quote = asc_csv_quoting(cs[j].text, cs[j].text_len);
      lua_pop(L, 2);
      lua_rawgeti(L, spec, 1);
      lua_replace(L, spec);
    }
    cs[j].col = lasc_checkcolumn(L, spec);
    if (cs[j].col->kind == ASC_STR) {
      cs[j].st = lasc_column_strings(L, spec);
      size_t ids = (size_t)asc_strtab_count(cs[j].st) + 1;
      cs[j].quote = lua_newuserdatauv(L, ids, 0); /* freed with the call's stack frame */
      memset(cs[j].quote, 0, ids);
      lua_insert(L, spec); /* keep it below the spec value popped next */
      spec++;
    }
    if (nrows == (size_t)-1)
      nrows = cs[j].col->n;
    else if (cs[j].col->n != nrows)
      return luaL_error(L, "writer:columns: columns differ in length");
    lua_pop(L, 1);
  }
  if (nrows == (size_t)-1) nrows = 0;
  size_t norder = nrows;
  const asc_col *order = lua_isnoneornil(L, 3) ? NULL : lasc_tointcol(L, 3); /* read in place */
  if (order) norder = order->n;
  int rc = 0;
  for (size_t k = 0; k < norder && rc == 0; k++) {
    size_t row = k;
    if (order) {
      int64_t o = asc_col_int(order, k);
      if (o == ASC_NULL_I64) return luaL_error(L, "writer:columns: a missing row in the order");
      if (o < 1 || (size_t)o > nrows)
        return luaL_error(L, "writer:columns: row %I out of range", (lua_Integer)o);
      row = (size_t)o - 1;
    }
    for (int j = 0; j < ncols && rc == 0; j++) rc = write_cell(w, &cs[j], row);
    if (rc == 0) rc = asc_csv_end_row(w);
  }
  /* rc < 0: the disk refused a write, reported by writer:close() */
  u->rows += norder;
  lua_pushinteger(L, (lua_Integer)norder);
  return 1;
}

static int writer_close(lua_State *L) {
  writer_ud *u = luaL_checkudata(L, 1, WRITER_MT);
  if (!u->w) return 0;
  asc_error err;
  int rc = asc_csv_writer_close(u->w, &err);
  u->w = NULL;
  if (rc) return lasc_pusherror(L, &err);
  lua_pushinteger(L, (lua_Integer)u->rows);
  return 1;
}

static int writer_gc(lua_State *L) {
  writer_ud *u = luaL_checkudata(L, 1, WRITER_MT);
  if (u->w) asc_csv_writer_abort(u->w); /* never closed: leave no half file behind */
  u->w = NULL;
  return 0;
}

/* csv.writer(path [, {bom = true}]) */
static int l_writer(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int bom = 0;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "bom");
    bom = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  writer_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->w = NULL;
  u->rows = 0;
  luaL_setmetatable(L, WRITER_MT);
  asc_error err;
  if (asc_csv_writer_open(path, bom, &u->w, &err)) return lasc_pusherror(L, &err);
  return 1;
}

int lasc_open_csv(lua_State *L) {
  static const luaL_Reg reader_m[] = {{"next", reader_next}, {"close", reader_close}, {NULL, NULL}};
  static const luaL_Reg writer_m[] = {
      {"row", writer_row}, {"columns", writer_columns}, {"close", writer_close}, {NULL, NULL}};
  static const luaL_Reg fns[] = {{"read", l_read}, {"open", l_open}, {"writer", l_writer}, {NULL, NULL}};
  if (luaL_newmetatable(L, READER_MT)) {
    lua_pushcfunction(L, reader_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, reader_close);
    lua_setfield(L, -2, "__close");
    luaL_newlib(L, reader_m);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, WRITER_MT)) {
    lua_pushcfunction(L, writer_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, writer_m);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, fns);
  return 1;
}
