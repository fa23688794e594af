--- Memory attribution for scripts and embedding: read every rank's operator_memory.csv, give
-- each allocation the Python call stack of the operator that made it, and summarise.
--
--   local memory = require "ascope.memory"
--   local result = memory.parse("prof_dir", { match = "latest", rank_list = "0-3", jobs = 4 })
--   for row in result:rows() do                 -- all ranks, in time order
--     if row.size_kb > 1e6 then print(row.rank_id, row.name, row.call_stack_top) end
--   end
--   for _, rank in ipairs(result.ranks) do print(rank.rank, rank.summary.peak.allocated_mb) end
--   for _, f in ipairs(result.failed) do print("unreadable:", f.role, f.rank, f.reason) end
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local memory_csv = require "ascope.ascend.memory_csv"
local trace = require "ascope.ascend.trace"
local analysis = require "ascope.analysis.memory"
local checks = require "ascope.checks"
local rules_mod = require "ascope.rules"
local cli = require "ascope.cli"
local log = require "ascope.log"
local column, par = core.column, core.par

local M = {}

local OUT = "/ASCEND_PROFILER_OUTPUT/"

--- Load and validate the memory rules (bundled, plus a user file).
function M.rules(user_file)
  local r, err = rules_mod.load("memory", user_file)
  if not r then return nil, err end
  local bad = checks.validate(r.input, "memory.input") or checks.validate(r.output, "memory.output")
  if bad then return nil, bad end
  return r
end

local function concat(parts, key)
  if #parts == 1 then return parts[1][key] end
  local cols = {}
  for i, p in ipairs(parts) do cols[i] = p[key] end
  return column.concat(cols)
end

-- Read the two files of a folder: {mem, trace} or nil, message. With split, in two worker
-- processes at once (used when there are more CPUs than ranks).
local function read_inputs(d, split)
  local mem_path = d.dir .. OUT .. "operator_memory.csv"
  local trace_path = d.dir .. OUT .. "trace_view.json"
  local has_trace = discover.is_file(trace_path)
  local function read(what)
    local v, err
    if what == "csv" then
      log.stage("rank %s (%s): %s", tostring(d.rank), d.role, mem_path)
      v, err = memory_csv.read(mem_path, log.progress("operator_memory.csv"))
    else
      log.stage("rank %s (%s): %s", tostring(d.rank), d.role, trace_path)
      v, err = trace.call_stacks(trace_path, log.progress("trace_view.json"))
    end
    if not v then error(err, 0) end -- level 0: the message already names file and place
    return v
  end
  local todo = has_trace and { "csv", "trace" } or { "csv" }
  local results, errors = par.map(todo, function(what) return read(what) end, { jobs = split and 2 or 1, here = true })
  for i = 1, #todo do
    if errors[i] then return nil, tostring(errors[i]) end
  end
  return { mem = results[1], trace = results[2], mem_path = mem_path, trace_path = trace_path }
end

local function read_folder(d, mode, rules, warnings, split)
  local problems = checks.run(rules.input, { dir = d.dir })
  local errs = {}
  for _, p in ipairs(problems) do
    if p.severity == "error" then errs[#errs + 1] = p.message else warnings[#warnings + 1] = p.message end
  end
  if #errs > 0 then return nil, table.concat(errs, "; ") end
  local inputs, err = read_inputs(d, split)
  if not inputs then return nil, err end
  local mem, tr = inputs.mem, inputs.trace
  if mem.bad_cells > 0 then
    warnings[#warnings + 1] = ("%s: %d value(s) are not numbers and were left empty; first: %s")
      :format(inputs.mem_path, mem.bad_cells, mem.first_bad)
  end
  if mem.cut then warnings[#warnings + 1] = mem.cut end
  if tr and tr.warning then warnings[#warnings + 1] = inputs.trace_path .. ": " .. tr.warning .. " (left empty)" end
  local att = analysis.attribute(mem, tr, mode)
  return {
    name = mem.name, size_kb = mem.size_kb, start_ns = mem.alloc_ns, dur_ns = mem.dur_ns,
    allocated_mb = mem.allocated_mb, reserved_mb = mem.reserved_mb, active_mb = mem.active_mb,
    device = mem.device, call_stack = att.call_stack, top = att.top,
    matched = att.matched, suspects = att.suspects, latest_matched = att.latest_matched,
    n = mem.n, has_trace = tr ~= nil,
  }
end

--- Read, attribute and summarise one (role, rank): a group of rank folders in collection order.
-- Returns the rank's result table, or nil and the reason.
function M.read_rank(group, opts, rules)
  local warnings = {}
  local parts = {}
  for _, d in ipairs(group.dirs) do
    local part, err = read_folder(d, opts.match, rules, warnings, opts.split_reads)
    if not part then return nil, err end
    parts[#parts + 1] = part
  end
  local r = {
    role = group.role, rank = group.rank, warnings = warnings, dirs = {},
    n = 0, matched = 0, suspects = 0, latest_matched = 0,
  }
  for i, d in ipairs(group.dirs) do r.dirs[i] = d.dir end
  for _, p in ipairs(parts) do
    r.n = r.n + p.n
    r.matched = r.matched + p.matched
    r.suspects = r.suspects + p.suspects
    r.latest_matched = r.latest_matched + p.latest_matched
  end
  for _, k in ipairs({ "name", "size_kb", "start_ns", "dur_ns", "allocated_mb", "reserved_mb",
                       "active_mb", "device", "call_stack", "top" }) do
    r[k] = concat(parts, k)
  end
  local s = analysis.summarize(r, rules.report and rules.report.top_n)
  s.match_mode = opts.match
  s.matched = r.matched
  s.match_rate = r.n > 0 and r.matched / r.n or nil
  s.suspect_latest_matches = r.suspects
  s.latest_matches = r.latest_matched
  r.summary = s
  return r
end

--- Group rank folders by (role, rank), applying the rank and role filters.
function M.groups(input, opts)
  local dirs, err = discover.rank_dirs(input)
  if not dirs then return nil, err end
  local ranks = type(opts.rank_list) == "table" and opts.rank_list or cli.rank_list(opts.rank_list)
  local roles
  if opts.roles and #opts.roles > 0 then
    roles = {}
    for _, r in ipairs(opts.roles) do roles[r] = true end
  end
  local groups, by_key, unknown = {}, {}, {}
  for _, d in ipairs(dirs) do
    if d.rank == nil then
      unknown[#unknown + 1] = d
    elseif (not ranks or ranks[d.rank]) and (not roles or roles[d.role]) then
      local key = d.role .. "\0" .. d.rank
      local g = by_key[key]
      if not g then
        g = { role = d.role, rank = d.rank, dirs = {} }
        by_key[key] = g
        groups[#groups + 1] = g
      end
      g.dirs[#g.dirs + 1] = d
    end
  end
  return groups, unknown, dirs.unreadable
end

local Result = {}
Result.__index = Result

--- Iterate over every event of every rank in output order (start time, then rank, then file
-- order). Each row: name, role, rank_id, call_stack, call_stack_top, size_kb, start_ns,
-- duration_ns, start_time_ms, duration_ms, total_allocated_mb, total_reserved_mb,
-- total_active_mb, device_type.
function Result:rows()
  local order, where = self:order()
  local k = 0
  return function()
    k = k + 1
    local pos = order[k]
    if not pos then return nil end
    local r, i = where(pos)
    local d = r.dur_ns[i]
    return {
      name = r.name[i], role = r.role, rank_id = r.rank,
      call_stack = r.call_stack[i] or "", call_stack_top = r.top[i] or "",
      size_kb = r.size_kb[i], start_ns = r.start_ns[i], duration_ns = d or 0,
      start_time_ms = r.start_ns[i] / 1e6, duration_ms = (d or 0) / 1e6,
      total_allocated_mb = r.allocated_mb[i] or 0.0, total_reserved_mb = r.reserved_mb[i] or 0.0,
      total_active_mb = r.active_mb[i] or 0.0, device_type = r.device[i] or "",
    }
  end
end

--- The output order as a column of positions into the ranks' rows, and a function mapping a
-- position to (rank result, row).
function Result:order()
  local ranks = self.ranks
  local offsets = {}
  local total = 0
  for i, r in ipairs(ranks) do
    offsets[i] = total
    total = total + r.n
  end
  local order
  if #ranks == 0 then
    order = column.new("integer")
  elseif #ranks == 1 then
    order = ranks[1].start_ns:order()
  else
    local cols = {}
    for i, r in ipairs(ranks) do cols[i] = r.start_ns end
    order = column.concat(cols):order() -- stable: ties keep rank order, then file order
  end
  local function where(pos)
    local lo, hi = 1, #ranks
    while lo < hi do
      local mid = (lo + hi + 1) // 2
      if offsets[mid] < pos then lo = mid else hi = mid - 1 end
    end
    return ranks[lo], pos - offsets[lo]
  end
  return order, where
end

--- Parse a profiling tree. opts: match ("latest"), rank_list ("all" | "0,2,4-7" | set),
-- roles (list), jobs (CPUs), rules (user rule file). Returns a result with ranks (each with
-- columns and summary), failed ({role, rank, dirs, reason}), and rows()/order() iterators;
-- or nil, message when the input cannot be used at all.
function M.parse(input, opts)
  opts = opts or {}
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  opts.match = opts.match or (rules.match and rules.match.default_mode) or "latest"
  local groups, unknown, unreadable = M.groups(input, opts)
  if not groups then return nil, unknown end
  local result = setmetatable({ ranks = {}, failed = {}, input = input, match = opts.match }, Result)
  for _, why in ipairs(unreadable or {}) do -- ranks may hide there: the run fails, the others are kept
    result.failed[#result.failed + 1] = { role = "?", rank = nil, dirs = {}, reason = why }
  end
  for _, d in ipairs(unknown) do
    result.failed[#result.failed + 1] = {
      role = d.role, rank = nil, dirs = { d.dir },
      reason = d.dir .. ": cannot tell the rank (no profiler_info_<N>.json, no rank_id, no rank number in the folder name)",
    }
  end
  -- spare CPUs read a rank's CSV and trace at the same time
  opts.split_reads = #groups * 2 <= (opts.jobs or core.fs.cpus())
  local results, errors = par.map(groups, function(g)
    local r, err = M.read_rank(g, opts, rules)
    if not r then error(err, 0) end
    return r
  end, { jobs = opts.jobs, here = true }) -- this process reads one rank itself; bad input stays that rank's error
  for i, g in ipairs(groups) do
    local r = results[i]
    if r then
      result.ranks[#result.ranks + 1] = r
    else
      local dirs = {}
      for k, d in ipairs(g.dirs) do dirs[k] = d.dir end
      result.failed[#result.failed + 1] = { role = g.role, rank = g.rank, dirs = dirs,
                                            reason = tostring(errors[i] or "unknown failure") }
    end
  end
  result.rules = rules
  return result
end

--- Output checks (rules.output) over the merged rows; returns a list of problems.
function M.check_output(result)
  local subject = { rows = 0, non_numeric = { size_kb = 0, start_time_ms = 0 }, positive = { size_kb = 0 } }
  for _, r in ipairs(result.ranks) do
    subject.rows = subject.rows + r.n
    local cnt, _, _, mx = r.size_kb:stats()
    subject.non_numeric.size_kb = subject.non_numeric.size_kb + (r.n - cnt)
    local tcount = r.start_ns:stats()
    subject.non_numeric.start_time_ms = subject.non_numeric.start_time_ms + (r.n - tcount)
    if mx and mx > 0 then subject.positive.size_kb = subject.positive.size_kb + 1 end
  end
  return checks.run(result.rules.output, subject)
end

return M
