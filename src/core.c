/* luaopen_ascope_core: the C primitives as one Lua module (ascope_core), with each primitive in
 * a field. A stock lua5.4 loads it from ascope_core.so; the ascope host links it statically. */
#include <csv.h>
#include <sqlite3.h>
#include <yajl/yajl_version.h>

#include "lbind.h"

static int versions(lua_State *L) {
  lua_newtable(L);
  lua_pushstring(L, LUA_RELEASE);
  lua_setfield(L, -2, "lua");
  lua_pushfstring(L, "%d.%d.%d", YAJL_MAJOR, YAJL_MINOR, YAJL_MICRO);
  lua_setfield(L, -2, "yajl");
  lua_pushfstring(L, "%d.%d.%d", CSV_MAJOR, CSV_MINOR, CSV_RELEASE);
  lua_setfield(L, -2, "libcsv");
  lua_pushstring(L, sqlite3_libversion());
  lua_setfield(L, -2, "sqlite");
  return 1;
}

int luaopen_ascope_core(lua_State *L) {
  static const struct {
    const char *name;
    lua_CFunction open;
  } mods[] = {{"column", lasc_open_column},
              {"json", lasc_open_json},
              {"csv", lasc_open_csv},
              {"interval", lasc_open_interval},
              {"match", lasc_open_match},
              {"bin", lasc_open_bin},
              {"db", lasc_open_db},
              {"fs", lasc_open_fs},
              {"par", lasc_open_par},
              {"regex", lasc_open_regex},
              {"iconv", lasc_open_iconv},
              {"logclass", lasc_open_logclass},
              {"stacktree", lasc_open_stacktree}};
  lasc_register_column(L);
  lua_newtable(L);
  for (size_t i = 0; i < sizeof mods / sizeof *mods; i++) {
    lua_pushcfunction(L, mods[i].open);
    lua_call(L, 0, 1);
    lua_setfield(L, -2, mods[i].name);
  }
  lua_pushcfunction(L, versions);
  lua_setfield(L, -2, "versions");
  return 1;
}
