/* Binary decoding on arbitrary bytes: .npy headers and protobuf fields in C, then the Lua view
 * methods (sub, bytes, read, array, struct, structs, protobuf, npy) with offsets, counts, sizes
 * and strides taken from the input itself, as a hostile window layout or dump would give them.
 * Every call may fail with an error; none may read outside the bytes. */
#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>

#include "ascope/bin.h"
#include "lbind.h"

static const char VIEW_CALLS[] =
    "local bin, data = ...\n"
    "local v = bin.from_string(data)\n"
    "local p = data .. string.rep('\\0', 32)\n"
    "for _, fmt in ipairs({ '<i2i2i2i2', '<i8i8i8i8' }) do\n"
    "  local a, b, c, d = string.unpack(fmt, p)\n"
    "  pcall(v.sub, v, a, b)\n"
    "  pcall(v.bytes, v, a, b)\n"
    "  pcall(v.tail, v, a)\n"
    "  pcall(v.read, v, 'i64', a)\n"
    "  pcall(v.read, v, 'f32', b)\n"
    "  pcall(v.array, v, 'u16', a, b, c)\n"
    "  pcall(v.array, v, 'f64', c, d)\n"
    "  pcall(v.struct, v, a, { size = c, fields = { x = { b, 'u32', d }, y = { c, 'f64' } } })\n"
    "  pcall(v.structs, v, a, b, { size = c, fields = { x = { d, 'i16', 2 } } })\n"
    "  pcall(v.protobuf, v, { [1] = { 'a', 'int' }, [2] = { 'b', 'message', { [1] = { 'c', 'string' } } },\n"
    "    [3] = { 'd', 'sint', repeated = true }, [4] = { 'e', 'bytes' }, [5] = { 'f', 'double' } }, a, b)\n"
    "end\n"
    "pcall(v.npy, v)\n";

static lua_State *L;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  asc_npy h;
  asc_error err;
  asc_npy_parse(data, size, &h, &err);
  size_t pos = 0;
  asc_pb_field f;
  const char *pwhy;
  while (asc_pb_next(data, size, &pos, &f, &pwhy) == 1) {
  }
  if (!L) {
    L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "ascope_core", luaopen_ascope_core, 0);
    lua_getfield(L, -1, "bin");
    lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.bin");
    lua_pop(L, 1);
    if (luaL_loadstring(L, VIEW_CALLS) != LUA_OK) abort();
    lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.calls");
  }
  lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.calls");
  lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.bin");
  lua_pushlstring(L, (const char *)data, size);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) lua_pop(L, 1);
  lua_gc(L, LUA_GCCOLLECT);
  return 0;
}
