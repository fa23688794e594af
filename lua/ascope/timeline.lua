--- Timeline geometry for scripts and embedding: read each rank's timeline (trace_view.json,
-- msprof_*.json or ascend_pytorch_profiler_*.db) and step_trace_time.csv, and compute the eight
-- dimensions with the expert rules' findings.
--
--     local timeline = require "ascope.timeline"
--     local res = assert(timeline.run("prof_dir", { step = 12, pp = 4, microbatches = 8 }))
--     for _, r in ipairs(res.ranks) do print(r.rank, r.dashboard.op_utilization) end
-- @module ascope.timeline
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local reader = require "ascope.ascend.timeline"
local step_trace = require "ascope.ascend.step_trace"
local analysis = require "ascope.analysis.timeline"
local findings = require "ascope.analysis.timeline.findings"
local rules_mod = require "ascope.rules"
local cli = require "ascope.cli"
local log = require "ascope.log"
local fs, par = core.fs, core.par

local M = {}

function M.rules(user_file)
  return rules_mod.load("timeline", user_file) -- checked against its schema (ascope.rule_schemas)
end

local function find_trace(dir)
  local out = dir .. "/ASCEND_PROFILER_OUTPUT"
  local candidates = {}
  for _, base in ipairs({ out, dir }) do
    for _, name in ipairs(fs.list(base) or {}) do
      if name == "trace_view.json" or name:match("^ascend_pytorch_profiler.*%.db$") then
        candidates[#candidates + 1] = base .. "/" .. name
      end
    end
  end
  if #candidates == 0 then
    for _, p in ipairs(fs.walk(dir)) do
      if p:match("/msprof_[^/]*%.json$") then candidates[#candidates + 1] = p end
    end
  end
  table.sort(candidates, function(a, b)
    -- a JSON trace first: it carries the Overlap Analysis lanes
    local ja, jb = a:match("%.json$") ~= nil, b:match("%.json$") ~= nil
    if ja ~= jb then return ja end
    return a < b
  end)
  return candidates[1]
end

local function beside(path, name)
  local p = discover.dirname(path) .. "/" .. name
  return discover.is_file(p) and p or nil
end

--- The ranks to analyse: {role, rank, trace, step_trace, dir} each, or nil, message.
function M.inputs(input, opts)
  opts = opts or {}
  local st = fs.stat(input)
  if not st then return nil, input .. ": no such file or folder" end
  if st.type == "file" then
    return { { role = "", rank = 0, trace = input, dir = discover.dirname(input),
               step_trace = opts.step_trace or beside(input, "step_trace_time.csv") } }, {}
  end
  local dirs, err = discover.rank_dirs(input)
  if not dirs then return nil, err end
  local ranks = type(opts.rank_list) == "table" and opts.rank_list or cli.rank_list(opts.rank_list)
  local out, missing = {}, {}
  for _, d in ipairs(dirs) do
    if not ranks or (d.rank and ranks[d.rank]) then
      local trace = find_trace(d.dir)
      if trace then
        out[#out + 1] = { role = d.role, rank = d.rank or 0, trace = trace, dir = d.dir,
                          step_trace = opts.step_trace or beside(trace, "step_trace_time.csv") }
      else
        missing[#missing + 1] = { role = d.role, rank = d.rank, dirs = { d.dir },
                                  reason = d.dir .. ": no trace_view.json, msprof_*.json or ascend_pytorch_profiler_*.db" }
      end
    end
  end
  if #out == 0 and #missing == 0 then
    local trace = find_trace(input)
    if trace then
      out[1] = { role = discover.basename(input), rank = 0, trace = trace, dir = input,
                 step_trace = opts.step_trace or beside(trace, "step_trace_time.csv") }
    end
  end
  return out, missing
end

--- One rank: read, analyse, evaluate the rules. Returns the result or nil, message.
function M.analyse(entry, rules, opts)
  log.stage("rank %s: %s", tostring(entry.rank), entry.trace)
  local tl, err = reader.read(entry.trace, log.progress(discover.basename(entry.trace)))
  if not tl then return nil, err end
  local steps
  if entry.step_trace then
    steps, err = step_trace.read(entry.step_trace)
    if not steps then return nil, err end
  end
  local r, aerr = analysis.analyse(tl, rules, steps, opts)
  if not r then return nil, entry.trace .. ": " .. aerr end
  r.role, r.rank, r.trace, r.step_trace = entry.role, entry.rank, entry.trace, entry.step_trace
  r.events = tl.n
  r.findings = findings.evaluate(rules.rules, r)
  return r
end

--- Analyse every rank under input.
-- @tparam string input a `trace_view.json`, an `msprof_*.json`, an `ascend_pytorch_profiler_*.db`
-- or a profiling tree
-- @tparam[opt] table opts `rank_list`, `jobs` (worker processes, forked; default 1: see
-- ascope.workers), `rules` (a user rule file), `step`, `pp`,
-- `microbatches`, `top_n`, `device_regex`, `comm_regex`, `step_trace`
-- @treturn table `{ranks, failed, rules}`; each rank has the eight dimensions, `dashboard`,
-- `findings` and `not_computed`
-- @treturn[2] nil when the input cannot be used at all
-- @treturn[2] string why
function M.run(input, opts)
  opts = opts or {}
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local entries, missing = M.inputs(input, opts)
  if not entries then return nil, missing end
  local results, errors = par.map(entries, function(e)
    local r, err = M.analyse(e, rules, opts)
    if not r then error(err, 0) end
    return r
  end, { jobs = require("ascope.workers").count(opts.jobs) })
  local res = { ranks = {}, failed = missing, rules = rules, input = input }
  for i, e in ipairs(entries) do
    if results[i] then
      res.ranks[#res.ranks + 1] = results[i]
    else
      res.failed[#res.failed + 1] = { role = e.role, rank = e.rank, dirs = { e.dir }, reason = tostring(errors[i]) }
    end
  end
  return res
end

return M
