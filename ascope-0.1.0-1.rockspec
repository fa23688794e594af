-- LuaRocks: `luarocks make` in this folder builds ascope_core against the system's yajl, libcsv
-- and SQLite and installs it with the Lua modules and the rules (beside the modules, in
-- LUADIR/ascope/rules/), so a stock lua5.4 can `require "ascope"`. The build is the Makefile's
-- (targets rock and rock-install). The version is lua/ascope/version.lua's.
rockspec_format = "3.0"
package = "ascope"
version = "0.1.0-1"
source = {
   -- `make dist` writes it to build/dist/ beside a copy of this file; `luarocks make` in the
   -- source folder needs no tarball
   url = "file://ascope-0.1.0.tar.gz",
   dir = "ascope-0.1.0",
}
description = {
   summary = "Lua-scriptable analysis toolkit for Huawei Ascend NPU profiling and failure data",
   detailed = [[
A C runtime (streaming JSON and CSV, interval algebra, bisect matching, binary views, SQLite)
exposed as the Lua 5.4 module ascope_core, and the analyses on top of it in Lua: NPU memory
attribution, timeline geometry, MoE dispatch/combine hang diagnosis, plog classification, graph
order and operator jitter across cards. The expert rules are editable Lua tables.
]],
   license = "MIT",
   labels = { "profiling", "ascend", "npu", "performance" },
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
external_dependencies = {
   YAJL = { header = "yajl/yajl_parse.h", library = "yajl" },
   CSV = { header = "csv.h", library = "csv" },
   SQLITE = { header = "sqlite3.h", library = "sqlite3" },
}
build = {
   type = "make",
   build_target = "rock",
   build_variables = {
      CC = "$(CC)",
      CFLAGS = "$(CFLAGS)",
      LUA = "$(LUA)",
      LUAINC = "$(LUA_INCDIR)",
      EXTRA_CFLAGS = "-I$(YAJL_INCDIR) -I$(CSV_INCDIR) -I$(SQLITE_INCDIR)",
      SO_LDFLAGS = "-L$(YAJL_LIBDIR) -L$(CSV_LIBDIR) -L$(SQLITE_LIBDIR)",
   },
   install_target = "rock-install",
   install_variables = {
      INST_LIBDIR = "$(LIBDIR)",
      INST_LUADIR = "$(LUADIR)",
      EXTRA_CFLAGS = "-I$(YAJL_INCDIR) -I$(CSV_INCDIR) -I$(SQLITE_INCDIR)",
      SO_LDFLAGS = "-L$(YAJL_LIBDIR) -L$(CSV_LIBDIR) -L$(SQLITE_LIBDIR)",
   },
   copy_directories = { "examples", "types" }, -- kept in the rock's folder
}
