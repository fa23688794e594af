--- ascope: the C primitives and the analyses as one Lua module.
--
--     local ascope = require "ascope"
--     local r = assert(ascope.json.scan("trace_view.json", {
--       where  = { cat = "cpu_op", ["args.Call stack"] = true },
--       fields = { name = "string", ts = "us", dur = "us", ["args.Call stack"] = "string" },
--     }))
--     print(r.n, r.columns.name[1], r.columns.ts[1])   -- ts in exact int64 nanoseconds
--
-- Primitives (C, see README "Lua API"): json, csv, interval, match, bin, db, fs, par, regex, iconv, logclass, column.
-- The six jobs are loaded on first use: ascope.memory, timeline, moe, plog, graph, opjitter; each
-- has `anomalies(result)` -> {{severity, card or rank, analysis, message}, ...}.
-- @module ascope
local core = require "ascope_core"

--- What `require "ascope"` returns: the primitives of the C module ascope_core, and the
-- analyses, each loaded the first time it is used.
-- @field json streaming JSON: `scan(path, {where, fields})`, `decode`, `load`, `encode`, `null`
-- @field csv typed CSV reader `read(path, {columns, bad})`, record reader `open`, `writer`
-- @field interval int64 interval sets: `union`, `intersect`, `subtract`, `gaps`, `clip`, `total`, `stats`
-- @field match grouped sorted index `index(keys, starts, durations)` and bulk `latest` / `within` lookups
-- @field bin read-only file views: scalars, strided arrays, struct layouts, protobuf, `.npy`
-- @field db read-only SQLite: `open(path)`, `db:query(sql, ...)` into columns
-- @field fs sorted walks, `stat`, `list`, atomic `write`, `mkdirs`, `grep`
-- @field par `map(items, fn, {jobs, gc, here, fresh, zygote_after_mb})`: per-item work in worker processes
-- made with fork(2), each doing item after item unless fresh (jobs = 1 runs everything in the calling
-- process); the jobs fork only when asked, see `ascope.workers`
-- @field column typed columns: `new(kind, values)`, `concat`; `#col`, `col[i]`, `col:totable()`
-- @field versions `versions()`: the versions of Lua, yajl, libcsv and SQLite built in
-- @field VERSION the version of ascope ("0.1.0")
-- @field memory the memory job (`ascope.memory`), loaded on first use
-- @field timeline the timeline job (`ascope.timeline`), loaded on first use
-- @field moe the MoE communication job (`ascope.moe`), loaded on first use
-- @field plog the plog classification job (`ascope.plog`), loaded on first use
-- @field graph the graph comparison job (`ascope.graph`), loaded on first use
-- @field opjitter the operator jitter job (`ascope.opjitter`), loaded on first use
-- @field rules rule files (`ascope.rules`), loaded on first use
-- @field log where the library's messages and progress go (`ascope.log`): nowhere until
-- `log.set_sink{on_log = fn, on_progress = fn}`
-- @field workers the number of worker processes the jobs fork (`ascope.workers`; default 1)
-- @table ascope
local M = {
  json = core.json,
  csv = core.csv,
  interval = core.interval,
  match = core.match,
  bin = core.bin,
  db = core.db,
  fs = core.fs,
  par = core.par,
  regex = core.regex,
  iconv = core.iconv,
  logclass = core.logclass,
  column = core.column,
  versions = core.versions,
  VERSION = require "ascope.version",
}

local lazy = { memory = "ascope.memory", timeline = "ascope.timeline", moe = "ascope.moe", plog = "ascope.plog",
               graph = "ascope.graph", opjitter = "ascope.opjitter", rules = "ascope.rules", log = "ascope.log",
               workers = "ascope.workers" }

return setmetatable(M, {
  __index = function(t, k)
    local mod = lazy[k]
    if not mod then return nil end
    local v = require(mod)
    rawset(t, k, v)
    return v
  end,
})
