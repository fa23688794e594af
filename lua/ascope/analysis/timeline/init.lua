--- The timeline dimensions of one rank, over its typical step. All times in the result are ms
-- (floats); ratios are 0..1. This module finds the typical step and its time split (the
-- context every dimension reads); each dimension is one module of analysis/timeline/dimensions/,
-- registered in analysis/timeline/dimensions.lua, which computes it and says how it is reported.
-- Definitions (README "ascope timeline" has them too):
--   step       the ProfilerStep window (its device side: the tasks it launched, device_windows);
--              the typical step is --step K or the one with the median wall time. stage =
--              first to last compute or communication task in the window (the profiler's
--              Stage); preparing = the host-only time before it
--   source     the Overlap Analysis lanes when the trace has them (the profiler's own split of
--              the step into Computing, Communication and Free), else the device tasks
--   1 critical_path_ratio = busy union of compute, communication and copy tasks / stage;
--              longest_path: analysis/timeline/path.lua (dimensions/critical_path.lua)
--   2 overlap_ratio = 1 - Communication(Not Overlapped) / Communication (lanes), else
--              compute-intersect-communication / communication (tasks)
--   3 op_utilization = Computing / stage (lanes), else busy union of compute tasks / stage;
--              per lane: busy, idle ratio = 1 - busy / lane span, max gap and gap P95
--   4 host_launch_gap_ratio = compute gaps not covered by communication or P2P ops but covered by
--              host launch/sync activity / stage
--   5 pp_bubble_ratio = union of P2P receive waits / step time, against (p-1)/(p-1+m)
--   6 jitter: analysis/timeline/jitter.lua   7 hotspots: path.lua   8 phases: phases.lua
local model_mod = require "ascope.analysis.timeline.model"
local core = require "ascope_core"
local interval, match, column = core.interval, core.match, core.column
local t = require("ascope.i18n").t
local per_step = require "ascope.analysis.timeline.per_step"
local heap = require "ascope.heap"
local dimensions = require "ascope.analysis.timeline.dimensions"

local M = {}

local function ms(ns) return ns and ns / 1e6 end

-- the most steps split one by one (evenly spread beyond that)
M.MAX_STEPS = 20000

local P2P_KINDS = { device = true, comm = true }
local HOST_KINDS = { host = true, other = true }
local DEVICE_SIDE = { device = true, comm = true }
-- column.group without the group numbers or the rows of a missing value
local NO_IDS_OR_MISSING = { ids = false, missing = false }

-- The compute-stream tasks that have a launch flow from the host, each with the start of its
-- last one: launched = {at = launch starts, task = task rows}, integer columns in order of each
-- task's first launch flow.
local function launched(m)
  local tl, ends = m.tl, m.launch_ends
  local none = { at = column.new("integer"), task = column.new("integer") }
  if #ends == 0 then return none end
  local from = m.flow_starts:take(match.last(m.flow_start_ids, m.launch_end_ids))
  -- the flows from a host lane, picked in C by their start's lane (a flow from a device or
  -- communication stream is a dependency between tasks, not a launch; a flow without a start
  -- is none)
  local _, lane_of, places = column.group(tl.lane:take(from), nil, NO_IDS_OR_MISSING)
  local host = {}
  for g, key in ipairs(lane_of) do
    if places[g] and not DEVICE_SIDE[m.lanes[key[1]].kind] then host[#host + 1] = places[g] end
  end
  if #host == 0 then return none end
  local picked = model_mod.concat(host)
  if #picked < #from then from, ends = from:take(picked), ends:take(picked) end
  local held = match.within(tl.lane, tl.ts, tl.dur, tl.lane:take(ends), tl.ts:take(ends))
  -- each task's latest launch (a flow without a start time or a task is none), in C
  local task, at = column.group_max(held, tl.ts:take(from))
  return { at = at, task = task }
end

-- The time each compute-stream task waited launched: from the start of its last launch flow
-- to the task's start. A task may have two flows: the framework's enqueue (async_npu, from the
-- Python thread) and the launch itself (HostToDevice, from the launching thread); it is on the
-- device's queue only from the later. A compute gap inside that time is none of the host's: a
-- task was there, waiting for the device.
local function queued(m, l)
  -- clipped to everything: an interval that ends where it starts (or before) is none
  return interval.union(l.at, m.tl.ts:take(l.task), nil, math.mininteger, math.maxinteger)
end

-- the tasks that start a step on the device: the first this many launched in its window
local FIRST_LAUNCHED = 64

--- The device's side of each step window (w.d0, w.d1), as the profiler assigns a task to the
-- step that launched it, not to the step whose host time it runs in: a device running behind
-- the host runs the end of step k while the host is in step k + 1, and a host window would
-- give that end to k + 1 (each step would show its predecessor's communication). A window's
-- device side starts at the first task launched in it (the earliest of the first FIRST_LAUNCHED
-- launched, as streams run side by side) and runs to the next one's. The last one runs to the
-- end of the last task it launched, and at least as far behind its host window's end as the
-- device was behind at its start (the tasks of the step before still running in it): its
-- communication has no launch flow. A window that launched nothing starts as far behind its
-- host start as the one before it was: the device is still running that one's tasks (the
-- first window at its host start). Without launch flows the device side is the host window.
local function device_windows(m, wins, l, sets)
  for _, w in ipairs(wins) do w.d0, w.d1 = w.w0, w.w1 end
  local n, tl = #l.at, m.tl
  if n == 0 or not wins[1].id then return end
  local at, order = l.at, l.at:order()
  -- how far behind its host start w's device side starts: to the end of the tasks of the steps
  -- before that run in [w0, d0)
  local function behind(w, d0) return math.max((per_step.busy_to(sets, w.w0, d0) or w.w0) - w.w0, 0) end
  local prev, first = nil, 1
  for k, w in ipairs(wins) do
    -- in launch order, the first launch at or after the window's start (the windows follow
    -- each other: one walk over the launches for all of them)
    while first <= n and at[order[first]] < w.w0 do first = first + 1 end
    local d0
    for j = first, math.min(first + FIRST_LAUNCHED - 1, n) do
      local i = order[j]
      if at[i] >= w.w1 then break end
      local ts = tl.ts[l.task[i]]
      if not d0 or ts < d0 then d0 = ts end
    end
    -- device sides follow each other: a window that starts before the last one's start
    -- (launched nothing, or its first task overtook) starts there
    d0 = d0 or (prev and w.w0 + behind(prev, prev.d0)) or w.w0
    if prev and d0 < prev.d0 then d0 = prev.d0 end
    w.d0 = d0
    if prev then prev.d1 = d0 end
    if k == #wins then
      local d1 = w.w1 + behind(w, d0)
      for j = first, n do
        local i = order[j]
        if at[i] >= w.w1 then break end
        local e = tl.ts[l.task[i]] + (tl.dur[l.task[i]] or 0)
        if e > d1 then d1 = e end
      end
      w.d1 = d1
    end
    prev = w
  end
end

-- Busy sets of the whole trace that every step's split is cut from.
local function trace_sets(m, l)
  local comm_rows = model_mod.concat({ model_mod.rows_of(m, "comm"), model_mod.rows_of(m, "device", "comm") })
  return {
    compute = m.busy(m, model_mod.rows_of(m, "device", "compute")),
    comm = m.busy(m, comm_rows),
    copy = m.busy(m, model_mod.rows_of(m, "device", "copy")),
    p2p = m.busy(m, m.tagged_rows(m, { "p2p", "p2p_wait" }, P2P_KINDS)),
    p2p_wait = m.busy(m, m.tagged_rows(m, "p2p_wait", P2P_KINDS)),
    launch = m.busy(m, m.tagged_rows(m, "host_launch", HOST_KINDS)),
    dataloader = m.busy(m, m.tagged_rows(m, "dataloader", HOST_KINDS)),
    queued = queued(m, l),
  }
end

-- Overlap Analysis lanes in [w0, w1): thread -> busy set
local function overlap_lanes(m, w0, w1)
  local sets = {}
  for i, lane in ipairs(m.lanes) do
    local rows = lane.kind == "overlap" and m.slices(m, i)
    if rows then
      local s = m.busy(m, rows, w0, w1)
      sets[lane.thread] = sets[lane.thread] and sets[lane.thread]:union(s) or s
    end
  end
  return sets
end

-- The profiler's own composition of the step from its Overlap Analysis lanes, or nil; its stage
-- leaves the receive waits of a pipeline out, as the profiler's Stage does.
local function lanes_composition(m, sets, w0, w1)
  local ov = overlap_lanes(m, w0, w1)
  local all
  for _, s in pairs(ov) do all = all and all:union(s) or s end
  if not all then return nil end
  local lo, hi = all:bounds()
  if not lo then return nil end
  local function total(k) return ov[k] and ov[k]:total() or nil end
  local bubble = sets.p2p_wait:clip(lo, hi):total()
  return { source = "Overlap Analysis", lo = lo, hi = hi, span = hi - lo, stage = hi - lo - bubble, bubble = bubble,
           computing = total("Computing"),
           communication = total("Communication"), not_overlapped = total("Communication(Not Overlapped)"),
           free = total("Free") }
end

-- The profiler's own composition of the step from its row of the step split
-- (step_trace_time.csv, or analysis.db's StepTraceTime beside a database export), for a trace
-- without the Overlap Analysis lanes or a rank with no trace: its Computing and Communication
-- are the unions of the compute and communication operators it lists, which the tasks do not
-- give exactly (a communication stream also runs event waits and records: on the real database
-- exports the tasks' communication was 0.3% more). Only a row of this rank's alone: a cluster
-- file's step is its slowest rank's, and a file given for a tree of ranks (own = false) is no
-- rank's own. s: the tasks' split of the step, when there is a trace.
local function split_composition(step_trace, row, s)
  local function us(x) return x and x * 1000 end
  if not (row and row.ranks == 1 and step_trace.own ~= false and row.computing_us and row.comm_us
          and row.comm_not_overlapped_us) then
    return nil
  end
  return { source = step_trace.source, stage = us(row.stage_us) or (s and s.stage), span = s and s.span,
           bubble = us(row.bubble_us) or 0, computing = us(row.computing_us), communication = us(row.comm_us),
           not_overlapped = us(row.comm_not_overlapped_us), free = us(row.free_us) }
end

-- The row of the step a rank with only its step split is looked at in: the step asked for, else
-- the one of the median time (as a trace's typical step; of equal times the first). nil: none.
local function split_step(step_trace, want)
  local rows = {}
  for _, s in ipairs(step_trace and step_trace.steps or {}) do
    if want and tonumber(s.step) == want then return s end
    if s.time_us then rows[#rows + 1] = s end
  end
  if want or #rows == 0 then return nil end
  return rows[per_step.median_index(rows, "time_us")]
end

-- A rank with only its step split: the profiler's composition of one step (ctx.comp_lanes) and
-- the step itself (r.step), for the dimensions that read them. nil, message when the step asked
-- for is not in the split (as for a trace without it).
local function split_only(ctx)
  local r, step_trace = ctx.r, ctx.step_trace
  r.steps_found = step_trace and #step_trace.steps or 0
  local row = split_step(step_trace, ctx.opts.step)
  if ctx.opts.step and not row then
    local lo, hi -- the split's rows need not be in step order
    for _, s in ipairs(step_trace and step_trace.steps or {}) do
      local id = tonumber(s.step)
      if id then lo, hi = math.min(lo or id, id), math.max(hi or id, id) end
    end
    return nil, t("timeline.no_step_in_split", ctx.opts.step, lo and tostring(lo) or "-", hi and tostring(hi) or "-")
  end
  ctx.comp_lanes = step_trace and split_composition(step_trace, row)
  if not ctx.comp_lanes then return true end
  ctx.step_row = row
  local function from_us(us) return us and us / 1000 end
  r.step = { id = tonumber(row.step) or (row.step ~= "" and row.step or nil), stage_ms = from_us(row.stage_us),
             preparing_ms = from_us(row.preparing_us),
             wall_ms = row.stage_us and row.preparing_us and from_us(row.time_us) or nil }
  return true
end

-- The typical step: its split (ctx.s), the stage it spans (ctx.step_lo, from the split or the
-- Overlap Analysis lanes; ctx.lo/ctx.hi only when the tasks split it), wall and preparing time.
local function typical_step(ctx)
  local r, w, comp_lanes = ctx.r, ctx.w, ctx.comp_lanes
  local s = per_step.split(ctx.sets, w)
  local lo, hi, stage, span
  if s then
    lo, hi, stage, span = s.lo, s.hi, s.stage, s.span
  elseif comp_lanes then
    lo, hi, stage, span = comp_lanes.lo, comp_lanes.hi, comp_lanes.stage, comp_lanes.span
  end
  ctx.s = s
  if not lo then return end
  local wall = (s and s.wall) or w.wall or span
  local preparing = s and s.preparing or per_step.preparing(ctx.sets, w, lo)
  r.step = { id = w.id, wall_ms = ms(wall), stage_ms = ms(stage), span_ms = ms(span), preparing_ms = ms(preparing),
             window_start_ms = w.id and ms(w.w0) or nil, start_ms = ms(lo) }
  ctx.step_lo, ctx.wall, ctx.preparing = lo, wall, preparing
  if s then
    ctx.lo, ctx.hi = lo, hi
    -- the picture starts where the step's host-only time does (its window's start, or the end of
    -- the step before on a device running behind): that time is shown as such, the step
    -- before's tasks are not
    ctx.picture_from = lo - preparing
    r.step.picture_ms = ms(hi - ctx.picture_from)
  end
end

-- Each dimension that cannot be computed says why: the reason of the whole rank (no trace, no
-- tasks in the step) unless it gave its own.
local function explain(r, why, only_missing)
  for _, d in ipairs(dimensions.list) do
    if d.explain and not (only_missing and r[d.id]) then r.not_computed[d.id] = why end
  end
end


--- All dimensions for one rank. tl: reader columns (nil for a rank with only the profiler's
-- step split); re: compiled patterns; step_trace: ascend/step_trace.lua result or nil.
-- opts: step, compare_step, pp, microbatches, top_n.
--
-- Each dimension's compute(ctx) reads: ctx.r (the rank's result so far), rules, opts, top_n,
-- step_trace, no_trace (the reason, when the rank has no trace: then only the dimensions
-- marked without_trace are computed); with a trace: model (analysis/timeline/model.lua), steps,
-- wins and k (the step windows and the typical one's index), w (its window), sets (busy sets of
-- the whole trace), splits (every step's split, or nil), step_row (the profiler's row of the
-- step), comp_lanes (the profiler's composition of the step: its Overlap Analysis lanes, else
-- its step split's row once typical_step has run; or nil), s (the typical step's split, or
-- nil), step_lo, lo, hi, wall, preparing, picture_from (see typical_step), jitter_windows.
function M.analyse(tl, rules, re, step_trace, opts)
  opts = opts or {}
  local r = { not_computed = {}, lanes = {}, warnings = {} }
  local ctx = { r = r, rules = rules, opts = opts, top_n = opts.top_n or rules.top_n or 10, step_trace = step_trace }
  if not tl then
    ctx.no_trace = t("timeline.why.no_trace")
    local ok, err = split_only(ctx)
    if not ok then return nil, err end
    for _, d in ipairs(dimensions.list) do
      if d.without_trace then d.compute(ctx) end
    end
    explain(r, ctx.no_trace, true)
    r.dashboard = M.dashboard(r)
    return r
  end
  local m = model_mod.build(tl, rules, re)
  m.busy, m.tagged_rows = model_mod.busy, model_mod.tagged_rows
  local steps = model_mod.steps(m)
  r.steps_found = #steps
  local wins, k = per_step.windows(steps, opts.step)
  if not wins then return nil, k end
  local w = wins[k]
  ctx.model, ctx.steps, ctx.wins, ctx.k, ctx.w = m, steps, wins, k, w
  local l = launched(m)
  ctx.sets = trace_sets(m, l)
  device_windows(m, wins, l, ctx.sets)
  -- the launches' columns are garbage from here: collected before the dimensions make their own
  l = nil -- luacheck: ignore 311
  heap.release(#m.launch_ends)
  ctx.splits = #steps > 0 and per_step.all(ctx.sets, wins, M.MAX_STEPS) or nil
  ctx.jitter_windows = #steps > 0 and wins or nil
  if step_trace and w.id then
    for _, srow in ipairs(step_trace.steps) do
      if tonumber(srow.step) == w.id then ctx.step_row = srow end
    end
  end
  ctx.comp_lanes = lanes_composition(m, ctx.sets, w.d0, w.d1)
  typical_step(ctx)
  if not ctx.comp_lanes and ctx.step_lo then
    ctx.comp_lanes = step_trace and split_composition(step_trace, ctx.step_row, ctx.s)
  end
  r.step = r.step or { id = w.id }
  for _, d in ipairs(dimensions.list) do d.compute(ctx) end
  if not ctx.lo then explain(r, t("timeline.why.no_tasks"), true) end
  r.dashboard = M.dashboard(r)
  return r
end

--- The dashboard keys; a key that was not measured is left out.
function M.dashboard(r) return dimensions.dashboard(r) end

-- the dashboard keys in order, and the rule metric behind a key where the rule tests a
-- stricter form of it (a ⚠ on the key means that rule fired): kept up to date by the registry
M.DASHBOARD_RULE_METRIC = dimensions.DASHBOARD_RULE_METRIC
M.DASHBOARD_KEYS = dimensions.DASHBOARD_KEYS

return M
