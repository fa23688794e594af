/* Lua binding of the JSON primitive: scan (streaming, columnar), decode/load and encode for
 * small documents. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_parse.h>

#include "ascope/decimal.h"
#include "ascope/fs.h"
#include "ascope/json.h"
#include "ascope/json_escape.h"
#include "lbind.h"

/* ---------- scan ---------- */

static int parse_name(const char *key, int *in_args, const char **name) {
  if (strncmp(key, "args.", 5) == 0) {
    *in_args = 1;
    *name = key + 5;
  } else {
    *in_args = 0;
    *name = key;
  }
  return 0;
}

/* Values of a predicate as C strings that live in a Lua table kept on the stack. */
static const char **pred_values(lua_State *L, int vidx, size_t *n, int keep) {
  if (lua_type(L, vidx) == LUA_TTABLE) {
    *n = (size_t)lua_rawlen(L, vidx);
    const char **vals = lua_newuserdatauv(L, (*n + 1) * sizeof *vals, 0);
    lua_rawseti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
    for (size_t i = 0; i < *n; i++) {
      lua_rawgeti(L, vidx, (lua_Integer)i + 1);
      vals[i] = luaL_tolstring(L, -1, NULL);
      lua_rawseti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
      lua_pop(L, 1);
    }
    return vals;
  }
  *n = 1;
  const char **vals = lua_newuserdatauv(L, sizeof *vals, 0);
  lua_rawseti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
  vals[0] = luaL_tolstring(L, vidx, NULL);
  lua_rawseti(L, keep, (lua_Integer)lua_rawlen(L, keep) + 1);
  return vals;
}

static void push_meta(lua_State *L, asc_json_result *r, asc_strtab *st) {
  lua_newtable(L); /* meta */
  lua_newtable(L); /* processes */
  lua_newtable(L); /* threads */
  for (size_t i = 0; i < r->meta_what.n; i++) {
    size_t wn;
    const char *what = asc_strtab_get(st, r->meta_what.v.s[i], &wn);
    if (!what) continue;
    int proc = strcmp(what, "process_name") == 0, thr = strcmp(what, "thread_name") == 0;
    if (!proc && !thr) continue;
    lasc_pushcell(L, &r->meta_pid, st, i);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    if (proc) {
      lasc_pushcell(L, &r->meta_name, st, i);
      lua_settable(L, -4);
    } else {
      lua_pushvalue(L, -1);
      if (lua_gettable(L, -3) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);
        lua_settable(L, -5);
      }
      lasc_pushcell(L, &r->meta_tid, st, i);
      lasc_pushcell(L, &r->meta_name, st, i);
      lua_settable(L, -3);
      lua_pop(L, 2);
    }
  }
  lua_setfield(L, -3, "threads");
  lua_setfield(L, -2, "processes");
}

/* json.scan(path, {fields = {name = "string", ts = "us", ...}, where = {...}, meta = true,
 *                  partial = false, progress = fn, threads = N, min_range = bytes,
 *                  split_at = {offset, ...}}) */
static int l_scan(lua_State *L) {
  static const char *const types[] = {"string", "integer", "number", "us", NULL};
  const char *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  lua_newtable(L);                      /* 3: keeps predicate value strings alive */
  asc_strtab *st = lasc_pushstrings(L); /* 4 */

  size_t nf = 0, np = 0;
  lua_getfield(L, 2, "fields"); /* 5 */
  lua_getfield(L, 2, "where");  /* 6 */
  if (lua_istable(L, 5))
    for (lua_pushnil(L); lua_next(L, 5); lua_pop(L, 1)) nf++;
  if (lua_istable(L, 6))
    for (lua_pushnil(L); lua_next(L, 6); lua_pop(L, 1)) np++;
  asc_jfield *fields = lua_newuserdatauv(L, (nf + 1) * sizeof *fields, 0); /* 7 */
  asc_jpred *preds = lua_newuserdatauv(L, (np + 1) * sizeof *preds, 0);    /* 8 */
  lua_newtable(L);                                                         /* 9: field names in order */
  size_t k = 0;
  if (nf)
    for (lua_pushnil(L); lua_next(L, 5); lua_pop(L, 1)) {
      luaL_argcheck(L, lua_type(L, -2) == LUA_TSTRING, 2, "fields: keys must be field names");
      const char *key = lua_tostring(L, -2);
      lua_pushvalue(L, -2);
      lua_rawseti(L, 9, (lua_Integer)k + 1);
      parse_name(key, &fields[k].in_args, &fields[k].name);
      fields[k].type = (asc_jtype)luaL_checkoption(L, -1, NULL, types);
      k++;
    }
  k = 0;
  if (np)
    for (lua_pushnil(L); lua_next(L, 6); lua_pop(L, 1)) {
      luaL_argcheck(L, lua_type(L, -2) == LUA_TSTRING, 2, "where: keys must be field names");
      parse_name(lua_tostring(L, -2), &preds[k].in_args, &preds[k].name);
      int t = lua_type(L, -1);
      if (t == LUA_TBOOLEAN) {
        preds[k].op = lua_toboolean(L, -1) ? ASC_PRED_EXISTS : ASC_PRED_ABSENT;
        preds[k].values = NULL;
        preds[k].nvalues = 0;
      } else {
        preds[k].op = t == LUA_TTABLE ? ASC_PRED_IN : ASC_PRED_EQ;
        preds[k].values = pred_values(L, lua_gettop(L), &preds[k].nvalues, 3);
      }
      k++;
    }
  asc_json_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.fields = fields;
  spec.nfields = nf;
  spec.preds = preds;
  spec.npreds = np;
  spec.strings = st;
  lua_getfield(L, 2, "meta");
  spec.want_meta = lua_isnil(L, -1) ? 1 : lua_toboolean(L, -1);
  lua_getfield(L, 2, "partial");
  spec.partial = lua_toboolean(L, -1);
  lua_getfield(L, 2, "chunk");
  spec.chunk = (size_t)luaL_optinteger(L, -1, 0);
  /* threads: default the CPUs this process may use that are idle now (as fs.workers) */
  lua_getfield(L, 2, "threads");
  lua_Integer threads = lua_isnil(L, -1) ? asc_cpu_free() : luaL_checkinteger(L, -1);
  luaL_argcheck(L, threads >= 1, 2, "threads: at least 1");
  spec.threads = threads > 64 ? 64 : (int)threads;
  lua_getfield(L, 2, "min_range");
  spec.min_range = (long long)luaL_optinteger(L, -1, 0);
  lua_getfield(L, 2, "split_at"); /* tests: range starts used as they are */
  if (lua_istable(L, -1)) {
    size_t ns = (size_t)lua_rawlen(L, -1);
    luaL_argcheck(L, ns < 64, 2, "split_at: fewer than 64 offsets");
    long long *at = lua_newuserdatauv(L, (ns + 1) * sizeof *at, 0);
    for (size_t i = 0; i < ns; i++) {
      lua_rawgeti(L, -2, (lua_Integer)i + 1);
      at[i] = (long long)luaL_checkinteger(L, -1);
      lua_pop(L, 1);
    }
    spec.split_at = at;
    spec.nsplit_at = ns;
  }
  lasc_progress pc;
  if (lasc_progress_init(L, 2, &pc)) {
    spec.progress = lasc_progress_call;
    spec.progress_ud = &pc;
  }

  asc_json_result res;
  asc_error err;
  int rc = asc_json_scan(path, &spec, &res, &err);
  if (pc.failed) {
    if (!rc || spec.partial) asc_json_result_free(&res, nf);
    lasc_progress_rethrow(&pc);
  }
  /* a file that could not be opened (or read from its start) gave no rows to keep */
  if (rc && (!spec.partial || !res.cols)) return lasc_pusherror(L, &err);

  lua_createtable(L, 0, 6);
  lua_pushinteger(L, (lua_Integer)res.nrows);
  lua_setfield(L, -2, "n");
  lua_pushinteger(L, res.events);
  lua_setfield(L, -2, "events");
  lua_pushinteger(L, res.bytes);
  lua_setfield(L, -2, "bytes");
  lua_pushinteger(L, res.ranges);
  lua_setfield(L, -2, "ranges");
  if (res.warning[0]) {
    lua_pushstring(L, res.warning);
    lua_setfield(L, -2, "warning");
  }
  lua_createtable(L, 0, (int)nf);
  for (size_t i = 0; i < nf; i++) {
    lua_rawgeti(L, 9, (lua_Integer)i + 1);
    lasc_pushcolumn(L, &res.cols[i], 4);
    lua_settable(L, -3);
  }
  lua_setfield(L, -2, "columns");
  push_meta(L, &res, st);
  lua_setfield(L, -2, "meta");
  asc_json_result_free(&res, nf);
  if (rc) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "partial");
    lasc_pusherrortext(L, &err);
    return 2;
  }
  return 1;
}

/* ---------- decode ---------- */

#define NULL_KEY "ascope.json.null"
/* the largest file json.load reads */
#define ASC_JSON_LOAD_MAX (256 << 20)

typedef struct {
  lua_State *L;
  int depth, too_deep;
  int kind[256]; /* 1 map, 2 array */
  lua_Integer idx[256];
} dec;

static int attach(dec *d) {
  lua_State *L = d->L;
  if (d->depth == 0) return 1;
  if (d->kind[d->depth - 1] == 1)
    lua_rawset(L, -3);
  else
    lua_rawseti(L, -2, ++d->idx[d->depth - 1]);
  return 1;
}

static int d_null(void *ud) {
  dec *d = ud;
  lua_pushlightuserdata(d->L, NULL);
  return attach(d);
}
static int d_bool(void *ud, int b) {
  dec *d = ud;
  lua_pushboolean(d->L, b);
  return attach(d);
}
static int d_number(void *ud, const char *s, size_t n) {
  dec *d = ud;
  char buf[128];
  if (n >= sizeof buf) n = sizeof buf - 1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  if (!lua_stringtonumber(d->L, buf)) lua_pushnumber(d->L, strtod(buf, NULL));
  return attach(d);
}
static int d_string(void *ud, const unsigned char *s, size_t n) {
  dec *d = ud;
  luaL_checkstack(d->L, 4, "json nesting");
  lua_pushlstring(d->L, (const char *)s, n);
  return attach(d);
}
static int d_open(dec *d, int kind) {
  if (d->depth >= 255) return d->too_deep = 1, 0;
  luaL_checkstack(d->L, 4, "json nesting");
  lua_newtable(d->L);
  d->kind[d->depth] = kind;
  d->idx[d->depth] = 0;
  d->depth++;
  return 1;
}
static int d_start_map(void *ud) { return d_open(ud, 1); }
static int d_start_array(void *ud) { return d_open(ud, 2); }
static int d_key(void *ud, const unsigned char *s, size_t n) {
  dec *d = ud;
  lua_pushlstring(d->L, (const char *)s, n);
  return 1;
}
static int d_end(void *ud) {
  dec *d = ud;
  d->depth--;
  return attach(d);
}

static const yajl_callbacks dec_callbacks = {d_null,      d_bool, NULL,  NULL,          d_number, d_string,
                                             d_start_map, d_key,  d_end, d_start_array, d_end};

typedef struct {
  yajl_handle h;
} handle_ud;

static int handle_gc(lua_State *L) {
  handle_ud *u = lua_touserdata(L, 1);
  if (u->h) yajl_free(u->h);
  u->h = NULL;
  return 0;
}

/* Decode text; `name` is used in error messages. Returns the value, or nil and a message. */
static int decode_text(lua_State *L, const char *s, size_t n, const char *name) {
  dec *d = lua_newuserdatauv(L, sizeof *d, 0);
  memset(d, 0, sizeof *d);
  d->L = L;
  handle_ud *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->h = NULL;
  lua_newtable(L);
  lua_pushcfunction(L, handle_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  int base = lua_gettop(L);
  u->h = yajl_alloc(&dec_callbacks, NULL, d);
  if (!u->h) return lasc_oom(L);
  yajl_status st = yajl_parse(u->h, (const unsigned char *)s, n);
  int at_end = 0; /* the text ended inside the document: its end is the place to name */
  if (st == yajl_status_ok) {
    st = yajl_complete_parse(u->h);
    at_end = 1;
  }
  if (st != yajl_status_ok) {
    size_t at = st == yajl_status_error && !at_end ? yajl_get_bytes_consumed(u->h) : n;
    if (at > n) at = n;
    long line = 1, col = 1;
    for (size_t i = 0; i < at; i++) {
      if (s[i] == '\n')
        line++, col = 1;
      else
        col++;
    }
    unsigned char *m = d->too_deep ? NULL : yajl_get_error(u->h, 0, (const unsigned char *)s, n);
    for (unsigned char *q = m; q && *q; q++) /* yajl's message runs over lines: keep it on one */
      if (*q == '\n') *q = ' ';
    for (size_t k = m ? strlen((char *)m) : 0; k > 0 && m[k - 1] == ' '; k--) m[k - 1] = '\0';
    asc_error err;
    if (d->too_deep)
      asc_fail(&err, name, (long long)at, line, col, "nesting deeper than 255 levels is not supported");
    else
      asc_fail(&err, name, (long long)at, line, col, "invalid JSON: %s", m ? (char *)m : "?");
    if (m) yajl_free_error(u->h, m);
    return lasc_pusherror(L, &err);
  }
  if (lua_gettop(L) == base) {
    asc_error err;
    asc_fail(&err, NULL, -1, 0, 0, "%s: empty JSON document", name);
    return lasc_raise(L, &err);
  }
  return 1;
}

static int l_decode(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  return decode_text(L, s, n, luaL_optstring(L, 2, "(string)"));
}

/* json.checker(path) -> c: c:feed(block) and c:finish() -> true, or nil and "file:line:col (byte
 * N): invalid JSON ...": whether the blocks a reader reads, in order, are one JSON document (path
 * only names the file in the message) */
#define CHECKER_MT "ascope.json.checker"

typedef struct {
  asc_json_checker *c;
} checker_ud;

static int checker_gc(lua_State *L) {
  checker_ud *u = luaL_checkudata(L, 1, CHECKER_MT);
  asc_json_checker_free(u->c);
  u->c = NULL;
  return 0;
}

static asc_json_checker *check_checker(lua_State *L) {
  checker_ud *u = luaL_checkudata(L, 1, CHECKER_MT);
  luaL_argcheck(L, u->c != NULL, 1, "checker already freed");
  return u->c;
}

static int checker_result(lua_State *L, int rc, const asc_error *err) {
  if (rc) return lasc_pusherror(L, err);
  lua_pushboolean(L, 1);
  return 1;
}

static int checker_feed(lua_State *L) {
  asc_json_checker *c = check_checker(L);
  size_t n;
  const char *block = luaL_checklstring(L, 2, &n);
  lua_getiuservalue(L, 1, 1);
  asc_error err;
  return checker_result(
      L, asc_json_checker_feed(c, lua_tostring(L, -1), (const unsigned char *)block, n, &err), &err);
}

static int checker_finish(lua_State *L) {
  asc_json_checker *c = check_checker(L);
  lua_getiuservalue(L, 1, 1);
  asc_error err;
  return checker_result(L, asc_json_checker_end(c, lua_tostring(L, -1), &err), &err);
}

static int l_checker(lua_State *L) {
  luaL_checkstring(L, 1);
  checker_ud *u = lua_newuserdatauv(L, sizeof *u, 1);
  u->c = NULL;
  if (luaL_newmetatable(L, CHECKER_MT)) {
    static const luaL_Reg methods[] = {{"feed", checker_feed}, {"finish", checker_finish}, {NULL, NULL}};
    lua_pushcfunction(L, checker_gc);
    lua_setfield(L, -2, "__gc");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_setmetatable(L, -2);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1); /* the path, for the messages */
  if (!(u->c = asc_json_checker_new())) return lasc_oom(L);
  return 1;
}

static int l_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  asc_error err;
  FILE *f = asc_open_input(path, &err);
  if (!f) return lasc_pusherror(L, &err);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char tmp[65536];
  size_t n, total = 0;
  /* a document is decoded whole into a Lua table, several times its size: metadata and
   * summaries are KB to MB, and a bigger file handed here (a trace) is refused, not loaded */
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && st.st_size > ASC_JSON_LOAD_MAX) total = (size_t)st.st_size;
  while (total <= ASC_JSON_LOAD_MAX && (n = fread(tmp, 1, sizeof tmp, f)) > 0) {
    total += n;
    if (total <= ASC_JSON_LOAD_MAX) luaL_addlstring(&b, tmp, n);
  }
  fclose(f);
  if (total > ASC_JSON_LOAD_MAX) {
    asc_fail(&err, path, (long long)ASC_JSON_LOAD_MAX, 0, 0,
             "larger than %d MiB: not a document this reads whole (a trace is scanned, not loaded)",
             ASC_JSON_LOAD_MAX >> 20);
    return lasc_pusherror(L, &err);
  }
  luaL_pushresult(&b);
  size_t len;
  const char *s = lua_tolstring(L, -1, &len);
  if (len == 0) {
    asc_fail(&err, path, 0, 1, 1, "the file is empty");
    return lasc_pusherror(L, &err);
  }
  return decode_text(L, s, len, path);
}

/* ---------- encode ---------- */

typedef struct {
  lua_State *L;
  lasc_buf *b;
} enc_sink;

static void enc_piece(void *ud, const char *s, size_t n) {
  enc_sink *k = ud;
  lasc_addl(k->L, k->b, s, n);
}

static void enc_string(lua_State *L, lasc_buf *b, const char *s, size_t n) {
  enc_sink k = {L, b};
  lasc_addc(L, b, '"');
  asc_json_escape(s, n, enc_piece, &k);
  lasc_addc(L, b, '"');
}

static void enc_double(lua_State *L, lasc_buf *b, double x) {
  char buf[32];
  if (!asc_format_double(x, buf)) {
    lasc_adds(L, b, "null");
    return;
  }
  lasc_adds(L, b, buf);
  if (!strpbrk(buf, ".eEn")) lasc_adds(L, b, ".0");
}

static void newline(lua_State *L, lasc_buf *b, int indent, int level) {
  if (!indent) return;
  lasc_addc(L, b, '\n');
  for (int i = 0; i < indent * level; i++) lasc_addc(L, b, ' ');
}

static int is_array(lua_State *L, int idx, lua_Integer *n) {
  *n = (lua_Integer)lua_rawlen(L, idx);
  if (luaL_getmetafield(L, idx, "__jsontype") != LUA_TNIL) {
    int arr = strcmp(lua_tostring(L, -1), "array") == 0;
    lua_pop(L, 1);
    return arr;
  }
  if (*n == 0) return 0;
  lua_Integer count = 0;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) count++;
  return count == *n;
}

static int cmp_keys(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void encode_value(lua_State *L, lasc_buf *b, int idx, int indent, int level);

static void encode_table(lua_State *L, lasc_buf *b, int idx, int indent, int level) {
  if (level > 200) luaL_error(L, "json.encode: nesting too deep (a cycle?)");
  lua_Integer n;
  if (is_array(L, idx, &n)) {
    lasc_addc(L, b, '[');
    for (lua_Integer i = 1; i <= n; i++) {
      if (i > 1) lasc_addc(L, b, ',');
      newline(L, b, indent, level + 1);
      lua_rawgeti(L, idx, i);
      encode_value(L, b, lua_gettop(L), indent, level + 1);
      lua_pop(L, 1);
    }
    if (n) newline(L, b, indent, level);
    lasc_addc(L, b, ']');
    return;
  }
  /* Keys sorted so that output is stable from run to run. */
  lua_newtable(L); /* i -> key text */
  int keys = lua_gettop(L);
  lua_newtable(L); /* key text -> original key */
  int orig = lua_gettop(L);
  lua_Integer nk = 0;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
    int kt = lua_type(L, -2);
    if (kt != LUA_TSTRING && kt != LUA_TNUMBER)
      luaL_error(L, "json.encode: a key of type %s", lua_typename(L, kt));
    lua_pushvalue(L, -2);
    luaL_tolstring(L, -1, NULL); /* a copy: converting the key in place would upset lua_next */
    lua_pushvalue(L, -1);
    lua_rawseti(L, keys, ++nk);
    lua_insert(L, -2);
    lua_rawset(L, orig);
  }
  const char **names = lua_newuserdatauv(L, (size_t)(nk + 1) * sizeof *names, 0);
  for (lua_Integer i = 0; i < nk; i++) {
    lua_rawgeti(L, keys, i + 1);
    names[i] = lua_tostring(L, -1);
    lua_pop(L, 1); /* the string stays referenced by the keys table */
  }
  qsort(names, (size_t)nk, sizeof *names, cmp_keys);
  lasc_addc(L, b, '{');
  for (lua_Integer i = 0; i < nk; i++) {
    if (i) lasc_addc(L, b, ',');
    newline(L, b, indent, level + 1);
    enc_string(L, b, names[i], strlen(names[i]));
    lasc_adds(L, b, indent ? ": " : ":");
    lua_getfield(L, orig, names[i]);
    lua_rawget(L, idx);
    encode_value(L, b, lua_gettop(L), indent, level + 1);
    lua_pop(L, 1);
  }
  if (nk) newline(L, b, indent, level);
  lasc_addc(L, b, '}');
  lua_pop(L, 3);
}

static void encode_value(lua_State *L, lasc_buf *b, int idx, int indent, int level) {
  switch (lua_type(L, idx)) {
  case LUA_TNIL: lasc_adds(L, b, "null"); break;
  case LUA_TLIGHTUSERDATA:
    if (lua_touserdata(L, idx) == NULL)
      lasc_adds(L, b, "null");
    else
      luaL_error(L, "json.encode: cannot encode a pointer");
    break;
  case LUA_TBOOLEAN: lasc_adds(L, b, lua_toboolean(L, idx) ? "true" : "false"); break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) {
      char buf[32];
      snprintf(buf, sizeof buf, "%lld", (long long)lua_tointeger(L, idx));
      lasc_adds(L, b, buf);
    } else {
      enc_double(L, b, lua_tonumber(L, idx));
    }
    break;
  case LUA_TSTRING: {
    size_t n;
    const char *s = lua_tolstring(L, idx, &n);
    enc_string(L, b, s, n);
    break;
  }
  case LUA_TTABLE:
    luaL_checkstack(L, 8, "json.encode");
    encode_table(L, b, idx, indent, level);
    break;
  default: luaL_error(L, "json.encode: cannot encode a %s", luaL_typename(L, idx));
  }
}

/* json.encode(value [, {indent = 2}]) */
static int l_encode(lua_State *L) {
  int indent = 0;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "indent");
    indent = (int)luaL_optinteger(L, -1, 0);
    lua_pop(L, 1);
  }
  lua_settop(L, 1);
  lasc_buf *b = lasc_newbuf(L);
  encode_value(L, b, 1, indent, 0);
  lua_pushlstring(L, b->p, b->n);
  return 1;
}

static const luaL_Reg fns[] = {{"scan", l_scan},       {"decode", l_decode}, {"load", l_load},
                               {"checker", l_checker}, {"encode", l_encode}, {NULL, NULL}};

int lasc_open_json(lua_State *L) {
  luaL_newlib(L, fns);
  lasc_json_writer_register(L);
  lua_pushlightuserdata(L, NULL);
  lua_setfield(L, -2, "null");
  return 1;
}
