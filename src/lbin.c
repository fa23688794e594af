/* Lua binding of binary views. A view is a window [off, off + n) on a mapped file; sub-views
 * keep the mapping alive through their user value. Offsets are 0-based byte offsets within the
 * view; a negative offset counts from the view's end (-4 is the last int32). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/bin.h"
#include "lbind.h"

#define MAP_MT "ascope.bin.map"
#define VIEW_MT "ascope.bin.view"

typedef struct {
  asc_view v;
  char path[512];
} map_ud;

/* Raise a decoding error (a dump cut short, a layout past the end): through lasc_raise, so it is
 * said in the reader's language like every primitive's error. */
#define RAISE(L, ...)                                                                                        \
  do {                                                                                                       \
    asc_error e_;                                                                                            \
    asc_fail(&e_, NULL, -1, 0, 0, __VA_ARGS__);                                                              \
    lasc_raise(L, &e_);                                                                                      \
  } while (0)

typedef struct {
  const uint8_t *p;
  size_t n;
  size_t base; /* offset of the view within the file, for messages */
  const char *path;
} view_ud;

static view_ud *check_view(lua_State *L, int idx) { return luaL_checkudata(L, idx, VIEW_MT); }

static int map_gc(lua_State *L) {
  map_ud *m = luaL_checkudata(L, 1, MAP_MT);
  asc_view_close(&m->v);
  return 0;
}

/* Push a view on bytes owned by the object at stack index owner. */
static view_ud *push_view(lua_State *L, int owner, const uint8_t *p, size_t n, size_t base,
                          const char *path) {
  owner = lua_absindex(L, owner);
  view_ud *v = lua_newuserdatauv(L, sizeof *v, 1);
  v->p = p;
  v->n = n;
  v->base = base;
  v->path = path;
  luaL_setmetatable(L, VIEW_MT);
  lua_pushvalue(L, owner);
  lua_setiuservalue(L, -2, 1);
  return v;
}

/* bin.open(path) -> view of the whole file */
static int l_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  map_ud *m = lua_newuserdatauv(L, sizeof *m, 0);
  memset(m, 0, sizeof *m);
  luaL_setmetatable(L, MAP_MT);
  snprintf(m->path, sizeof m->path, "%s", path);
  asc_error err;
  if (asc_view_open(path, &m->v, &err)) return lasc_pusherror(L, &err);
  push_view(L, -1, m->v.p, m->v.n, 0, m->path);
  return 1;
}

/* bin.from_string(s): a view on a Lua string's bytes (tests, in-memory data) */
static int l_from_string(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  push_view(L, 1, (const uint8_t *)s, n, 0, "(string)");
  return 1;
}

/* Where [off, off + len) starts in the view (a negative off counts from the end); raises an
 * error naming the file when the span is not inside the view. Every offset, length and count
 * that Lua passes (a layout in a rule file, a size read from a dump) goes through here before it
 * touches memory, so no value makes a view larger than the file. */
static size_t check_span(lua_State *L, const view_ud *v, lua_Integer off, lua_Integer len) {
  lua_Integer o = off < 0 ? off + (lua_Integer)v->n : off;
  if (o < 0 || len < 0 || (lua_Unsigned)o > v->n || (lua_Unsigned)len > v->n - (size_t)o)
    RAISE(L, "%s: %lld bytes at offset %lld are outside the %zu-byte view (file offset %zu)", v->path,
          (long long)len, (long long)off, v->n, (size_t)v->base);
  return (size_t)o;
}

/* count items of size bytes every stride bytes: the bytes they span, or an error. */
static lua_Integer checked_span(lua_State *L, const view_ud *v, lua_Integer count, lua_Integer stride,
                                size_t size) {
  if (count < 0) RAISE(L, "%s: negative count %lld", v->path, (long long)count);
  if (count == 0) return 0;
  lua_Integer span;
  if (__builtin_mul_overflow(count - 1, stride, &span) ||
      __builtin_add_overflow(span, (lua_Integer)size, &span))
    RAISE(L, "%s: %lld items of %lld bytes are larger than any file", v->path, (long long)count,
          (long long)stride);
  return span;
}

static int m_size(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_view(L, 1)->n);
  return 1;
}

static int m_offset(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_view(L, 1)->base);
  return 1;
}

/* view:sub(off [, len]) */
static int m_sub(lua_State *L) {
  view_ud *v = check_view(L, 1);
  lua_Integer off = luaL_checkinteger(L, 2);
  size_t o = check_span(L, v, off, 0);
  lua_Integer len = luaL_optinteger(L, 3, (lua_Integer)(v->n - o));
  check_span(L, v, off, len);
  lua_getiuservalue(L, 1, 1);
  push_view(L, -1, v->p + o, (size_t)len, v->base + o, v->path);
  return 1;
}

/* view:tail(n): the last n bytes (all of it when shorter) */
static int m_tail(lua_State *L) {
  view_ud *v = check_view(L, 1);
  lua_Integer n = luaL_checkinteger(L, 2);
  size_t k = n < 0 ? 0 : (size_t)n > v->n ? v->n : (size_t)n;
  lua_getiuservalue(L, 1, 1);
  push_view(L, -1, v->p + v->n - k, k, v->base + v->n - k, v->path);
  return 1;
}

static int m_bytes(lua_State *L) {
  view_ud *v = check_view(L, 1);
  lua_Integer len = luaL_optinteger(L, 3, -1);
  if (lua_isnoneornil(L, 2)) {
    lua_pushlstring(L, (const char *)v->p, v->n);
    return 1;
  }
  lua_Integer off = luaL_checkinteger(L, 2);
  size_t o = check_span(L, v, off, 0);
  if (len < 0) len = (lua_Integer)(v->n - o); /* the rest of the view */
  check_span(L, v, off, len);
  lua_pushlstring(L, (const char *)v->p + o, (size_t)len);
  return 1;
}

typedef enum { T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64, T_F32, T_F64 } scalar;
static const char *const scalar_names[] = {"i8",  "u8",  "i16", "u16", "i32", "u32",
                                           "i64", "u64", "f32", "f64", NULL};
static const size_t scalar_size[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};

static void push_scalar(lua_State *L, const uint8_t *p, scalar t) {
  switch (t) {
  case T_I8: lua_pushinteger(L, (int8_t)p[0]); break;
  case T_U8: lua_pushinteger(L, p[0]); break;
#define RD(T)                                                                                                \
  do {                                                                                                       \
    T x_;                                                                                                    \
    memcpy(&x_, p, sizeof x_);                                                                               \
    lua_pushinteger(L, (lua_Integer)x_);                                                                     \
  } while (0)
  case T_I16: RD(int16_t); break;
  case T_U16: RD(uint16_t); break;
  case T_I32: RD(int32_t); break;
  case T_U32: RD(uint32_t); break;
  case T_I64: RD(int64_t); break;
  case T_U64: RD(uint64_t); break;
#undef RD
  case T_F32: {
    float f;
    memcpy(&f, p, 4);
    lua_pushnumber(L, f);
    break;
  }
  case T_F64: {
    double d;
    memcpy(&d, p, 8);
    lua_pushnumber(L, d);
    break;
  }
  }
}

/* view:read(type, off) for one little-endian scalar */
static int m_read(lua_State *L) {
  view_ud *v = check_view(L, 1);
  scalar t = (scalar)luaL_checkoption(L, 2, NULL, scalar_names);
  size_t o = check_span(L, v, luaL_checkinteger(L, 3), (lua_Integer)scalar_size[t]);
  push_scalar(L, v->p + o, t);
  return 1;
}

/* view:array(type, off, count [, stride_bytes]) -> column (integer, or number for floats) */
static int m_array(lua_State *L) {
  view_ud *v = check_view(L, 1);
  scalar t = (scalar)luaL_checkoption(L, 2, NULL, scalar_names);
  lua_Integer count = luaL_checkinteger(L, 4);
  lua_Integer stride = luaL_optinteger(L, 5, (lua_Integer)scalar_size[t]);
  luaL_argcheck(L, count >= 0, 4, "negative count");
  luaL_argcheck(L, stride > 0, 5, "stride must be positive");
  size_t o = check_span(L, v, luaL_checkinteger(L, 3), checked_span(L, v, count, stride, scalar_size[t]));
  asc_col c;
  asc_col_init(&c, t >= T_F32 ? ASC_F64 : ASC_I64);
  if (asc_col_reserve(&c, (size_t)count + 1)) return lasc_oom(L);
  for (lua_Integer i = 0; i < count; i++) {
    const uint8_t *p = v->p + o + (size_t)i * (size_t)stride;
    push_scalar(L, p, t);
    if (t >= T_F32)
      c.v.f[i] = lua_tonumber(L, -1);
    else
      c.v.i[i] = lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  c.n = (size_t)count;
  lasc_pushcolumn(L, &c, 0);
  return 1;
}

/* view:struct(off, layout) with layout = {size = B, fields = {name = {offset, type [, count]}}}
 * -> table of values (a count gives a Lua array) */
static void read_struct(lua_State *L, view_ud *v, size_t base, int layout) {
  lua_getfield(L, layout, "fields");
  int fields = lua_gettop(L);
  luaL_argcheck(L, lua_istable(L, fields), 3, "layout.fields must be a table");
  lua_newtable(L);
  for (lua_pushnil(L); lua_next(L, fields); lua_pop(L, 1)) {
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    lua_rawgeti(L, -3, 3);
    lua_Integer off = luaL_checkinteger(L, -3);
    scalar t = (scalar)luaL_checkoption(L, -2, NULL, scalar_names);
    lua_Integer count = luaL_optinteger(L, -1, 0);
    lua_pop(L, 3);
    lua_Integer size = (lua_Integer)scalar_size[t], need = 0;
    if (count < 0 || __builtin_mul_overflow(count > 0 ? count : 1, size, &need) || off < 0 ||
        (lua_Unsigned)off > v->n - base || (lua_Unsigned)need > v->n - base - (size_t)off)
      RAISE(L, "%s: field '%s' (%lld x %s at %zu+%lld) runs past the %zu-byte view", v->path,
            luaL_tolstring(L, -2, NULL), (long long)count, scalar_names[t], (size_t)base, (long long)off,
            v->n);
    lua_pushvalue(L, -2);
    if (count > 0) {
      lua_createtable(L, count < 1024 ? (int)count : 0, 0);
      for (lua_Integer i = 0; i < count; i++) {
        push_scalar(L, v->p + base + (size_t)off + (size_t)i * scalar_size[t], t);
        lua_rawseti(L, -2, i + 1);
      }
    } else {
      push_scalar(L, v->p + base + (size_t)off, t);
    }
    lua_settable(L, -5); /* result[key] = value; below: key, spec, copy of key, value */
  }
  lua_remove(L, fields);
}

static int m_struct(lua_State *L) {
  view_ud *v = check_view(L, 1);
  luaL_checktype(L, 3, LUA_TTABLE);
  size_t o = check_span(L, v, luaL_checkinteger(L, 2), 0);
  read_struct(L, v, o, 3);
  return 1;
}

/* view:structs(off, count, layout) -> list of tables, one per block of layout.size bytes */
static int m_structs(lua_State *L) {
  view_ud *v = check_view(L, 1);
  lua_Integer count = luaL_checkinteger(L, 3);
  luaL_checktype(L, 4, LUA_TTABLE);
  lua_getfield(L, 4, "size");
  lua_Integer size = luaL_checkinteger(L, -1);
  lua_pop(L, 1);
  if (size <= 0 || count < 0)
    RAISE(L, "%s: %lld blocks of layout.size %lld: both must be positive", v->path, (long long)count,
          (long long)size);
  size_t o = check_span(L, v, luaL_checkinteger(L, 2), checked_span(L, v, count, size, (size_t)size));
  lua_createtable(L, count < 1024 ? (int)count : 0, 0);
  for (lua_Integer i = 0; i < count; i++) {
    read_struct(L, v, o + (size_t)i * (size_t)size, 4);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* ---- protobuf ---- */

static int pb_decode(lua_State *L, view_ud *v, const uint8_t *p, size_t n, int schema, int depth);

static void pb_value(lua_State *L, view_ud *v, const asc_pb_field *f, const char *type, int sub_schema,
                     int depth) {
  if (strcmp(type, "message") == 0) {
    if (f->wire != ASC_PB_LEN) RAISE(L, "protobuf: field %d is not a message", (int)f->field);
    pb_decode(L, v, f->bytes, f->len, sub_schema, depth + 1);
  } else if (strcmp(type, "string") == 0) {
    lua_pushlstring(L, (const char *)f->bytes, f->len);
  } else if (strcmp(type, "bytes") == 0) {
    /* large payloads (tensors) stay in the file: report where they are */
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (lua_Integer)(v->base + (size_t)(f->bytes - v->p)));
    lua_setfield(L, -2, "offset");
    lua_pushinteger(L, (lua_Integer)f->len);
    lua_setfield(L, -2, "length");
  } else if (strcmp(type, "sint") == 0) {
    lua_pushinteger(L, (lua_Integer)((f->varint >> 1) ^ -(f->varint & 1)));
  } else if (strcmp(type, "float") == 0) {
    float x;
    uint32_t u = (uint32_t)f->varint;
    memcpy(&x, &u, 4);
    lua_pushnumber(L, x);
  } else if (strcmp(type, "double") == 0) {
    double x;
    memcpy(&x, &f->varint, 8);
    lua_pushnumber(L, x);
  } else if (strcmp(type, "bool") == 0) {
    lua_pushboolean(L, f->varint != 0);
  } else { /* int, uint, enum, fixed32, fixed64 */
    lua_pushinteger(L, (lua_Integer)f->varint);
  }
}

/* schema: {[field_number] = {"name", "type" [, sub_schema] , repeated = bool}} */
static int pb_decode(lua_State *L, view_ud *v, const uint8_t *p, size_t n, int schema, int depth) {
  if (depth > 32) RAISE(L, "protobuf: nesting too deep");
  luaL_checkstack(L, 10, "protobuf");
  schema = lua_absindex(L, schema);
  lua_newtable(L);
  size_t pos = 0;
  asc_pb_field f;
  const char *why = NULL;
  int r;
  while ((r = asc_pb_next(p, n, &pos, &f, &why)) == 1) {
    if (lua_rawgeti(L, schema, f.field) != LUA_TTABLE) {
      lua_pop(L, 1);
      continue; /* unknown fields are skipped, as protobuf readers do */
    }
    int spec = lua_gettop(L);
    lua_rawgeti(L, spec, 1);
    const char *name = luaL_checkstring(L, -1);
    lua_rawgeti(L, spec, 2);
    const char *type = luaL_checkstring(L, -1);
    lua_rawgeti(L, spec, 3);
    int sub = lua_gettop(L);
    lua_getfield(L, spec, "repeated");
    int repeated = lua_toboolean(L, -1);
    lua_pop(L, 1);
    int packed = repeated && f.wire == ASC_PB_LEN && strcmp(type, "message") != 0 &&
                 strcmp(type, "string") != 0 && strcmp(type, "bytes") != 0;
    if (repeated) {
      if (lua_getfield(L, spec - 1, name) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, spec - 1, name);
      }
      int list = lua_gettop(L);
      if (packed) {
        size_t q = 0;
        while (q < f.len) {
          asc_pb_field e = f;
          if (asc_pb_varint(f.bytes, f.len, &q, &e.varint))
            RAISE(L, "%s: protobuf field %d: bad packed varint", v->path, (int)f.field);
          pb_value(L, v, &e, type, sub, depth);
          lua_rawseti(L, list, (lua_Integer)lua_rawlen(L, list) + 1);
        }
      } else {
        pb_value(L, v, &f, type, sub, depth);
        lua_rawseti(L, list, (lua_Integer)lua_rawlen(L, list) + 1);
      }
      lua_pop(L, 1);
    } else {
      pb_value(L, v, &f, type, sub, depth);
      lua_setfield(L, spec - 1, name);
    }
    lua_settop(L, spec - 1);
  }
  if (r < 0)
    RAISE(L, "%s: invalid protobuf at file offset %zu: %s", v->path, v->base + (size_t)(p - v->p) + f.offset,
          why);
  return 1;
}

/* view:protobuf(schema [, off, len]) -> table (raises on malformed bytes: wrap in pcall) */
static int m_protobuf(lua_State *L) {
  view_ud *v = check_view(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  size_t o = 0, len = v->n;
  if (!lua_isnoneornil(L, 3)) {
    lua_Integer off = luaL_checkinteger(L, 3);
    o = check_span(L, v, off, 0);
    lua_Integer l = luaL_optinteger(L, 4, (lua_Integer)(v->n - o));
    check_span(L, v, off, l);
    len = (size_t)l;
  }
  return pb_decode(L, v, v->p + o, len, 2, 0);
}

/* view:npy() -> {descr, shape = {...}, fortran, count, data = column} or nil, message */
static int m_npy(lua_State *L) {
  view_ud *v = check_view(L, 1);
  asc_npy h;
  asc_error err;
  if (asc_npy_parse(v->p, v->n, &h, &err)) {
    snprintf(err.file, sizeof err.file, "%s", v->path);
    lua_pushnil(L);
    lasc_pusherrortext(L, &err);
    return 2;
  }
  lua_createtable(L, 0, 5);
  lua_pushstring(L, h.descr);
  lua_setfield(L, -2, "descr");
  lua_pushboolean(L, h.fortran);
  lua_setfield(L, -2, "fortran");
  lua_pushinteger(L, (lua_Integer)h.count);
  lua_setfield(L, -2, "count");
  lua_pushinteger(L, (lua_Integer)h.data_off);
  lua_setfield(L, -2, "offset"); /* where the data starts in the view */
  lua_pushinteger(L, h.itemsize);
  lua_setfield(L, -2, "itemsize");
  lua_createtable(L, h.ndim, 0);
  for (int i = 0; i < h.ndim; i++) {
    lua_pushinteger(L, (lua_Integer)h.shape[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "shape");
  asc_col c;
  asc_col_init(&c, h.kind == 'f' ? ASC_F64 : ASC_I64);
  if (asc_col_reserve(&c, (size_t)h.count + 1)) return lasc_oom(L);
  const uint8_t *p = v->p + h.data_off;
  for (uint64_t i = 0; i < h.count; i++, p += h.itemsize) {
    if (h.kind == 'f') {
      if (h.itemsize == 4) {
        float f;
        memcpy(&f, p, 4);
        c.v.f[i] = f;
      } else if (h.itemsize == 8) {
        memcpy(&c.v.f[i], p, 8);
      } else {
        c.v.f[i] = NAN; /* float16 is not decoded */
      }
    } else {
      int64_t x = 0;
      int sgn = h.kind == 'i';
      switch (h.itemsize) {
      case 1: x = sgn ? (int8_t)p[0] : p[0]; break;
      case 2: {
        uint16_t u;
        memcpy(&u, p, 2);
        x = sgn ? (int16_t)u : u;
        break;
      }
      case 4: {
        uint32_t u;
        memcpy(&u, p, 4);
        x = sgn ? (int32_t)u : (int64_t)u;
        break;
      }
      default: memcpy(&x, p, 8);
      }
      c.v.i[i] = x;
    }
  }
  c.n = (size_t)h.count;
  lasc_pushcolumn(L, &c, 0);
  lua_setfield(L, -2, "data");
  return 1;
}

static int m_tostring(lua_State *L) {
  view_ud *v = check_view(L, 1);
  lua_pushfstring(L, "view(%s, %d bytes at %d)", v->path, (int)v->n, (int)v->base);
  return 1;
}

int lasc_open_bin(lua_State *L) {
  static const luaL_Reg methods[] = {{"size", m_size},         {"offset", m_offset}, {"sub", m_sub},
                                     {"tail", m_tail},         {"bytes", m_bytes},   {"read", m_read},
                                     {"array", m_array},       {"struct", m_struct}, {"structs", m_structs},
                                     {"protobuf", m_protobuf}, {"npy", m_npy},       {NULL, NULL}};
  static const luaL_Reg fns[] = {{"open", l_open}, {"from_string", l_from_string}, {NULL, NULL}};
  if (luaL_newmetatable(L, MAP_MT)) {
    lua_pushcfunction(L, map_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, VIEW_MT)) {
    lua_pushcfunction(L, m_size);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, m_tostring);
    lua_setfield(L, -2, "__tostring");
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, fns);
  return 1;
}
