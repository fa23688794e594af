--- ascope: the C primitives and the analyses as one Lua module.
--
--   local ascope = require "ascope"
--   local r = assert(ascope.json.scan("trace_view.json", {
--     where  = { cat = "cpu_op", ["args.Call stack"] = true },
--     fields = { name = "string", ts = "us", dur = "us", ["args.Call stack"] = "string" },
--   }))
--   print(r.n, r.columns.name[1], r.columns.ts[1])   -- ts in exact int64 nanoseconds
--
-- Primitives (C, see README "Lua API"): json, csv, interval, match, bin, db, fs, par, logclass, column.
-- Analyses are loaded on first use: ascope.memory, ...
local core = require "ascope_core"

local M = {
  json = core.json,
  csv = core.csv,
  interval = core.interval,
  match = core.match,
  bin = core.bin,
  db = core.db,
  fs = core.fs,
  par = core.par,
  logclass = core.logclass,
  column = core.column,
  versions = core.versions,
}

local lazy = { memory = "ascope.memory", timeline = "ascope.timeline", rules = "ascope.rules" }

return setmetatable(M, {
  __index = function(t, k)
    local mod = lazy[k]
    if not mod then return nil end
    local v = require(mod)
    rawset(t, k, v)
    return v
  end,
})
