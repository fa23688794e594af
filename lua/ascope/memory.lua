--- Memory attribution for scripts and embedding: read every rank's operator_memory.csv, give
-- each allocation the Python call stack of the operator that made it, and summarise.
--
--     local memory = require "ascope.memory"
--     local result = assert(memory.run({ input = "prof_dir", match = "latest", rank_list = "0-3", jobs = 4 }))
--     for row in result:rows() do                 -- all ranks, in time order
--       if row.size_kb > 1e6 then print(row.rank_id, row.name, row.call_stack_top) end
--     end
--     for _, rank in ipairs(result.ranks) do print(rank.rank, rank.summary.peak.allocated_mb) end
--     for _, u in ipairs(result.unreadable) do print("unreadable:", u.path, u.message) end
--     assert(memory.write(result, "out", { formats = { "csv", "json" } }))
-- @module ascope.memory
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local memory_csv = require "ascope.ascend.memory_csv"
local memory_record = require "ascope.ascend.memory_record"
local memory_db = require "ascope.ascend.memory_db"
local profdb = require "ascope.ascend.profdb"
local csv_notes = require "ascope.ascend.csv_notes"
local trace = require "ascope.ascend.trace"
local analysis = require "ascope.analysis.memory"
local checks = require "ascope.checks"
local rules_mod = require "ascope.rules"
local ranks_mod = require "ascope.ranks"
local shard = require "ascope.shard"
local log = require "ascope.log"
local workers = require "ascope.workers"
local heap = require "ascope.heap"
local recipe = require "ascope.recipe"
local report = require "ascope.report.memory"
local memory_html = require "ascope.report.memory_html"
local t = require("ascope.i18n").t
local column = core.column

local M = {}

--- The option spec: the command line, `help`, the man page and the docs read it.
M.spec = {
  name = "memory",
  args = "INPUT [-o OUT] [options]",
  summary = "cmd.memory.summary",
  details = "cmd.memory.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.memory.output" },
    { "output-path", arg = "DIR", alias_of = "output" },
    { "input-path", arg = "PATH", alias_of = "input" },
    { "input-type", arg = "TYPE", choices = { "ascend_memory" }, help = "opt.memory.input_type" },
    { "profiler-type", arg = "TYPE", choices = { "memory" }, help = "opt.memory.profiler_type" },
    { "rank-list", arg = "LIST", default = "all", help = "opt.rank_list" },
    { "role", arg = "NAME", many = true, help = "opt.memory.role" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = workers.MAX_JOBS, help = "opt.memory.jobs" },
    { "match", arg = "MODE", choices = { "latest", "within", "within-or-latest" },
      help = "opt.memory.match" },
    { "rules", arg = "FILE", help = "opt.memory.rules" },
    { "format", arg = "LIST", default = "csv,json,md,html,trace", help = "opt.memory.format" },
    { "layout", arg = "FILE", help = "opt.memory.layout" },
    shard.OPTION,
  },
  outputs = {
    { "memory_events.csv", format = "csv", help = "out.memory_events.csv" },
    { "memory_summary.json", format = "json", help = "out.memory_summary.json" },
    { "memory_report.md", format = "md", help = "out.memory_report.md" },
    { "memory_report.html", format = "html", help = "out.memory_report.html" },
    { "memory_trace.json", format = "trace", help = "out.memory_trace.json" },
  },
  examples = {
    "ascope memory prof_data -o out",
    "ascope memory prof_data --rank-list 0-3 --role actor_update -j 4 --match within-or-latest",
    "ascope memory --input-path prof_data --input-type ascend_memory --profiler-type memory --output-path out",
  },
}

local OUT = "/ASCEND_PROFILER_OUTPUT/"

--- Load and validate the memory rules (bundled, plus a user file).
function M.rules(user_file)
  return rules_mod.load("memory", user_file) -- checked against its schema (ascope.rule_schemas)
end

local function concat(parts, key)
  if #parts == 1 then return parts[1][key] end
  local cols = {}
  for i, p in ipairs(parts) do cols[i] = p[key] end
  return column.concat(cols)
end

-- Read the files of a folder: {mem, trace, record} or nil, message. operator_memory.csv is
-- required; a trace that breaks off still gives the events before the break (trace.cut), a
-- missing trace or memory_record.csv is no data, an unreadable memory_record.csv is a problem
-- (record_error). With split (more CPUs than ranks), the CSV is read on a thread of its own while
-- the trace is scanned: both stay in this process, so neither's columns and strings are handed
-- over from a worker (0.3 s for a trace whose 200k call stacks are all distinct).
local function read_inputs(d, listing, split, required)
  local paths = { -- found as the input checks found them; a missing one reads as its usual place
    csv = discover.find("operator_memory", d.dir, listing) or d.dir .. OUT .. memory_csv.FILE,
    trace = discover.find("call_stacks", d.dir, listing) or d.dir .. OUT .. "trace_view.json",
    record = discover.find("memory_record", d.dir, listing) or d.dir .. OUT .. memory_record.FILE,
  }
  -- With split, the trace's scan takes every CPU there is, though the CSV is read beside it:
  -- the CSV takes about half the trace's time, so for that while three threads share two
  -- CPUs and then the trace has both, where one CPU fewer left one idle once the CSV was in.
  -- Counted here, before the CSV's thread starts and makes the CPUs look busy.
  local threads = split and (workers.scan_threads or core.fs.workers()) or nil
  local function read(what, beside)
    log.stage("%s", t("memory.reading", tostring(d.rank), d.role, paths[what]))
    if profdb.is_db(paths[what]) then
      local v, err = (what == "csv" and memory_db.mem or what == "trace" and memory_db.call_stacks
                      or memory_db.record)(paths[what])
      if beside then beside() end
      if not v and what ~= "record" then error(err, 0) end
      if v == false then return nil end -- no MEMORY_RECORD: no process memory, as without the CSV
      return v or { error = err }
    end
    if what == "csv" then
      local v, err = memory_csv.read(paths.csv, not beside and log.progress(memory_csv.FILE) or nil, required,
        beside)
      if not v then error(err, 0) end -- level 0: the message already names file and place
      return v
    elseif what == "trace" then
      local v, err = trace.call_stacks(paths.trace, log.progress("trace_view.json"), true, threads)
      if not v then error(err, 0) end
      return v
    end
    local v, err = memory_record.read(paths.record, log.progress(memory_record.FILE))
    return v or { error = err }
  end
  local got = { mem_path = paths.csv, trace_path = paths.trace, record_path = paths.record }
  local has_trace = discover.is_file(paths.trace)
  local ok, v, trace_ok, trace_v
  if split and has_trace then
    ok, v = pcall(read, "csv", function() trace_ok, trace_v = pcall(read, "trace") end)
  else
    ok, v = pcall(read, "csv")
    if ok and has_trace then trace_ok, trace_v = pcall(read, "trace") end
  end
  if not ok then return nil, tostring(v) end -- the CSV's error first, as it is the one required
  if has_trace and not trace_ok then return nil, tostring(trace_v) end
  got.csv, got.trace = v, trace_v
  if discover.is_file(paths.record) then got.record = read("record") end
  got.mem = got.csv
  if got.record and got.record.error then got.record_error, got.record = got.record.error, nil end
  return got
end

-- listing: the rank folder's (see ascope.ascend.discover), shared by the checks and the reads
local function read_folder(d, listing, opts, classify, rules, warnings, problems, split)
  local checked = checks.run(rules.input, { dir = d.dir, listing = listing })
  local errs = {}
  for _, p in ipairs(checked) do
    if p.severity == "error" then errs[#errs + 1] = p.message else warnings[#warnings + 1] = p.message end
  end
  if #errs > 0 then return nil, table.concat(errs, "; ") end
  local inputs, err = read_inputs(d, listing, split, memory_csv.required(rules))
  if not inputs then return nil, err end
  local mem, tr = inputs.mem, inputs.trace
  csv_notes(inputs.mem_path, mem, warnings)
  if mem.note then warnings[#warnings + 1] = t("input.note", inputs.mem_path, mem.note) end
  if tr and tr.warning then warnings[#warnings + 1] = t("memory.trace_warning", inputs.trace_path, tr.warning) end
  if tr and tr.note then warnings[#warnings + 1] = t("input.note", inputs.trace_path, tr.note) end
  if tr and tr.cut then problems[#problems + 1] = t("memory.trace_cut", tr.cut, tr.n) end
  if inputs.record_error then problems[#problems + 1] = t("memory.record_unreadable", inputs.record_error) end
  local rec = inputs.record
  if rec then csv_notes(inputs.record_path, rec, warnings) end
  -- a last line without its line end: a row with fewer fields than the header was surely cut
  -- (the rank was read in part); a whole one may be a writer's missing last line end
  for _, f in ipairs({ mem, rec or {} }) do
    if f.cut then
      local list = f.cut_dropped and problems or warnings
      list[#list + 1] = f.cut
    end
  end
  local att = analysis.attribute(mem, tr, opts.match)
  -- The trace's columns and the match index are garbage from here: collected now, the summary's
  -- columns reuse their memory instead of adding to it (a 1 GB rank: 153 -> 142 MB peak)
  local has_trace, dropped = tr ~= nil, tr and tr.n or 0
  inputs, tr = nil, nil -- luacheck: ignore 311 (live locals would keep the trace from the collection)
  heap.release(dropped)
  return {
    name = mem.name, size_kb = mem.size_kb, start_ns = mem.alloc_ns, dur_ns = mem.dur_ns,
    release_ns = mem.release_ns, allocated_mb = mem.allocated_mb, reserved_mb = mem.reserved_mb,
    active_mb = mem.active_mb, rel_allocated_mb = mem.rel_allocated_mb, rel_reserved_mb = mem.rel_reserved_mb,
    device = mem.device, call_stack = att.call_stack, top = att.top,
    component = mem.name:map(classify),
    matched = att.matched, suspects = att.suspects, latest_matched = att.latest_matched,
    changed_by_fallback = att.changed_by_fallback,
    n = mem.n, has_trace = has_trace, record = rec,
  }
end

local ROW_COLUMNS = { "name", "size_kb", "start_ns", "dur_ns", "release_ns", "allocated_mb", "reserved_mb",
                      "active_mb", "rel_allocated_mb", "rel_reserved_mb", "device", "call_stack", "top", "component" }
local RECORD_COLUMNS = { "component", "ts_ns", "allocated_mb", "reserved_mb", "active_mb", "device" }

--- Read, attribute and summarise one (role, rank): a group of rank folders in collection order.
-- listings: rank folder -> what discovery listed there (a plan's), so that nothing is listed
-- again. Returns the rank's result table, or nil and the reason.
function M.read_rank(group, opts, rules, listings)
  local warnings, problems = {}, {}
  local parts = {}
  local classify = opts.classify or analysis.classifier(rules.components)
  for _, d in ipairs(group.dirs) do
    if d.unreadable then return nil, table.concat(d.unreadable, "; ") end -- its files may be there
    local listing = listings and listings[d.dir] or d.listing
    local part, err = read_folder(d, listing, opts, classify, rules, warnings, problems, opts.split_reads)
    if not part then return nil, err end
    parts[#parts + 1] = part
  end
  local r = {
    role = group.role, rank = group.rank, warnings = warnings, problems = problems, dirs = {},
    n = 0, matched = 0, suspects = 0, latest_matched = 0, changed_by_fallback = 0,
  }
  for i, d in ipairs(group.dirs) do r.dirs[i] = d.dir end
  local records = {}
  for _, p in ipairs(parts) do
    for _, k in ipairs({ "n", "matched", "suspects", "latest_matched", "changed_by_fallback" }) do
      r[k] = r[k] + p[k]
    end
    if p.record then records[#records + 1] = p.record end
  end
  for _, k in ipairs(ROW_COLUMNS) do r[k] = concat(parts, k) end
  if #records > 0 then
    r.record = { n = 0 }
    for _, rec in ipairs(records) do r.record.n = r.record.n + rec.n end
    for _, k in ipairs(RECORD_COLUMNS) do r.record[k] = concat(records, k) end
  end
  local s = analysis.summarize(r, rules.report and rules.report.top_n)
  s.match_mode = opts.match
  s.matched = r.matched
  s.match_rate = r.n > 0 and r.matched / r.n or nil
  s.suspect_latest_matches = r.suspects
  s.latest_matches = r.latest_matched
  s.changed_by_fallback = r.changed_by_fallback
  s.record = analysis.record_peaks(r.record)
  r.summary = s
  -- the release totals serve the peaks only: no output has them, so they are not handed back
  -- from the worker (two columns of a million rows were 40-75 MB more at the command's peak)
  r.rel_allocated_mb, r.rel_reserved_mb = nil, nil
  return r
end

--- Group rank folders by (role, rank), applying the rank and role filters. A folder reached a
-- second time (same real path or same profiler identity) is left out and named in duplicates;
-- a rank or role asked for that no folder has is named in unmatched (ascope.ranks.unmatched).
-- Returns groups, unknown, duplicates, unreadable, unmatched. A rank list that is not one: nil,
-- message, "usage".
function M.groups(input, opts)
  local ranks, rerr = ranks_mod.parse(opts.rank_list)
  if rerr then return nil, rerr, "usage" end
  local dirs, err = discover.rank_dirs(input)
  if not dirs then return nil, err end
  local role_list = opts.role or opts.roles
  local roles
  if role_list and #role_list > 0 then
    roles = {}
    for _, r in ipairs(role_list) do roles[r] = true end
  end
  local groups, by_key, unknown, duplicates = {}, {}, {}, {}
  local seen = {}
  for _, d in ipairs(dirs) do
    local real, ident = discover.identity(d.dir, d.listing)
    local same = seen[real] and { seen[real], t("memory.real_path", real) } or ident and seen[ident] and { seen[ident], ident }
    if not same then
      seen[real] = d.dir
      if ident then seen[ident] = d.dir end
    end
    if same then -- read once: the first folder stands for both
      duplicates[#duplicates + 1] = t("memory.duplicate", d.dir, same[1], same[2])
    elseif d.rank == nil then
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
  return groups, unknown, duplicates, dirs.unreadable, ranks_mod.unmatched(ranks, role_list, dirs, input)
end

-- A role none of whose ranks has operator_memory.csv (or a database for it) was profiled
-- without memory (rl-insight's mstx-only roles beside its memory role): when another role has
-- it, that role's ranks are left out with a warning, not failed one by one. A rank without the
-- file in a role whose other ranks have it stays a failure: its data is lost. No role with it:
-- every rank fails, as ever. Returns the groups kept and the warnings.
function M.unprofiled_roles(groups)
  local has, order, count, any = {}, {}, {}, false
  for _, g in ipairs(groups) do
    if has[g.role] == nil then
      has[g.role] = false
      order[#order + 1] = g.role
    end
    count[g.role] = (count[g.role] or 0) + 1
    for _, d in ipairs(g.dirs) do
      -- a folder it could not read may hold the file: the rank fails with why, never left out
      if d.unreadable or discover.find("operator_memory", d.dir, d.listing) then
        has[g.role], any = true, true
        break
      end
    end
  end
  if not any then return groups, {} end
  local kept, skipped = {}, {}
  for _, g in ipairs(groups) do if has[g.role] then kept[#kept + 1] = g end end
  for _, role in ipairs(order) do
    if not has[role] then skipped[#skipped + 1] = t("memory.role_unprofiled", role, count[role]) end
  end
  return kept, skipped
end

local Result = {}
Result.__index = Result

--- Iterate over every event of every rank in output order (start time, then rank, then file
-- order). Each row: name, role, rank_id, call_stack, call_stack_top, size_kb, start_ns,
-- duration_ns, start_time_ms, duration_ms, total_allocated_mb, total_reserved_mb,
-- total_active_mb (nil when the file gives none), device_type, component (PTA, GE, ...).
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
      total_allocated_mb = r.allocated_mb[i], total_reserved_mb = r.reserved_mb[i],
      total_active_mb = r.active_mb[i], device_type = r.device[i] or "", component = r.component[i],
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

--- The work of a run as a plan (see ascope.shard): one unit per (role, rank) with its input
-- files, and the context the cross-rank step needs (plain data: the groups, the folders whose
-- rank is unknown, the duplicates). opts as for run (the caller's table is not written to).
-- Returns the plan, or nil, message and "usage" when an option rather than the data is wrong;
-- an input without any rank folder is nil, message.
function M.plan(a, b)
  local opts = recipe.options(M.spec, a, b)
  local input = opts.input
  if not input then return nil, t("input.none") end
  if not core.fs.stat(input) then return nil, t("input.no_such", input) end
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  opts.match = opts.match or (rules.match and rules.match.default_mode) or "latest"
  local groups, unknown, duplicates, unreadable, unmatched = M.groups(input, opts)
  if not groups then return nil, unknown, duplicates end
  if #groups == 0 and #unknown == 0 and #(unreadable or {}) == 0 then
    return nil, #unmatched > 0 and table.concat(unmatched, "; ") or t("memory.no_ranks", input)
  end
  local unprofiled
  groups, unprofiled = M.unprofiled_roles(groups)
  -- what discovery listed in each rank folder stays with the plan, out of its context (plain
  -- data that a shard saves): the checks and the reads of the units find files through it
  local units, unknown_dirs, listings = {}, {}, {}
  for i, g in ipairs(groups) do
    local files = {}
    for _, d in ipairs(g.dirs) do
      listings[d.dir], d.listing = d.listing, nil
      for _, kind in ipairs({ "operator_memory", "call_stacks", "memory_record" }) do
        files[#files + 1] = discover.find(kind, d.dir, listings[d.dir])
      end
    end
    units[i] = { key = g.role .. "/" .. tostring(g.rank), files = files }
  end
  for i, d in ipairs(unknown) do unknown_dirs[i] = { role = d.role, dir = d.dir, rank_unread = d.rank_unread } end
  return {
    units = units, rules = rules, opts = opts, listings = listings,
    context = { input = input, match = opts.match, groups = groups, unknown = unknown_dirs, duplicates = duplicates,
                unreadable = unreadable or {}, unprofiled = unprofiled, unmatched = unmatched },
  }
end

--- One unit of a plan: the rank's result, or nil and the reason.
function M.work(plan, i)
  return M.read_rank(plan.context.groups[i], plan.opts, plan.rules, plan.listings)
end

--- The cross-rank step: a plan's context and its units' outcomes ({ok = rank} or {error =
-- message}, by unit) -> the result parse returns.
function M.assemble(context, outcomes, rules)
  local result = setmetatable({ ranks = {}, failed = {}, input = context.input, match = context.match,
                                duplicates = context.duplicates, unprofiled = context.unprofiled or {},
                                rules = rules }, Result)
  for _, why in ipairs(context.unreadable) do -- ranks may hide there: the run fails, the others are kept
    result.failed[#result.failed + 1] = { role = "?", rank = nil, dirs = {}, reason = why }
  end
  for _, why in ipairs(context.unmatched or {}) do -- asked for and absent: not analysed, the run fails
    result.failed[#result.failed + 1] = { role = "?", rank = nil, dirs = {}, reason = why, unmatched = true }
  end
  for _, d in ipairs(context.unknown) do
    result.failed[#result.failed + 1] = {
      role = d.role, rank = nil, dirs = { d.dir },
      reason = t("memory.unknown_rank", d.dir) .. (d.rank_unread and "; " .. d.rank_unread or ""),
    }
  end
  for i, g in ipairs(context.groups) do
    local o = outcomes[i]
    if o.ok then
      result.ranks[#result.ranks + 1] = o.ok
    else
      local dirs = {}
      for k, d in ipairs(g.dirs) do dirs[k] = d.dir end
      result.failed[#result.failed + 1] = { role = g.role, rank = g.rank, dirs = dirs, reason = o.error }
    end
  end
  result.unreadable = M.unreadable(result)
  result.problems = M.check_output(result)
  return result
end

--- The inputs that could not be read, or were read in part: {path, message} each (a failed
-- rank's first folder, or the input; a partial rank's folder and the problem).
function M.unreadable(result)
  local out = {}
  for _, f in ipairs(result.failed) do
    out[#out + 1] = { path = f.dirs[1] or result.input, message = f.reason }
  end
  for _, r in ipairs(result.ranks) do
    for _, p in ipairs(r.problems) do out[#out + 1] = { path = r.dirs[1] or result.input, message = p } end
  end
  return out
end

--- Compute the units picks of a plan (see ascope.shard.select): outcomes by unit.
function M.compute(plan, picks)
  -- spare CPUs read a rank's CSV and trace at the same time
  plan.opts.split_reads = #picks * 2 <= workers.count(plan.opts.jobs)
  -- this process reads one rank itself; bad input stays that rank's error
  return shard.compute(M, plan, picks, plan.opts.jobs)
end

--- Read a profiling tree: read every rank, attribute every allocation, summarise. Prints
-- nothing (stages and progress go to ascope.log), writes nothing.
-- @tparam table opts `input` (a tree `<in>/<role>/<..>_ascend_pt/`, one `*_ascend_pt` folder or an
-- `ASCEND_PROFILER_OUTPUT` folder), `match` ("latest", "within", "within-or-latest"; default from
-- the rules), `rank_list` ("all", "0,2,4-7" or a set), `role` (a list of roles), `jobs` (worker
-- processes, forked; default 1: see ascope.workers), `rules` (a user rule file). The form
-- run(input, opts) works too. opts is not written to.
-- @tparam[opt] table legacy the options, in the form run(input, opts)
-- @treturn table the result: `ranks` (each with `rank`, `role`, `columns` and `summary`), `failed`
-- (`{role, rank, dirs, reason}` each), `unreadable` (`{path, message}` each: failed and partial
-- ranks), `problems` (the output checks), and the `rows()` and `order()` iterators
-- @treturn[2] nil when the input cannot be used at all
-- @treturn[2] string why
-- @treturn[2] string `"usage"` when an option rather than the data is wrong
function M.run(opts, legacy)
  local plan, err, kind = M.plan(opts, legacy)
  if not plan then return nil, err, kind end
  local picks = {}
  for i = 1, #plan.units do picks[i] = i end
  return M.assemble(plan.context, M.compute(plan, picks), plan.rules)
end

--- run(input, opts), under the name earlier scripts use.
M.parse = M.run

-- format -> output file, writer, weight (the relative cost of writing it: the events CSV and
-- the trace carry a row per event, the others a summary); order: the order they are listed in
local WRITERS = {
  csv = { file = "memory_events.csv", write = report.events_csv, weight = 4 },
  json = { file = "memory_summary.json", write = report.summary_json, weight = 0.1 },
  md = { file = "memory_report.md", write = report.report_md, weight = 0.1 },
  trace = { file = "memory_trace.json", write = report.trace_json, weight = 3 },
  html = { file = "memory_report.html", weight = 1,
           write = function(res, path, wopts) return memory_html.write(res, path, wopts.layout) end },
  order = { "csv", "trace", "json", "md", "html" },
}

--- Write the outputs of a result into outdir (made when missing). wopts: `formats` (a list or
-- "csv,json"; default all: csv, json, md, html, trace), `layout` (a layout file for the HTML
-- report), `jobs` (files written in parallel worker processes; default 1). Prints nothing.
-- @treturn boolean true, and the list of the paths written
-- @treturn[2] nil and the message of what could not be written
function M.write(result, outdir, wopts)
  return recipe.write(M.spec, WRITERS, result, outdir, wopts)
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

-- Fields every job's anomalies carry but the output checks do not: read through the metatable,
-- so a check stays its own {id, severity, message} where it is listed (memory_summary.json, --json).
local CHECK = { __index = { analysis = "memory check" } }

--- Findings: {severity, rank, analysis, message}: each rank that could not be read ("memory
-- read", ERROR), each problem of a rank read in part ("memory partial", ERROR), then the output
-- checks of rules/memory.lua ("memory check", their own severity and id; `result.problems` when
-- the caller has them, else computed).
function M.anomalies(result)
  local out = {}
  for _, f in ipairs(result.failed) do
    out[#out + 1] = { severity = "ERROR", rank = f.rank, role = f.role, analysis = "memory read",
                      message = f.unmatched and f.reason or t("input.rank_failed", tostring(f.rank or "?"), f.role, f.reason) }
  end
  for _, r in ipairs(result.ranks) do
    for _, p in ipairs(r.problems) do
      out[#out + 1] = { severity = "ERROR", rank = r.rank, role = r.role, analysis = "memory partial",
                        message = t("memory.partial", tostring(r.rank), r.role, p) }
    end
  end
  for _, p in ipairs(result.problems or M.check_output(result)) do
    local copy = {}
    for k, v in pairs(p) do copy[k] = v end
    out[#out + 1] = setmetatable(copy, CHECK)
  end
  return out
end

return M
