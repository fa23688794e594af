/* Lua binding of the SQLite reader: db.open(path [, {max_steps = N}]) -> handle; handle:query(sql, ...) ->
 * result with columns by name; handle:tables(); handle:close(). */
#include <string.h>

#include "ascope/db.h"
#include "lbind.h"

#define DB_MT "ascope.db"

typedef struct {
  asc_db *db;
} db_ud;

static asc_db *check_db(lua_State *L) {
  db_ud *u = luaL_checkudata(L, 1, DB_MT);
  if (!u->db) luaL_error(L, "database is closed");
  return u->db;
}

static int l_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  db_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->db = NULL;
  luaL_setmetatable(L, DB_MT);
  asc_error err;
  if (asc_db_open(path, &u->db, &err)) return lasc_pusherror(L, &err);
  if (lua_istable(L, 2)) { /* {max_steps = N}: a tighter bound on each query */
    lua_getfield(L, 2, "max_steps");
    if (!lua_isnil(L, -1)) asc_db_set_budget(u->db, (long long)luaL_checkinteger(L, -1));
    lua_pop(L, 1);
  }
  return 1;
}

/* db:query(sql, param...) -> {n = rows, names = {...}, columns = {name = column}} */
static int m_query(lua_State *L) {
  asc_db *db = check_db(L);
  const char *sql = luaL_checkstring(L, 2);
  int np = lua_gettop(L) - 2;
  const char **params = lua_newuserdatauv(L, (size_t)(np + 1) * sizeof *params, 0);
  for (int i = 0; i < np; i++) params[i] = lua_isnil(L, 3 + i) ? NULL : luaL_tolstring(L, 3 + i, NULL);
  int strings = lua_gettop(L) + 1;
  asc_strtab *st = lasc_pushstrings(L);
  asc_db_result res;
  asc_error err;
  if (asc_db_query(db, sql, params, (size_t)np, st, &res, &err)) return lasc_pusherror(L, &err);
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, (lua_Integer)res.nrows);
  lua_setfield(L, -2, "n");
  lua_createtable(L, (int)res.ncols, 0);
  lua_createtable(L, 0, (int)res.ncols);
  for (size_t j = 0; j < res.ncols; j++) {
    lua_pushstring(L, res.names[j]);
    lua_rawseti(L, -3, (lua_Integer)j + 1);
    lasc_pushcolumn(L, &res.cols[j], strings);
    lua_setfield(L, -2, res.names[j]);
  }
  lua_setfield(L, -3, "columns");
  lua_setfield(L, -2, "names");
  asc_db_result_free(&res);
  return 1;
}

static int m_has_table(lua_State *L) {
  asc_error err;
  int has = asc_db_has_table(check_db(L), luaL_checkstring(L, 2), &err);
  if (has < 0) return lasc_pusherror(L, &err);
  lua_pushboolean(L, has);
  return 1;
}

static int m_close(lua_State *L) {
  db_ud *u = luaL_checkudata(L, 1, DB_MT);
  asc_db_close(u->db);
  u->db = NULL;
  return 0;
}

int lasc_open_db(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"query", m_query}, {"has_table", m_has_table}, {"close", m_close}, {NULL, NULL}};
  static const luaL_Reg fns[] = {{"open", l_open}, {NULL, NULL}};
  if (luaL_newmetatable(L, DB_MT)) {
    lua_pushcfunction(L, m_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, m_close);
    lua_setfield(L, -2, "__close");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, fns);
  return 1;
}
