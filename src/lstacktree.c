/* Lua binding of the call-stack tree: stacktree.new() -> tree; tree:add(stack) -> the id of the
 * stack's innermost frame, or nil for a stack without frames; tree:json() -> the "stackFrames"
 * members created so far. Called once per distinct stack (through col:map), it keeps the cost
 * of memory_trace.json's stackFrames per distinct frame, not per row. */
#include "ascope/stacktree.h"
#include "lbind.h"

#define STACKTREE_MT "ascope.stacktree"

typedef struct {
  asc_stacktree *t;
} tree_ud;

static asc_stacktree *check_tree(lua_State *L) {
  tree_ud *u = luaL_checkudata(L, 1, STACKTREE_MT);
  if (!u->t) luaL_error(L, "stacktree: already freed");
  return u->t;
}

static int tree_add(lua_State *L) {
  asc_stacktree *t = check_tree(L);
  size_t n;
  const char *s = luaL_checklstring(L, 2, &n);
  uint32_t leaf;
  if (asc_stacktree_add(t, s, n, &leaf)) return luaL_error(L, "stacktree: out of memory");
  if (leaf)
    lua_pushinteger(L, (lua_Integer)leaf);
  else
    lua_pushnil(L);
  return 1;
}

static int tree_json(lua_State *L) {
  size_t n;
  const char *s = asc_stacktree_json(check_tree(L), &n);
  lua_pushlstring(L, s, n);
  return 1;
}

static int tree_gc(lua_State *L) {
  tree_ud *u = luaL_checkudata(L, 1, STACKTREE_MT);
  asc_stacktree_free(u->t);
  u->t = NULL;
  return 0;
}

static int tree_new(lua_State *L) {
  tree_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->t = NULL;
  luaL_setmetatable(L, STACKTREE_MT);
  u->t = asc_stacktree_new();
  if (!u->t) return luaL_error(L, "stacktree: out of memory");
  return 1;
}

int lasc_open_stacktree(lua_State *L) {
  static const luaL_Reg methods[] = {{"add", tree_add}, {"json", tree_json}, {NULL, NULL}};
  if (luaL_newmetatable(L, STACKTREE_MT)) {
    lua_pushcfunction(L, tree_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {{"new", tree_new}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
