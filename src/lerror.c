/* A primitive's error as the person reading it expects it: in their language.
 *
 * The C layer records each error's template and arguments (ascope/error.h). When the Lua side's
 * message catalogue is loaded (package.loaded["ascope.i18n"]), its c_error function turns them
 * into the text of the current language; without it (the primitives used alone) the English
 * text is used. The lookup is by the loaded module, not a registration, so no module has to
 * remember to install anything and a primitive never loads Lua code of its own. */
#include <stdlib.h>
#include <string.h>

#include "lbind.h"

/* Push the catalogue's c_error function, or nothing and return 0. */
static int push_translator(lua_State *L) {
  int top = lua_gettop(L);
  if (lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) == LUA_TTABLE &&
      lua_getfield(L, -1, "ascope.i18n") == LUA_TTABLE && lua_getfield(L, -1, "c_error") == LUA_TFUNCTION) {
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    return 1;
  }
  lua_settop(L, top);
  return 0;
}

/* The error as a table: {fmt, args, file, offset, line, column, text}. */
static void push_fields(lua_State *L, const asc_error *err) {
  lua_createtable(L, 0, 7);
  lua_pushstring(L, err->fmt ? err->fmt : "%s");
  lua_setfield(L, -2, "fmt");
  lua_createtable(L, err->fmt ? err->nargs : 1, 0);
  if (err->fmt)
    for (int i = 0; i < err->nargs; i++) {
      lua_pushstring(L, asc_error_arg(err, i));
      lua_rawseti(L, -2, i + 1);
    }
  else { /* no template recorded: the English text is the one argument of "%s" */
    lua_pushstring(L, err->msg);
    lua_rawseti(L, -2, 1);
  }
  lua_setfield(L, -2, "args");
  lua_pushstring(L, err->file);
  lua_setfield(L, -2, "file");
  lua_pushinteger(L, err->offset);
  lua_setfield(L, -2, "offset");
  lua_pushinteger(L, err->line);
  lua_setfield(L, -2, "line");
  lua_pushinteger(L, err->column);
  lua_setfield(L, -2, "column");
  lua_pushstring(L, err->msg);
  lua_setfield(L, -2, "text");
}

void lasc_pusherrortext(lua_State *L, const asc_error *err) {
  luaL_checkstack(L, 8, NULL);
  if (push_translator(L)) {
    push_fields(L, err);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) return;
    lua_pop(L, 1); /* a failing catalogue must not hide the error itself */
  }
  char buf[sizeof err->file + sizeof err->msg + 64];
  asc_error_format(err, buf, sizeof buf);
  lua_pushstring(L, buf);
}

int lasc_pusherror(lua_State *L, const asc_error *err) {
  lua_pushnil(L);
  lasc_pusherrortext(L, err);
  lua_pushstring(L, err->fmt ? err->fmt : "");
  return 3;
}

int lasc_raise(lua_State *L, const asc_error *err) {
  lasc_pusherrortext(L, err);
  lua_error(L);
  abort(); /* not reached: lua_error does not return, which its declaration does not say */
}

int lasc_oom(lua_State *L) {
  asc_error err;
  asc_fail(&err, NULL, -1, 0, 0, "out of memory");
  lasc_raise(L, &err);
}
