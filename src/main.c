/* The ascope executable: a Lua 5.4 interpreter with LPeg, the ascope C primitives and the
 * bundled Lua files preloaded. All command handling lives in Lua (lua/ascope/main.lua). */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/fs.h"
#include "lbind.h"

typedef struct {
  const char *name;
  const char *chunk;
  const unsigned char *data;
  size_t len;
} asc_embedded;
extern const asc_embedded asc_embedded_files[];

int luaopen_lpeg(lua_State *L);

static const asc_embedded *find_embedded(const char *name) {
  for (const asc_embedded *e = asc_embedded_files; e->name; e++)
    if (strcmp(e->name, name) == 0) return e;
  return NULL;
}

/* package.searchers entry for the bundled modules */
static int embedded_searcher(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  const asc_embedded *e = find_embedded(name);
  if (!e) {
    lua_pushfstring(L, "no bundled module '%s'", name);
    return 1;
  }
  if (luaL_loadbuffer(L, (const char *)e->data, e->len, e->chunk) != LUA_OK) return lua_error(L);
  lua_pushstring(L, e->chunk + 1);
  return 2;
}

/* ascope_core.resource(path): the text of a bundled file such as "rules/timeline.lua" */
static int resource(lua_State *L) {
  const asc_embedded *e = find_embedded(luaL_checkstring(L, 1));
  if (!e) return 0;
  lua_pushlstring(L, (const char *)e->data, e->len);
  lua_pushstring(L, e->chunk);
  return 2;
}

static int open_core_with_resources(lua_State *L) {
  luaopen_ascope_core(L);
  lua_pushcfunction(L, resource);
  lua_setfield(L, -2, "resource");
  return 1;
}

static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  luaL_traceback(L, L, msg, 1);
  return 1;
}

static int run(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = lua_touserdata(L, 2);
  luaL_openlibs(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_lpeg);
  lua_setfield(L, -2, "lpeg");
  lua_pushcfunction(L, open_core_with_resources);
  lua_setfield(L, -2, "ascope_core");
  lua_pop(L, 1);
  /* bundled modules come right after package.preload */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers");
  for (lua_Integer i = (lua_Integer)lua_rawlen(L, -1); i >= 2; i--) {
    lua_rawgeti(L, -1, i);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushcfunction(L, embedded_searcher);
  lua_rawseti(L, -2, 2);
  lua_pop(L, 2);
  /* arg as in lua.c: arg[0] is the program, arg[1..] the words after it */
  lua_createtable(L, argc, 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i);
  }
  lua_setglobal(L, "arg");
  lua_getglobal(L, "require");
  lua_pushstring(L, "ascope.main");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "main");
  lua_getglobal(L, "arg");
  lua_call(L, 1, 1);
  return 1;
}

/* Columns are big (megabytes) and short-lived: a scan's columns, then the intermediate ones an
 * analysis lets go one after the other. glibc raises its mmap threshold to the size of the
 * first big block freed (up to 32 MiB), after which such blocks come from the heap, where a
 * growing column is copied on realloc and freed columns stay resident between live ones: on a
 * 256 MiB trace that held the timeline's peak at 1.7x its live columns. A fixed threshold keeps
 * every block of 256 KiB and more in its own mapping: it grows in place (mremap), its
 * untouched tail costs nothing and freeing it gives it back. */
static void tune_allocator(void) {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}

int main(int argc, char **argv) {
  tune_allocator();
  asc_atomic_cleanup_on_signals();
  /* past a file-size limit (ulimit -f) a write fails with EFBIG, which the writers report and
   * clean up after, rather than the signal ending the process with its temporary files left */
  signal(SIGXFSZ, SIG_IGN);
  lua_State *L = luaL_newstate();
  if (!L) {
    fputs("ascope: cannot create a Lua state (out of memory)\n", stderr);
    return 1;
  }
  lua_pushcfunction(L, msghandler);
  lua_pushcfunction(L, run);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 1);
  int code;
  if (status != LUA_OK) {
    fprintf(stderr, "ascope: %s\n", lua_tostring(L, -1));
    code = 1;
  } else {
    code = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
  }
  fflush(stdout);
  lua_close(L);
  return code;
}
