/* Lua binding of text re-encoding: iconv.convert(text, from, to [, name]). */
#include <stdlib.h>

#include "ascope/iconv.h"
#include "lbind.h"

/* iconv.convert(text, from, to [, name]) -> the text in `to`, or nil, message (naming `name`
 * and the byte offset of a character that does not convert).
 *   iconv.convert("\xe4\xb8\xad", "UTF-8", "GBK") --> "\xd6\xd0" */
static int l_convert(lua_State *L) {
  size_t n;
  const char *text = luaL_checklstring(L, 1, &n);
  const char *from = luaL_checkstring(L, 2);
  const char *to = luaL_checkstring(L, 3);
  const char *name = luaL_optstring(L, 4, NULL);
  char *out;
  size_t outn;
  asc_error err;
  if (asc_iconv(name, from, to, text, n, &out, &outn, &err)) return lasc_pusherror(L, &err);
  lua_pushlstring(L, out, outn);
  free(out);
  return 1;
}

int lasc_open_iconv(lua_State *L) {
  static const luaL_Reg fns[] = {{"convert", l_convert}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
