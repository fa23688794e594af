/* Lua binding of POSIX extended regular expressions: regex.compile(pattern [, "i"]) returns a
 * handle or nil, message; handle:find(text) tells whether the pattern matches in text. */
#include <string.h>

#include "ascope/regex.h"
#include "lbind.h"

#define REGEX_MT "ascope.regex"

typedef struct lregex {
  asc_regex *re;
} lregex;

static lregex *check_regex(lua_State *L, int idx) {
  lregex *u = luaL_checkudata(L, idx, REGEX_MT);
  if (!u->re) luaL_argerror(L, idx, "regex already freed");
  return u;
}

/* regex.compile(pattern [, flags]) -> handle | nil, message. flags: "i" ignores case. */
static int l_compile(lua_State *L) {
  size_t len;
  const char *p = luaL_checklstring(L, 1, &len);
  const char *flags = luaL_optstring(L, 2, "");
  int f = 0;
  for (const char *c = flags; *c; c++) {
    if (*c == 'i')
      f |= ASC_REGEX_ICASE;
    else
      return luaL_argerror(L, 2, "flags: only \"i\" is known");
  }
  lregex *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->re = NULL;
  luaL_setmetatable(L, REGEX_MT);
  asc_error err;
  if (asc_regex_compile(&u->re, p, len, f, &err)) {
    lua_pushnil(L);
    lasc_pusherrortext(L, &err);
    return 2;
  }
  return 1;
}

/* handle:find(text) -> boolean; nil text is no match */
static int m_find(lua_State *L) {
  lregex *u = check_regex(L, 1);
  if (lua_isnoneornil(L, 2)) {
    lua_pushboolean(L, 0);
    return 1;
  }
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  int rc = asc_regex_search(u->re, s, len);
  if (rc < 0)
    return luaL_error(L, "regex: cannot search a text of %I bytes (regexec failed)", (lua_Integer)len);
  lua_pushboolean(L, rc);
  return 1;
}

static int m_gc(lua_State *L) {
  lregex *u = luaL_checkudata(L, 1, REGEX_MT);
  asc_regex_free(u->re);
  u->re = NULL;
  return 0;
}

int lasc_open_regex(lua_State *L) {
  static const luaL_Reg methods[] = {{"find", m_find}, {NULL, NULL}};
  static const luaL_Reg fns[] = {{"compile", l_compile}, {NULL, NULL}};
  if (luaL_newmetatable(L, REGEX_MT)) {
    lua_pushcfunction(L, m_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, fns);
  return 1;
}
