/* Lua binding of the call-stack tree: stacktree.new() -> tree; tree:add(stack) -> the id of the
 * stack's innermost frame, or nil for a stack without frames; tree:ids(col) -> those ids for
 * every row of a string column, each distinct stack added once; tree:json([label_max]) -> the
 * "stackFrames" members as one string (a json writer writes them without it: w:frames(tree)).
 * It keeps the cost of memory_trace.json's stackFrames per distinct frame, not per row. */
#include "ascope/checked.h"
#include "ascope/stackjoin.h"
#include "ascope/stacktop.h"
#include "ascope/idmap.h"
#include "ascope/stacktree.h"
#include "lbind.h"

#include <string.h>

#define STACKTREE_MT "ascope.stacktree"

typedef struct {
  asc_stacktree *t;
} tree_ud;

asc_stacktree *lasc_checkstacktree(lua_State *L, int idx) {
  tree_ud *u = luaL_checkudata(L, idx, STACKTREE_MT);
  if (!u->t) luaL_error(L, "stacktree: already freed");
  return u->t;
}

static asc_stacktree *check_tree(lua_State *L) { return lasc_checkstacktree(L, 1); }

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

/* tree:ids(col) -> integer column: per row of a string column, the id of its stack's innermost
 * frame (missing for no stack or one without frames). Each distinct string is added once and
 * no Lua string is made of it. The tree reads the frames' text from the column's string table,
 * which it keeps alive; a column of another table (there is one a state) has its frames copied. */
static int tree_ids(lua_State *L) {
  asc_stacktree *t = check_tree(L);
  asc_col *c = lasc_checkcolumn(L, 2);
  luaL_argcheck(L, c->kind == ASC_STR, 2, "a string column expected");
  lua_settop(L, 2);
  lua_getiuservalue(L, 2, 1); /* 3: the column's string table */
  asc_strtab *st = lasc_checkstrings(L, 3);
  int kept = lua_getiuservalue(L, 1, 1) != LUA_TNIL; /* 4: the tree's table, if any */
  int by_ref = !kept || lua_rawequal(L, 3, 4);
  if (!kept) {
    lua_pushvalue(L, 3);
    lua_setiuservalue(L, 1, 1);
  }
  size_t nstr = (size_t)asc_strtab_count(st) + 1, slots = nstr, bytes;
  asc_idmap *map = lasc_push_idmap(L, nstr, c->n, &slots); /* the leaves by string id, or by its number */
  if (asc_size_mul(slots, sizeof(int64_t), &bytes)) return luaL_error(L, "stacktree: too many strings");
  int64_t *leaf_of = lasc_scratch(L, 1, bytes);
  for (size_t i = 0; i < slots; i++) leaf_of[i] = -1;
  asc_col out;
  asc_col_init(&out, ASC_I64);
  asc_col *o = lasc_pushcolumn(L, &out, 0);
  if (asc_col_reserve(o, c->n)) return luaL_error(L, "stacktree: out of memory");
  for (size_t i = 0; i < c->n; i++) {
    uint32_t id = c->v.s[i];
    int64_t v = 0;
    if (id && id < nstr) {
      size_t at = map ? asc_idmap_number(map, id) : id;
      if (leaf_of[at] < 0) {
        uint32_t leaf = 0;
        int r;
        if (by_ref) {
          r = asc_stacktree_add_interned(t, st, id, &leaf);
        } else {
          size_t len;
          const char *s = asc_strtab_get(st, id, &len);
          r = s ? asc_stacktree_add(t, s, len, &leaf) : 0;
        }
        if (r) return luaL_error(L, "stacktree: out of memory");
        leaf_of[at] = leaf;
      }
      v = leaf_of[at];
    }
    if (v ? asc_col_push_i64(o, v) : asc_col_push_null(o)) return luaL_error(L, "stacktree: out of memory");
  }
  return 1;
}

static void put_lua(void *ud, const char *p, size_t n) { luaL_addlstring(ud, p, n); }

/* tree:json([label_max]): the members text as one string (names cut as labels of at most
 * label_max bytes when given) */
static int tree_json(lua_State *L) {
  asc_stacktree *t = check_tree(L);
  lua_Integer max = luaL_optinteger(L, 2, -1);
  luaL_argcheck(L, max >= 0 || lua_isnoneornil(L, 2), 2, "not negative");
  luaL_Buffer b; /* the tree's writer leaves the Lua stack alone, as the buffer needs */
  luaL_buffinit(L, &b);
  if (asc_stacktree_write(t, max < 0 ? SIZE_MAX : (size_t)max, put_lua, &b))
    return luaL_error(L, "stacktree: out of memory");
  luaL_pushresult(&b);
  return 1;
}

/* stacktree.top(col [, blank]) -> string column: per row of a string column of call stacks,
 * its top frame (see ascope/stacktop.h; "" for a stack whose top frame is blank, or missing
 * when blank is false; missing where the stack is). Each distinct stack is read once, in C; a
 * stack that is its own top frame keeps its id, so a huge frame without separators is never
 * copied. The result shares the column's string table. */
#define BLANK_TOP UINT32_MAX /* top_of's mark of a blank top frame when blank is false */
static int stack_top(lua_State *L) {
  asc_col *c = lasc_checkcolumn(L, 1);
  luaL_argcheck(L, c->kind == ASC_STR, 1, "a string column expected");
  int keep_blank = lua_isnoneornil(L, 2) || lua_toboolean(L, 2);
  lua_settop(L, 1);
  lua_getiuservalue(L, 1, 1); /* 2: the string table */
  asc_strtab *st = lasc_checkstrings(L, 2);
  size_t nstr = (size_t)asc_strtab_count(st) + 1, slots = nstr, bytes;
  asc_idmap *map = lasc_push_idmap(L, nstr, c->n, &slots); /* the tops by string id, or by its number */
  if (asc_size_mul(slots, sizeof(uint32_t), &bytes)) return luaL_error(L, "stacktree: too many strings");
  uint32_t *top_of = lasc_scratch(L, 1, bytes); /* 0 = not seen yet */
  memset(top_of, 0, bytes);
  asc_col out;
  asc_col_init(&out, ASC_STR);
  asc_col *o = lasc_pushcolumn(L, &out, 2); /* on top: returned */
  if (asc_col_reserve(o, c->n ? c->n : 1)) return luaL_error(L, "stacktree: out of memory");
  for (size_t i = 0; i < c->n; i++) {
    uint32_t id = c->v.s[i], top = 0;
    if (id && id < nstr) {
      size_t k = map ? asc_idmap_number(map, id) : id;
      if (!top_of[k]) {
        size_t len, at, tlen;
        const char *s = asc_strtab_get(st, id, &len);
        asc_stack_top(s, len, &at, &tlen);
        if (tlen == 0 && !keep_blank) {
          top_of[k] = BLANK_TOP;
        } else if (tlen == len) {
          top_of[k] = id;
        } else if (asc_strtab_intern(st, s + at, tlen, &top_of[k])) { /* s stays where it is */
          return luaL_error(L, "stacktree: out of memory");
        }
      }
      top = top_of[k] == BLANK_TOP ? 0 : top_of[k];
    }
    if (asc_col_push_str(o, top)) return luaL_error(L, "stacktree: out of memory");
  }
  return 1;
}

/* stacktree.join(chains, frames [, max_bytes [, depths]]) -> stacks, keys, missing: a call stack
 * per run of equal chain keys (integer column) from the frames of its rows (string column,
 * innermost first), joined with ";\r\n" in C (see ascope/stackjoin.h); keys: each stack's chain
 * key; missing counts the frames without a value. nil, "too big", bytes when the stacks would
 * take more than max_bytes (no bound by default); with depths (integer column), nil, "order"
 * when the rows are not in (chain, depth) order. */
static int stack_join(lua_State *L) {
  asc_col *chains = lasc_checkcolumn(L, 1), *frames = lasc_checkcolumn(L, 2), *depths = NULL;
  luaL_argcheck(L, asc_kind_integer(chains->kind), 1, "an integer column expected");
  luaL_argcheck(L, frames->kind == ASC_STR && frames->n == chains->n, 2,
                "a string column as long as chains expected");
  lua_Integer max = lua_isnoneornil(L, 3) ? LUA_MAXINTEGER : luaL_checkinteger(L, 3);
  luaL_argcheck(L, max >= 0, 3, "not negative");
  if (!lua_isnoneornil(L, 4)) {
    depths = lasc_checkcolumn(L, 4);
    luaL_argcheck(L, asc_kind_integer(depths->kind) && depths->n == chains->n, 4,
                  "an integer column as long as chains expected");
  }
  lua_settop(L, 4);
  lua_getiuservalue(L, 2, 1); /* 5: the frames' string table */
  asc_strtab *from = lasc_checkstrings(L, 5);
  asc_col out, keys;
  asc_col_init(&out, ASC_STR);
  asc_col_init(&keys, ASC_I64);
  asc_col *o = lasc_pushcolumn(L, &out, 0);  /* 6: in the shared string table */
  asc_col *k = lasc_pushcolumn(L, &keys, 0); /* 7 */
  asc_strtab *to = lasc_column_strings(L, 6);
  asc_stackjoin_info info;
  int rc = asc_stack_join(chains, depths, frames, from, to, (uint64_t)max > SIZE_MAX ? SIZE_MAX : (size_t)max,
                          o, k, &info);
  if (rc < 0) return luaL_error(L, "stacktree.join: out of memory");
  if (rc > 0) {
    lua_pushnil(L);
    lua_pushstring(L, rc == 1 ? "too big" : "order");
    lua_pushinteger(L, (lua_Integer)info.bytes);
    return 3;
  }
  lua_pushinteger(L, (lua_Integer)info.missing);
  return 3;
}

static int tree_gc(lua_State *L) {
  tree_ud *u = luaL_checkudata(L, 1, STACKTREE_MT);
  asc_stacktree_free(u->t);
  u->t = NULL;
  return 0;
}

static int tree_new(lua_State *L) {
  tree_ud *u = lua_newuserdatauv(L, sizeof *u, 1); /* the string table of its frames */
  u->t = NULL;
  luaL_setmetatable(L, STACKTREE_MT);
  u->t = asc_stacktree_new();
  if (!u->t) return luaL_error(L, "stacktree: out of memory");
  return 1;
}

int lasc_open_stacktree(lua_State *L) {
  static const luaL_Reg methods[] = {{"add", tree_add}, {"ids", tree_ids}, {"json", tree_json}, {NULL, NULL}};
  if (luaL_newmetatable(L, STACKTREE_MT)) {
    lua_pushcfunction(L, tree_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  static const luaL_Reg fns[] = {{"new", tree_new}, {"top", stack_top}, {"join", stack_join}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
