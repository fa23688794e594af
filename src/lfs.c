/* Lua binding of the file-system helpers: fs.walk, fs.stat, fs.mkdirs, fs.write and fs.create (atomic),
 * fs.cpus, fs.isatty, fs.clock, fs.remove_tree. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ascope/fs.h"
#include "lbind.h"

typedef struct {
  lua_State *L;
  int out, problems; /* problems: 0 until a folder cannot be read */
  int dirs, others;
  lua_Integer n;
  const asc_error *err; /* the walk's: what the last unreadable entry was, template and arguments */
} walk_ctx;

static int add_path(void *ud, const char *path, int is_dir) {
  walk_ctx *w = ud;
  if (is_dir == ASC_WALK_UNREADABLE) {
    if (!w->problems) {
      lua_newtable(w->L);
      w->problems = lua_gettop(w->L);
    }
    lasc_pusherrortext(w->L, w->err); /* path is the same message in English */
    lua_rawseti(w->L, w->problems, (lua_Integer)lua_rawlen(w->L, w->problems) + 1);
    return 0;
  }
  if (is_dir == ASC_WALK_OTHER ? !w->others : is_dir && !w->dirs) return 0;
  lua_pushstring(w->L, path);
  lua_rawseti(w->L, w->out, ++w->n);
  return 0;
}

/* fs.walk(root [, {dirs = true, others = true}]) -> sorted list of file paths (and folders, and
 * the names that are neither, such as FIFOs and links to nothing, when asked), and a list of
 * messages naming what could not be read (nil when everything could) */
static int l_walk(lua_State *L) {
  const char *root = luaL_checkstring(L, 1);
  int dirs = 0, others = 0;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "dirs");
    dirs = lua_toboolean(L, -1);
    lua_getfield(L, 2, "others");
    others = lua_toboolean(L, -1);
    lua_pop(L, 2);
  }
  lua_newtable(L);
  asc_error err;
  walk_ctx w = {L, lua_gettop(L), 0, dirs, others, 0, &err};
  if (asc_walk(root, add_path, &w, &err) < 0) return lasc_pusherror(L, &err);
  if (!w.problems) return 1;
  lua_pushvalue(L, w.out);
  lua_pushvalue(L, w.problems);
  return 2;
}

/* fs.stat(path) -> {type = "file"|"dir"|"other", size, mtime} or nil, message */
static int l_stat(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct stat st;
  if (stat(path, &st) != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return 2;
  }
  lua_createtable(L, 0, 3);
  lua_pushstring(L, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : "other");
  lua_setfield(L, -2, "type");
  lua_pushinteger(L, (lua_Integer)st.st_size);
  lua_setfield(L, -2, "size");
  lua_pushinteger(L, (lua_Integer)st.st_mtime);
  lua_setfield(L, -2, "mtime");
  return 1;
}

static int l_mkdirs(lua_State *L) {
  asc_error err;
  if (asc_mkdirs(luaL_checkstring(L, 1), &err)) return lasc_pusherror(L, &err);
  lua_pushboolean(L, 1);
  return 1;
}

/* fs.write(path, data...) writes atomically: a temporary file renamed into place */
static int l_write(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int top = lua_gettop(L);
  asc_atomic a;
  asc_error err;
  if (asc_atomic_open(&a, path, &err)) return lasc_pusherror(L, &err);
  for (int i = 2; i <= top; i++) {
    size_t n;
    const char *s = lua_tolstring(L, i, &n);
    if (!s) {
      asc_atomic_abort(&a);
      return luaL_argerror(L, i, "string expected");
    }
    asc_atomic_write(&a, s, n); /* an error is kept and reported by the commit */
  }
  if (asc_atomic_commit(&a, &err)) return lasc_pusherror(L, &err);
  lua_pushboolean(L, 1);
  return 1;
}

/* fs.create(path) -> file written to a temporary name: file:write(s...), file:close() -> true
 * or nil, message (renamed into place only when every byte reached the disk), file:abort() */
#define FILE_MT "ascope.fs.file"

static int file_write(lua_State *L) {
  asc_atomic *a = luaL_checkudata(L, 1, FILE_MT);
  if (!a->f) return luaL_error(L, "%s: file already closed", a->path);
  int top = lua_gettop(L);
  for (int i = 2; i <= top; i++) {
    size_t n;
    const char *s = luaL_checklstring(L, i, &n);
    asc_atomic_write(a, s, n); /* an error is kept and reported by close */
  }
  return 0;
}

static int file_close(lua_State *L) {
  asc_atomic *a = luaL_checkudata(L, 1, FILE_MT);
  if (!a->f) return luaL_error(L, "%s: file already closed", a->path);
  asc_error err;
  if (asc_atomic_commit(a, &err)) return lasc_pusherror(L, &err);
  lua_pushboolean(L, 1);
  return 1;
}

static int file_abort(lua_State *L) {
  asc_atomic_abort(luaL_checkudata(L, 1, FILE_MT));
  return 0;
}

static int l_create(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  asc_atomic *a = lua_newuserdatauv(L, sizeof *a, 0);
  memset(a, 0, sizeof *a);
  luaL_setmetatable(L, FILE_MT);
  asc_error err;
  if (asc_atomic_open(a, path, &err)) return lasc_pusherror(L, &err);
  return 1;
}

static int l_cpus(lua_State *L) {
  lua_pushinteger(L, asc_cpu_count());
  return 1;
}

/* fs.workers([jobs]) -> the worker count to use: jobs (default: the CPUs this process may use),
 * no more than the CPUs that are idle now. On a busy machine a second worker only queues behind
 * the others and costs the transfer of its results. */
static int l_workers(lua_State *L) {
  lua_Integer jobs = luaL_optinteger(L, 1, asc_cpu_count());
  luaL_argcheck(L, jobs >= 1, 1, "at least 1");
  lua_Integer free_ = asc_cpu_free();
  lua_pushinteger(L, jobs < free_ ? jobs : free_);
  return 1;
}

/* fs.clock() -> seconds on a monotonic wall clock: os.clock counts CPU time, which is not the
 * rate a user waits at while the disk reads */
static int l_clock(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
  return 1;
}

/* fs.isatty(fd): 1 = stdout, 2 = stderr */
static int l_isatty(lua_State *L) {
  lua_pushboolean(L, isatty((int)luaL_optinteger(L, 1, 1)));
  return 1;
}

static int l_realpath(lua_State *L) {
  char *p = realpath(luaL_checkstring(L, 1), NULL);
  if (!p) return 0;
  lua_pushstring(L, p);
  free(p);
  return 1;
}

static int l_remove_tree(lua_State *L);

typedef struct {
  lua_State *L;
  asc_col *lines, *texts;
  asc_strtab *st;
  int oom;
} grep_ctx;

static int grep_hit(void *ud, long long line, const char *text, size_t len) {
  grep_ctx *g = ud;
  uint32_t id;
  if (asc_col_push_i64(g->lines, line) || asc_strtab_intern(g->st, text, len, &id) ||
      asc_col_push_str(g->texts, id))
    return g->oom = 1;
  return 0;
}

/* fs.grep(path, {literal, ...}) -> lines (integer column), texts (string column) of the lines
 * holding any of the literals, or nil, message */
static int l_grep(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  int n = (int)lua_rawlen(L, 2);
  const char **lits = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *lits, 0);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 2, i + 1);
    lits[i] = luaL_checkstring(L, -1);
    lua_pop(L, 1); /* kept alive by the table */
  }
  asc_col a, b;
  asc_col_init(&a, ASC_I64);
  asc_col_init(&b, ASC_STR);
  grep_ctx g = {L, lasc_pushcolumn(L, &a, 0), NULL, NULL, 0};
  g.texts = lasc_pushcolumn(L, &b, 0);
  g.st = lasc_pushstrings(L);
  lua_pop(L, 1);
  asc_error err;
  if (asc_grep(path, lits, (size_t)n, grep_hit, &g, &err)) return lasc_pusherror(L, &err);
  if (g.oom) return lasc_oom(L);
  return 2;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* fs.list(dir) -> sorted names in dir (not recursive, without . and ..) or nil, message */
static int l_list(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  DIR *d = opendir(dir);
  if (!d) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", dir, strerror(errno));
    return 2;
  }
  lua_newtable(L);
  lua_Integer n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    lua_pushstring(L, de->d_name);
    lua_rawseti(L, -2, ++n);
  }
  closedir(d);
  const char **names = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *names, 0);
  for (lua_Integer i = 0; i < n; i++) {
    lua_rawgeti(L, -2, i + 1);
    names[i] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  qsort(names, (size_t)n, sizeof *names, by_name);
  lua_createtable(L, (int)n, 0);
  for (lua_Integer i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

int lasc_open_fs(lua_State *L) {
  static const luaL_Reg fns[] = {{"walk", l_walk},     {"stat", l_stat},   {"mkdirs", l_mkdirs},
                                 {"write", l_write},   {"cpus", l_cpus},   {"workers", l_workers},
                                 {"isatty", l_isatty}, {"clock", l_clock}, {"realpath", l_realpath},
                                 {"list", l_list},     {"grep", l_grep},   {"remove_tree", l_remove_tree},
                                 {"create", l_create}, {NULL, NULL}};
  static const luaL_Reg file_methods[] = {
      {"write", file_write}, {"close", file_close}, {"abort", file_abort}, {NULL, NULL}};
  if (luaL_newmetatable(L, FILE_MT)) {
    lua_pushcfunction(L, file_abort); /* never closed: leave no half file behind */
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, file_methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, fns);
  return 1;
}

/* fs.remove_tree(path): remove a folder and everything in it (scratch output). Links are removed,
 * never followed, and there is no depth limit: a tree the walk above refuses (too deep) is still
 * scratch to clear. Returns true, or nil and the first path that could not be removed. */
static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  return (flag == FTW_DP ? rmdir(path) : unlink(path)) != 0 ? -1 : 0;
}

static int l_remove_tree(lua_State *L) {
  const char *root = luaL_checkstring(L, 1);
  struct stat st;
  if (lstat(root, &st) != 0 && errno == ENOENT) return lua_pushboolean(L, 1), 1;
  if (nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: could not remove: %s", root, strerror(errno));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}
