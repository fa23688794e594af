--- Timeline geometry for scripts and embedding: read each rank's timeline (trace_view.json,
-- msprof_*.json or ascend_pytorch_profiler_*.db) and step_trace_time.csv, and compute the eight
-- dimensions with the expert rules' findings. A rank with only the profiler's step split
-- (step_trace_time.csv or analysis.db) gets its jitter, and the overlap and utilisation of one
-- step from the split's own columns.
--
--     local timeline = require "ascope.timeline"
--     local res = assert(timeline.run({ input = "prof_dir", step = 12, pp = 4, microbatches = 8 }))
--     for _, r in ipairs(res.ranks) do print(r.rank, r.dashboard.op_utilization) end
--     assert(timeline.write(res, "out", { formats = { "json", "md" } }))
-- @module ascope.timeline
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local reader = require "ascope.ascend.timeline"
local step_trace = require "ascope.ascend.step_trace"
local csv_notes = require "ascope.ascend.csv_notes"
local analysis = require "ascope.analysis.timeline"
local findings = require "ascope.analysis.timeline.findings"
local patterns = require "ascope.analysis.timeline.patterns"
local rules_mod = require "ascope.rules"
local shard = require "ascope.shard"
local ranks_mod = require "ascope.ranks"
local log = require "ascope.log"
local workers = require "ascope.workers"
local recipe = require "ascope.recipe"
local report = require "ascope.report.timeline"
local timeline_html = require "ascope.report.timeline_html"
local t = require("ascope.i18n").t
local fs = core.fs

local M = {}

--- The option spec: the command line, `help`, the man page and the docs read it.
M.spec = {
  name = "timeline",
  args = "INPUT [-o OUT] [options]",
  summary = "cmd.timeline.summary",
  details = "cmd.timeline.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.timeline.output" },
    { "step-trace", arg = "FILE",
      help = "opt.timeline.step_trace" },
    { "rank-list", arg = "LIST", default = "all", help = "opt.rank_list" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = workers.MAX_JOBS, help = "opt.timeline.jobs" },
    { "step", arg = "K", type = "int", help = "opt.timeline.step" },
    { "compare-step", arg = "K", type = "int",
      help = "opt.timeline.compare_step" },
    { "pp", arg = "P", type = "int", min = 1, help = "opt.timeline.pp" },
    { "microbatches", arg = "M", type = "int", min = 1, help = "opt.timeline.microbatches" },
    { "top", arg = "N", type = "int", min = 1, help = "opt.timeline.top" },
    { "device-regex", arg = "RE", help = "opt.timeline.device_regex" },
    { "comm-regex", arg = "RE", help = "opt.timeline.comm_regex" },
    { "rules", arg = "FILE", help = "opt.timeline.rules" },
    { "format", arg = "LIST", default = "json,md,html", help = "opt.timeline.format" },
    { "layout", arg = "FILE", help = "opt.timeline.layout" },
    shard.OPTION,
  },
  outputs = {
    { "timeline_metrics.json", format = "json", help = "out.timeline_metrics.json" },
    { "timeline_report.md", format = "md", help = "out.timeline_report.md" },
    { "timeline_report.html", format = "html", help = "out.timeline_report.html" },
  },
  examples = {
    "ascope timeline rank0/ASCEND_PROFILER_OUTPUT/trace_view.json",
    "ascope timeline prof_dir -o out --pp 4 --microbatches 8 -j 4",
    "ascope timeline ascend_pytorch_profiler_0.db --step 12 --json",
  },
}

function M.rules(user_file)
  return rules_mod.load("timeline", user_file) -- checked against its schema (ascope.rule_schemas)
end

-- the timeline of a rank folder, where the input checks would find it (ascope.ascend.discover)
local function find_trace(dir, listing) return (discover.find("timeline", dir, listing)) end

-- the profiler's step split in a folder: step_trace_time.csv, else analysis.db with StepTraceTime
local function split_at(dir)
  for _, name in ipairs({ "step_trace_time.csv", "analysis.db" }) do
    local p = dir .. "/" .. name
    if discover.is_file(p) and step_trace.holds_split(p) then return p end
  end
end

local function split_beside(path) return split_at(discover.dirname(path)) end

local function split_in(dir) return split_at(dir .. "/ASCEND_PROFILER_OUTPUT") or split_at(dir) end

-- A tree without rank folders (a tool's test data, traces copied out of their runs): each
-- folder below input that holds a trace is a rank 0 of its own, named by its path under input,
-- its trace found as in a rank folder (slices together). The folders in path order.
local function loose_traces(input, opts)
  local found, out, seen = discover.files("timeline", input), {}, {}
  for _, f in ipairs(found or {}) do
    local dir = discover.dirname(f.path)
    local trace = not seen[dir] and find_trace(dir)
    seen[dir] = true
    if trace then
      local role = dir == input and discover.basename(input) or dir:sub(#input + 2)
      out[#out + 1] = { role = role, rank = 0, trace = trace, dir = dir,
                        step_trace = opts.step_trace or split_beside(trace) }
    end
  end
  return out
end

local function inputs(input, opts)
  local ranks, rerr = ranks_mod.parse(opts.rank_list)
  if rerr then return nil, rerr, "usage" end
  local st = fs.stat(input)
  if not st then return nil, t("input.no_such", input) end
  if st.type == "file" then
    -- a file in a rank folder is that rank's, as the folder would be; else it is rank 0
    local home = discover.rank_of_file(input)
    local role, rank = home and home.role or "", home and home.rank or 0
    if input:match("%.csv$") or discover.basename(input) == "analysis.db" then
      return { { role = role, rank = rank, dir = discover.dirname(input), step_trace = input } }, {}
    end
    return { { role = role, rank = rank, trace = input, dir = discover.dirname(input),
               step_trace = opts.step_trace or split_beside(input) } }, {}
  end
  local dirs, err = discover.rank_dirs(input)
  if not dirs then return nil, err end
  local out, missing = {}, {}
  for _, why in ipairs(dirs.unreadable or {}) do -- ranks may hide there: the run fails, the others are kept
    missing[#missing + 1] = { role = "?", rank = nil, dirs = {}, reason = why, unmatched = true }
  end
  for _, d in ipairs(dirs) do
    if not ranks or (d.rank and ranks[d.rank]) then
      local trace, why, odd = discover.find("timeline", d.dir, d.listing)
      local split = not trace and not odd and split_in(d.dir)
      if d.unreadable then -- a folder of the rank's that could not be read: its files may be there
        missing[#missing + 1] = { role = d.role, rank = d.rank, dirs = { d.dir }, reason = table.concat(d.unreadable, "; ") }
      elseif trace then
        out[#out + 1] = { role = d.role, rank = d.rank or 0, trace = trace, dir = d.dir,
                          step_trace = opts.step_trace or split_beside(trace) }
      elseif odd then -- a trace that is there but cannot be read: the rank fails, not its split alone
        missing[#missing + 1] = { role = d.role, rank = d.rank, dirs = { d.dir }, reason = why }
      elseif split then
        out[#out + 1] = { role = d.role, rank = d.rank or 0, dir = d.dir, step_trace = split }
      else
        missing[#missing + 1] = { role = d.role, rank = d.rank, dirs = { d.dir },
                                  reason = t("timeline.no_trace_in", d.dir) }
      end
    end
  end
  for _, why in ipairs(ranks_mod.unmatched(ranks, nil, dirs, input)) do -- asked for and absent: the run fails
    missing[#missing + 1] = { role = "?", rank = nil, dirs = {}, reason = why, unmatched = true }
  end
  if #out == 0 and #missing == 0 then
    local trace = find_trace(input)
    if trace then
      out[1] = { role = discover.basename(input), rank = 0, trace = trace, dir = input,
                 step_trace = opts.step_trace or split_beside(trace) }
    else
      out = loose_traces(input, opts)
    end
  end
  return out, missing
end

--- The ranks to analyse: {role, rank, trace, step_trace, own_split, dir} each, or nil, message
-- (and "usage" when the rank list is not one). own_split: the step split is the rank's own (found
-- beside its trace or in its folder, or the run's one rank): its row may stand for the rank's
-- composition of the step, where a --step-trace file given for a tree of ranks may not.
function M.inputs(input, opts)
  opts = opts or {}
  local out, missing, usage = inputs(input, opts)
  for _, e in ipairs(out or {}) do
    e.own_split = e.step_trace ~= nil and (e.step_trace ~= opts.step_trace or #out == 1)
  end
  return out, missing, usage
end

--- One rank: read, analyse, evaluate the rules. re: the compiled patterns (patterns.compile).
-- Returns the result or nil, message.
function M.analyse(entry, rules, re, opts)
  local tl, err
  if entry.trace then
    local slices = #reader.slices(entry.trace)
    log.stage("%s", t("timeline.reading", tostring(entry.rank), entry.trace)
      .. (slices > 1 and t("timeline.more_slices", slices - 1) or ""))
    tl, err = reader.read(entry.trace, log.progress(discover.basename(entry.trace)))
    if not tl then return nil, err end
  end
  -- a step split that cannot be read costs a rank with a trace only the profiler's split: its
  -- own steps are used, and the run still exits 1 (something given could not be read)
  local steps, split_err
  if entry.step_trace then
    steps, split_err = step_trace.read(entry.step_trace)
    if steps then steps.own = entry.own_split end
    if not steps and not tl then return nil, split_err end
  end
  local r, aerr = analysis.analyse(tl, rules, re, steps, opts)
  if not r then return nil, (entry.trace or entry.step_trace) .. ": " .. aerr end
  r.role, r.rank, r.trace, r.step_trace = entry.role, entry.rank, entry.trace, steps and entry.step_trace
  r.split_unread = split_err
  r.warning = tl and tl.warning -- a value the reader could not convert (it became empty)
  for _, note in ipairs(tl and tl.notes or {}) do r.warnings[#r.warnings + 1] = note end -- a .db's rows left out
  if steps and steps.cut then r.warnings[#r.warnings + 1] = steps.cut end
  if steps then csv_notes(steps.source, steps, r.warnings) end
  r.events = tl and tl.n or 0
  r.findings = findings.evaluate(rules.rules, r)
  return r
end

--- The work of a run as a plan (see ascope.shard): one unit per rank with its trace and step
-- trace. opts as for run (the caller's table is not written to). Returns the plan, or nil,
-- message and "usage" as run does.
function M.plan(a, b)
  local opts = recipe.options(M.spec, a, b)
  opts.top_n = opts.top_n or opts.top -- top_n: the name earlier scripts use
  local input = opts.input
  if not input then return nil, t("input.none") end
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr, "usage" end
  local re, perr = patterns.compile(rules, opts)
  if not re then return nil, perr, "usage" end
  local entries, missing, kind = M.inputs(input, opts)
  if not entries then return nil, missing, kind end
  if #entries == 0 and #missing == 0 then return nil, t("timeline.no_input", input) end
  local units = {}
  for i, e in ipairs(entries) do
    local files = {}
    -- every slice of an msprof timeline (their bytes weigh the shards, a change to any is caught
    -- at merge), and the step split
    for _, p in ipairs(e.trace and reader.slices(e.trace) or {}) do files[#files + 1] = p end
    if e.step_trace then files[#files + 1] = e.step_trace end
    units[i] = { key = ("%s/%s"):format(e.role, tostring(e.rank)), files = files }
  end
  return { units = units, rules = rules, re = re, opts = opts,
           context = { input = input, entries = entries, missing = missing } }
end

--- One unit of a plan: the rank's result, or nil and the reason.
function M.work(plan, i) return M.analyse(plan.context.entries[i], plan.rules, plan.re, plan.opts) end

--- The cross-rank step: the context and the ranks' outcomes -> the result run returns.
function M.assemble(context, outcomes, rules)
  local res = { ranks = {}, failed = {}, rules = rules, input = context.input }
  for i, f in ipairs(context.missing) do res.failed[i] = f end
  for i, e in ipairs(context.entries) do
    local o = outcomes[i]
    if o.ok then
      res.ranks[#res.ranks + 1] = o.ok
    else
      res.failed[#res.failed + 1] = { role = e.role, rank = e.rank, dirs = { e.dir }, reason = o.error }
    end
  end
  res.unreadable = recipe.unreadable(res.failed, res.input)
  return res
end

--- Analyse every rank under opts.input. Prints nothing (stages and progress go to
-- ascope.log), writes nothing.
-- @tparam table opts `input` (a `trace_view.json`, an `msprof_*.json`, an
-- `ascend_pytorch_profiler_*.db`, a `step_trace_time.csv` or `analysis.db` (a rank with its step split alone), or a
-- profiling tree), `rank_list`, `jobs` (worker processes, forked; default 1: see
-- ascope.workers), `rules` (a user rule file), `step`, `compare_step`, `pp`, `microbatches`,
-- `top`, `device_regex`, `comm_regex` (extended regular expressions), `step_trace`. The form
-- run(input, opts) works too. opts is not written to.
-- @tparam[opt] table legacy the options, in the form run(input, opts)
-- @treturn table `{ranks, failed, unreadable, rules}`; each rank has the dimensions
-- (ascope.analysis.timeline.dimensions), `dashboard`, `findings` and `not_computed`;
-- `unreadable`: `{path, message}` of each rank that could not be read
-- @treturn[2] nil when the input cannot be used at all
-- @treturn[2] string why
-- @treturn[2] string `"usage"` when the rules or an option are wrong rather than the data (the
-- command line exits 2)
function M.run(opts, legacy)
  local plan, err, kind = M.plan(opts, legacy)
  if not plan then return nil, err, kind end
  return M.assemble(plan.context, shard.compute(M, plan, shard.select(plan), plan.opts.jobs), plan.rules)
end

--- Findings: each expert rule that fired on a rank, most severe first within the rank: the
-- rule's own fields ({id, severity, metric, value, threshold, op, finding, action, evidence})
-- with the rank and role. `analysis` ("timeline " .. id) and `message` (the finding's text) are
-- read through the metatable, so the rows listed (timeline_metrics.json, --json) stay the rule's.
function M.anomalies(res)
  local out = {}
  for _, r in ipairs(res.ranks) do
    for _, f in ipairs(r.findings or {}) do
      local copy = { rank = r.rank, role = r.role }
      for k, v in pairs(f) do copy[k] = v end
      out[#out + 1] = setmetatable(copy, { __index = { analysis = "timeline " .. f.id, message = f.finding } })
    end
  end
  return out
end

local WRITERS = {
  json = { file = "timeline_metrics.json", write = report.metrics_json },
  md = { file = "timeline_report.md", write = report.report_md },
  html = { file = "timeline_report.html", weight = 2,
           write = function(res, path, wopts) return timeline_html.write(res, path, wopts.layout) end },
}

--- Write the outputs of a result into outdir (made when missing). wopts: `formats` (a list or
-- "json,md"; default json, md, html), `layout` (a layout file for the HTML report), `jobs`
-- (files written in parallel worker processes; default 1). Prints nothing.
-- @treturn boolean true, and the list of the paths written
-- @treturn[2] nil and the message of what could not be written
function M.write(res, outdir, wopts)
  return recipe.write(M.spec, WRITERS, res, outdir, wopts)
end

return M
