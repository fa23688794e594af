/* Lua binding of par: par.map(items, fn, {jobs = N}) runs fn(item, i) in worker processes and
 * returns results and errors by item index. Results come back in a small binary encoding of
 * Lua values: nil, booleans, numbers, strings, tables (no cycles) and columns. */
#include <errno.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ascope/fs.h"
#include "ascope/idmap.h"
#include "ascope/par.h"
#include "lbind.h"

/* ---- encoding ---- */

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Encoded bytes go to a buffer; with an fd, the buffer is written out in blocks as it fills
 * (a worker's result can be tens of megabytes). */
typedef struct {
  lasc_buf *b;
  int fd;
} sink;

enum { SINK_BLOCK = 1 << 20 };

static void drain(lua_State *L, sink *s) {
  if (s->fd >= 0 && write_all(s->fd, s->b->p, s->b->n))
    luaL_error(L, "par: cannot write a result: %s", strerror(errno));
  s->b->n = 0;
}

static void put(lua_State *L, sink *s, const void *p, size_t n) {
  if (s->fd >= 0 && n >= SINK_BLOCK) { /* a column's values: straight to the file */
    drain(L, s);
    if (write_all(s->fd, p, n)) luaL_error(L, "par: cannot write a result: %s", strerror(errno));
    return;
  }
  lasc_addl(L, s->b, p, n);
  if (s->fd >= 0 && s->b->n >= SINK_BLOCK) drain(L, s);
}

static void putc1(lua_State *L, sink *s, char c) { put(L, s, &c, 1); }

static void encode(lua_State *L, sink *b, int idx, int depth) {
  idx = lua_absindex(L, idx);
  if (depth > 100) luaL_error(L, "par: result nested too deep (a cycle?)");
  switch (lua_type(L, idx)) {
  case LUA_TNIL: putc1(L, b, 'n'); break;
  case LUA_TBOOLEAN: putc1(L, b, lua_toboolean(L, idx) ? 't' : 'f'); break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) {
      int64_t v = lua_tointeger(L, idx);
      putc1(L, b, 'i');
      put(L, b, &v, 8);
    } else {
      double d = lua_tonumber(L, idx);
      putc1(L, b, 'd');
      put(L, b, &d, 8);
    }
    break;
  case LUA_TSTRING: {
    size_t n;
    const char *s = lua_tolstring(L, idx, &n);
    uint64_t n64 = n;
    putc1(L, b, 's');
    put(L, b, &n64, 8);
    put(L, b, s, n);
    break;
  }
  case LUA_TTABLE: {
    uint64_t count = 0;
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) count++;
    putc1(L, b, 'T');
    put(L, b, &count, 8);
    luaL_checkstack(L, 4, "par");
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
      encode(L, b, -2, depth + 1);
      encode(L, b, -1, depth + 1);
    }
    break;
  }
  case LUA_TUSERDATA: {
    asc_col *c = luaL_testudata(L, idx, ASC_COLUMN_MT);
    if (!c) {
      luaL_error(L, "par: cannot send a %s", luaL_typename(L, idx));
      return;
    }
    uint64_t n = c->n;
    putc1(L, b, 'C');
    putc1(L, b, (char)c->kind);
    put(L, b, &n, 8);
    if (c->kind != ASC_STR) {
      put(L, b, c->v.p, c->n * asc_kind_size(c->kind));
    } else {
      /* ids are private to this process: send each distinct string once, then per-row
       * indexes into that list (call stacks repeat a lot) */
      asc_strtab *st = lasc_column_strings(L, idx);
      /* numbered in order of first meeting: by an array by id, or by the idmap when the
       * table (every string the process has met, other ranks' too) is much larger than the
       * column */
      size_t nids = (size_t)asc_strtab_count(st) + 1;
      int by_map = asc_idmap_wanted(nids, c->n);
      size_t bytes = by_map ? asc_idmap_bytes(c->n) : nids * sizeof(uint32_t);
      if (bytes == SIZE_MAX) luaL_error(L, "par: a column too long");
      /* userdata, so that an error while writing does not leak them */
      luaL_checkstack(L, 3, "par");
      void *mem = lua_newuserdatauv(L, (by_map ? sizeof(asc_idmap) : 0) + bytes, 0);
      asc_idmap *map = by_map ? mem : NULL;
      uint32_t *by_id = by_map ? NULL : mem, *order = NULL, nuniq = 0;
      if (map) {
        asc_idmap_init(map, map + 1, c->n);
      } else {
        memset(by_id, 0, bytes);
        order = lua_newuserdatauv(L, (c->n + 1) * sizeof *order, 0);
      }
      uint32_t *local = lua_newuserdatauv(L, (c->n + 1) * sizeof *local, 0);
      for (size_t i = 0; i < c->n; i++) {
        uint32_t id = c->v.s[i];
        if (map) {
          local[i] = asc_idmap_number(map, id);
        } else {
          if (id && !by_id[id]) order[nuniq++] = id, by_id[id] = nuniq;
          local[i] = id ? by_id[id] : 0;
        }
      }
      if (map) nuniq = map->n;
      put(L, b, &nuniq, 4);
      for (uint32_t u = 0; u < nuniq; u++) {
        size_t len = 0;
        const char *s = asc_strtab_get(st, map ? map->ids[u] : order[u], &len);
        uint32_t l32 = (uint32_t)len;
        put(L, b, &l32, 4);
        put(L, b, s, len);
      }
      put(L, b, local, c->n * 4);
      lua_pop(L, map ? 2 : 3);
    }
    break;
  }
  default: luaL_error(L, "par: cannot send a %s", luaL_typename(L, idx));
  }
}

typedef struct {
  const char *p;
  size_t n, at;
  int mapped;      /* p is a page-aligned private mapping (asc_par_done's mapped) */
  size_t released; /* the pages before this offset are dropped */
} reader;

/* A worker's result is mapped while it is decoded, and its strings are interned as they are
 * read: with a distinct call stack per operator the strings are most of the result, and the
 * pages already read would otherwise stay resident beside their interned copy. Dropped a few
 * MiB at a time (whole pages only; a dropped page would read back from the file if touched). */
static void release_read(reader *r) {
  enum { STEP = 4 << 20 };
  if (!r->mapped || r->at - r->released < STEP) return;
  size_t page = (size_t)sysconf(_SC_PAGESIZE), upto = r->at / page * page;
  if (upto > r->released &&
      madvise((char *)(uintptr_t)r->p + r->released, upto - r->released, MADV_DONTNEED) == 0)
    r->released = upto;
}

static int take(reader *r, void *out, size_t n) {
  if (r->at + n > r->n) return -1;
  memcpy(out, r->p + r->at, n);
  r->at += n;
  return 0;
}

/* Pushes one value; -1 on malformed input (nothing pushed). */
static int decode(lua_State *L, reader *r, asc_strtab *st) {
  char tag;
  if (take(r, &tag, 1)) return -1;
  luaL_checkstack(L, 4, "par");
  switch (tag) {
  case 'n': lua_pushnil(L); return 0;
  case 't': lua_pushboolean(L, 1); return 0;
  case 'f': lua_pushboolean(L, 0); return 0;
  case 'i': {
    int64_t v;
    if (take(r, &v, 8)) return -1;
    lua_pushinteger(L, v);
    return 0;
  }
  case 'd': {
    double d;
    if (take(r, &d, 8)) return -1;
    lua_pushnumber(L, d);
    return 0;
  }
  case 's': {
    uint64_t n;
    if (take(r, &n, 8) || r->at + n > r->n) return -1;
    lua_pushlstring(L, r->p + r->at, n);
    r->at += n;
    return 0;
  }
  case 'T': {
    uint64_t count;
    if (take(r, &count, 8)) return -1;
    lua_newtable(L);
    for (uint64_t i = 0; i < count; i++) {
      if (decode(L, r, st)) return lua_pop(L, 1), -1;
      if (decode(L, r, st)) return lua_pop(L, 2), -1;
      if (lua_isnil(L, -2))
        lua_pop(L, 2);
      else
        lua_rawset(L, -3);
    }
    return 0;
  }
  case 'C': {
    char kind;
    uint64_t n;
    if (take(r, &kind, 1) || take(r, &n, 8) || kind < 0 || kind > ASC_U32) return -1;
    /* every row takes 4 bytes or more of the input: a count beyond that is malformed */
    if (n > (r->n - r->at) / 4) return -1;
    asc_col c;
    asc_col_init(&c, (asc_kind)kind);
    if (asc_col_reserve(&c, n + 1)) lasc_oom(L);
    if (kind != ASC_STR) {
      size_t w = asc_kind_size((asc_kind)kind);
      if (n > (r->n - r->at) / w) return asc_col_free(&c), -1;
      memcpy(c.v.p, r->p + r->at, n * w);
      r->at += n * w;
      release_read(r);
    } else {
      uint32_t nuniq;
      if (take(r, &nuniq, 4) || nuniq > r->n) return asc_col_free(&c), -1;
      uint32_t *ids = malloc(((size_t)nuniq + 1) * sizeof *ids);
      if (!ids) lasc_oom(L);
      ids[0] = 0;
      for (uint32_t u = 1; u <= nuniq; u++) {
        uint32_t len;
        if (take(r, &len, 4) || r->at + len > r->n) return free(ids), asc_col_free(&c), -1;
        if (asc_strtab_intern(st, r->p + r->at, len, &ids[u])) lasc_oom(L);
        r->at += len;
        release_read(r);
      }
      if (n > (r->n - r->at) / 4) return free(ids), asc_col_free(&c), -1;
      const char *p = r->p + r->at;
      for (uint64_t i = 0; i < n; i++) {
        uint32_t k;
        memcpy(&k, p + i * 4, 4);
        if (k > nuniq) return free(ids), asc_col_free(&c), -1;
        c.v.s[i] = ids[k];
      }
      r->at += n * 4;
      free(ids);
      release_read(r);
    }
    c.n = n;
    lasc_pushcolumn(L, &c, 0);
    return 0;
  }
  }
  return -1;
}

/* ---- par.map ---- */

typedef struct {
  lua_State *L;
  int items, fn, results, errors;
  size_t nfail;
  int stop_gc;
} map_ctx;

static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg && getenv("ASCOPE_DEBUG"))
    luaL_traceback(L, L, msg, 1);
  else if (!msg)
    lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  return 1;
}

/* send_result(fd, ok, value): the encoded item result, written to fd */
static int send_result(lua_State *L) {
  sink s = {lasc_newbuf(L), (int)lua_tointeger(L, 1)};
  putc1(L, &s, lua_toboolean(L, 2) ? 'O' : 'E');
  encode(L, &s, 3, 0);
  drain(L, &s);
  return 0;
}

/* fn(items[i + 1], i + 1), protected: pushes the message handler and the result or error;
 * returns whether it succeeded. */
static int call_item(map_ctx *m, size_t i) {
  lua_State *L = m->L;
  lua_pushcfunction(L, traceback);
  int h = lua_gettop(L);
  lua_pushvalue(L, m->fn);
  lua_rawgeti(L, m->items, (lua_Integer)i + 1);
  lua_pushinteger(L, (lua_Integer)i + 1);
  return lua_pcall(L, 2, 1, h) == LUA_OK;
}

static int do_item(void *ud, size_t i, int fd) {
  map_ctx *m = ud;
  lua_State *L = m->L;
  int top = lua_gettop(L); /* as it was for the next item this worker does */
  /* a collection would write mark bits into every page of the inherited heap, copying it */
  if (m->stop_gc) lua_gc(L, LUA_GCSTOP);
  int ok = call_item(m, i);
  /* encoding runs protected too: an error must not unwind into the parent's frames, which this
   * process inherited; a result that cannot be sent becomes the item's error */
  lua_pushcfunction(L, send_result);
  lua_pushinteger(L, fd);
  lua_pushboolean(L, ok);
  lua_pushvalue(L, -4);
  int code = 0;
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    if (!msg) msg = "par: cannot send the result", len = strlen(msg);
    uint64_t n64 = len;
    if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) != 0)
      code = 2;
    else if (write_all(fd, "Es", 2) || write_all(fd, (const char *)&n64, 8) || write_all(fd, msg, len))
      code = 2;
  }
  lua_settop(L, top);
  return code;
}

static void item_done(void *ud, size_t i, const char *data, size_t len, int status, const asc_error *why,
                      int mapped) {
  map_ctx *m = ud;
  lua_State *L = m->L;
  asc_strtab *st = lasc_pushstrings(L); /* kept on the stack: decoding may collect garbage */
  reader r = {data, len, 0, mapped, 0};
  char tag = 0;
  if (status == 0 && len > 0 && take(&r, &tag, 1) == 0 && decode(L, &r, st) == 0) {
    lua_rawseti(L, tag == 'O' ? m->results : m->errors, (lua_Integer)i + 1);
    lua_pop(L, 1);
    if (tag != 'O') m->nfail++;
    return;
  }
  lua_pop(L, 1);
  m->nfail++;
  asc_error none;
  if (!why || !why->msg[0]) why = &none, asc_fail(&none, NULL, -1, 0, 0, "worker sent no result");
  lasc_pusherrortext(L, why);
  lua_rawseti(L, m->errors, (lua_Integer)i + 1);
}

/* Item i in this process: same semantics, no fork. */
static void run_here(void *ud, size_t i) {
  map_ctx *m = ud;
  int ok = call_item(m, i);
  lua_rawseti(m->L, ok ? m->results : m->errors, (lua_Integer)i + 1);
  lua_pop(m->L, 1); /* the message handler */
  if (!ok) m->nfail++;
}

/* par.map(items, fn [, {jobs = N, gc = false, here = true, fresh = true, zygote_after_mb = 32}])
 *   -> results, errors, failed_count
 * A worker does item after item (it leaves once it has grown by ASC_PAR_RETIRE_AFTER_KB); each
 * item must stand on its own, as all do in one process with jobs = 1.
 * gc = false stops the garbage collector in the workers: right for short jobs that only read
 * the parent's data (writing outputs), wrong for jobs that build a lot of garbage; each item
 * then has a process of its own, as with fresh = true.
 * here = true: when every item gets a worker of its own, the calling process does the first
 * item itself instead of waiting idle (and its result needs no sending). A Lua error in that
 * item is still its own; a crash in C code would end the caller, as with jobs = 1.
 * zygote_after_mb (default 32): with more items than jobs, new workers are forked by a process
 * forked when the map starts once the calling process has grown by this many MiB (0: from the
 * first worker); see ascope/par.h. */
static int l_map(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  int jobs = asc_cpu_count(), stop_gc = 0, here = 0, fresh = 0;
  asc_par_opts o = {ASC_PAR_ZYGOTE_AFTER_KB, ASC_PAR_RETIRE_AFTER_KB};
  if (lua_istable(L, 3)) {
    lua_getfield(L, 3, "jobs");
    lua_Integer j = luaL_optinteger(L, -1, jobs);
    jobs = j < 1 ? 1 : j > ASC_PAR_MAX_JOBS ? ASC_PAR_MAX_JOBS : (int)j; /* asc_par_run clamps further */
    lua_getfield(L, 3, "gc");
    stop_gc = lua_isboolean(L, -1) && !lua_toboolean(L, -1);
    lua_getfield(L, 3, "here");
    here = lua_toboolean(L, -1);
    lua_getfield(L, 3, "fresh");
    fresh = lua_toboolean(L, -1);
    lua_getfield(L, 3, "zygote_after_mb");
    if (!lua_isnoneornil(L, -1) && !lua_isnumber(L, -1))
      return luaL_error(L, "par.map: zygote_after_mb must be a number, got a %s", luaL_typename(L, -1));
    lua_Number mb = luaL_optnumber(L, -1, (lua_Number)ASC_PAR_ZYGOTE_AFTER_KB / 1024);
    o.zygote_after_kb = !(mb > 0) ? 0 : mb >= 1e9 ? 1000000000L * 1024 : (long)(mb * 1024); /* NaN: 0 */
    lua_pop(L, 5);
  }
  if (stop_gc || fresh) o.retire_after_kb = 0;
  lua_settop(L, 2);
  lua_newtable(L);
  lua_newtable(L);
  map_ctx m = {L, 1, 2, 3, 4, 0, stop_gc};
  size_t n = (size_t)lua_rawlen(L, 1);
  if (jobs <= 1 || n <= 1) {
    for (size_t i = 0; i < n; i++) run_here(&m, i);
  } else {
    /* Every worker starts as a copy of this process, and counts its pages: garbage not yet
     * collected and free heap memory not yet given back would be in each of them, under what
     * the worker builds (`ascope memory` on a 1 GB trace: its writers' peak 231 -> 161 MB when
     * this came in). */
    lua_gc(L, LUA_GCCOLLECT);
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    asc_par_run_opts(n, jobs, &o, do_item, item_done, here ? run_here : NULL, &m);
  }
  lua_pushinteger(L, (lua_Integer)m.nfail);
  return 3;
}

/* par.encode(value) / par.decode(bytes): the same encoding, for caches and tests */
static int l_encode(lua_State *L) {
  lua_settop(L, 1);
  sink s = {lasc_newbuf(L), -1};
  encode(L, &s, 1, 0);
  lua_pushlstring(L, s.b->p, s.b->n);
  return 1;
}

static int l_decode(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  asc_strtab *st = lasc_pushstrings(L); /* kept on the stack: decoding may collect garbage */
  reader r = {s, n, 0, 0, 0};
  if (decode(L, &r, st) || r.at != n) return luaL_error(L, "par.decode: malformed data");
  return 1;
}

int lasc_open_par(lua_State *L) {
  static const luaL_Reg fns[] = {{"map", l_map}, {"encode", l_encode}, {"decode", l_decode}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
