--- The eight timeline dimensions of one rank, over its typical step. All times in the result
-- are ms (floats); ratios are 0..1. Definitions (README "ascope timeline" has them too):
--   step       the ProfilerStep window; the typical step is --step K or the one with the median
--              wall time. stage = first to last compute or communication task in the window
--              (the profiler's Stage); preparing = the host-only time before it
--   source     the Overlap Analysis lanes when the trace has them (the profiler's own split of
--              the step into Computing, Communication and Free), else the device tasks
--   1 critical_path_ratio = busy union of compute, communication and copy tasks / stage;
--              longest_path: analysis/timeline/path.lua
--   2 overlap_ratio = 1 - Communication(Not Overlapped) / Communication (lanes), else
--              compute-intersect-communication / communication (tasks)
--   3 op_utilization = Computing / stage (lanes), else busy union of compute tasks / stage;
--              per lane: busy, idle ratio = 1 - busy / lane span, max gap and gap P95
--   4 host_launch_gap_ratio = compute gaps not covered by communication or P2P ops but covered by
--              host launch/sync activity / stage
--   5 pp_bubble_ratio = union of P2P receive waits / step time, against (p-1)/(p-1+m)
--   6 jitter: analysis/timeline/jitter.lua   7 hotspots: path.lua   8 phases: phases.lua
local model_mod = require "ascope.analysis.timeline.model"
local per_step = require "ascope.analysis.timeline.per_step"
local path = require "ascope.analysis.timeline.path"
local jitter = require "ascope.analysis.timeline.jitter"
local phases = require "ascope.analysis.timeline.phases"
local compare = require "ascope.analysis.timeline.compare"
local stats = require "ascope.analysis.stats"

local M = {}

local function ms(ns) return ns and ns / 1e6 end
local function ratio(a, b) return (a and b and b > 0) and a / b or nil end

-- the most steps split one by one (evenly spread beyond that)
M.MAX_STEPS = 20000

local P2P_KINDS = { device = true, comm = true }
local HOST_KINDS = { host = true, other = true }

-- Busy sets of the whole trace that every step's split is cut from.
local function trace_sets(m)
  local comm_rows = model_mod.concat({ model_mod.rows_of(m, "comm"), model_mod.rows_of(m, "device", "comm") })
  return {
    compute = m.busy(m, model_mod.rows_of(m, "device", "compute")),
    comm = m.busy(m, comm_rows),
    copy = m.busy(m, model_mod.rows_of(m, "device", "copy")),
    p2p = m.busy(m, m.tagged_rows(m, { "p2p", "p2p_wait" }, P2P_KINDS)),
    p2p_wait = m.busy(m, m.tagged_rows(m, "p2p_wait", P2P_KINDS)),
    launch = m.busy(m, m.tagged_rows(m, "host_launch", HOST_KINDS)),
    dataloader = m.busy(m, m.tagged_rows(m, "dataloader", HOST_KINDS)),
  }
end

-- Overlap Analysis lanes in [w0, w1): thread -> busy set
local function overlap_lanes(m, w0, w1)
  local sets = {}
  for i, lane in ipairs(m.lanes) do
    if lane.kind == "overlap" and m.slices[i] then
      local s = m.busy(m, m.slices[i], w0, w1)
      sets[lane.thread] = sets[lane.thread] and sets[lane.thread]:union(s) or s
    end
  end
  return sets
end

-- The profiler's own composition of the step from its Overlap Analysis lanes, or nil.
local function lanes_composition(m, w0, w1)
  local ov = overlap_lanes(m, w0, w1)
  local all
  for _, s in pairs(ov) do all = all and all:union(s) or s end
  if not all then return nil end
  local lo, hi = all:bounds()
  if not lo then return nil end
  local function total(k) return ov[k] and ov[k]:total() or nil end
  return { source = "Overlap Analysis", lo = lo, hi = hi, stage = hi - lo, computing = total("Computing"),
           communication = total("Communication"), not_overlapped = total("Communication(Not Overlapped)"),
           free = total("Free") }
end

local function lanes_dimension(m, lo, hi, p2p_wait)
  local out = {}
  local compute_total = 0
  for i, lane in ipairs(m.lanes) do
    if lane.kind ~= "overlap" and m.slices[i] then
      local busy = m.busy(m, m.slices[i], lo, hi)
      local a, b = busy:bounds()
      if a and b > a then
        local total = busy:total()
        local gaps = busy:gaps(a, b)
        local st = gaps:stats()
        local row = { name = lane.name, kind = lane.kind, busy_ms = ms(total), span_ms = ms(b - a),
                      idle_ratio = 1 - total / (b - a), max_gap_ms = ms(st.max), gap_p95_ms = st.p95 / 1e6,
                      gaps = st.count }
        if lane.kind == "device" then
          local c = m.rows[i] and m.rows[i].compute
          row.compute_ms = c and ms(m.busy(m, c, lo, hi):total()) or 0
          compute_total = compute_total + row.compute_ms
          -- idle that a pipeline wait explains is the bubble's business, not the lane's
          row.unexplained_idle_ratio = (gaps:total() - gaps:intersect(p2p_wait):total()) / (b - a)
        end
        out[#out + 1] = row
      end
    end
  end
  table.sort(out, function(a, b)
    if a.idle_ratio ~= b.idle_ratio then return a.idle_ratio > b.idle_ratio end
    return a.name < b.name
  end)
  -- max_lane_idle looks at the lanes that carry the compute (at least a tenth of it): a stream
  -- with a handful of copies is idle by design
  local max_idle, max_unexplained, idle_lane
  for _, row in ipairs(out) do
    if row.kind == "device" and compute_total > 0 and row.compute_ms >= 0.1 * compute_total then
      if not max_idle or row.idle_ratio > max_idle then max_idle, idle_lane = row.idle_ratio, row.name end
      if not max_unexplained or row.unexplained_idle_ratio > max_unexplained then
        max_unexplained = row.unexplained_idle_ratio
      end
    end
  end
  return out, max_idle, max_unexplained, idle_lane
end

local function swimlanes(m, lanes, lo, hi)
  local out = {}
  local by_name = {}
  for i, lane in ipairs(m.lanes) do by_name[lane.name] = i end
  for _, l in ipairs(lanes) do
    local i = by_name[l.name]
    local starts, ends = m.busy(m, m.slices[i], lo, hi):columns()
    local s_ms, e_ms = {}, {}
    for j = 1, math.min(#starts, 20000) do
      s_ms[j], e_ms[j] = (starts[j] - lo) / 1e6, (ends[j] - lo) / 1e6
    end
    out[#out + 1] = { name = l.name, kind = l.kind, starts = s_ms, ends = e_ms }
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

-- The typical step's time split and the op_util, overlap, host and bubble dimensions.
local function step_dimensions(r, sets, w, comp_lanes, opts, step_row)
  local s = per_step.split(sets, w)
  local lo, hi, stage
  if s then
    lo, hi, stage = s.lo, s.hi, s.stage
  elseif comp_lanes then
    lo, hi, stage = comp_lanes.lo, comp_lanes.hi, comp_lanes.stage
  end
  if not lo then return nil end
  local wall = (s and s.wall) or w.wall or stage
  local preparing = w.id and math.max(lo - w.w0, 0) or 0
  r.step = { id = w.id, wall_ms = ms(wall), stage_ms = ms(stage), span_ms = ms(stage), preparing_ms = ms(preparing),
             window_start_ms = w.id and ms(w.w0) or nil, start_ms = ms(lo) }
  -- 3 and 2 from the profiler's own lanes when they are there, else from the tasks
  if comp_lanes and comp_lanes.computing then
    r.op_util = { source = comp_lanes.source, op_utilization = ratio(comp_lanes.computing, comp_lanes.stage),
                  compute_busy_ms = ms(comp_lanes.computing), span_ms = ms(comp_lanes.stage) }
  elseif s then
    r.op_util = { source = "tasks", op_utilization = ratio(s.compute, s.stage), compute_busy_ms = ms(s.compute),
                  span_ms = ms(s.stage) }
  end
  if comp_lanes and comp_lanes.communication and comp_lanes.communication > 0 then
    local exposed = (comp_lanes.not_overlapped or 0) / comp_lanes.communication
    r.overlap = { source = comp_lanes.source, overlap_ratio = 1 - exposed, exposed_ratio = exposed,
                  communication_ms = ms(comp_lanes.communication), not_overlapped_ms = ms(comp_lanes.not_overlapped or 0),
                  computing_ms = ms(comp_lanes.computing), free_ms = ms(comp_lanes.free) }
  elseif s and s.comm > 0 then
    r.overlap = { source = "tasks", overlap_ratio = 1 - s.exposed / s.comm, exposed_ratio = s.exposed / s.comm,
                  communication_ms = ms(s.comm), not_overlapped_ms = ms(s.exposed), computing_ms = ms(s.compute),
                  free_ms = ms(s.free) }
  end
  if not s then return nil end
  -- 4 host/device
  r.host = { host_launch_gap_ratio = ratio(s.launch_gap, s.stage), launch_gap_ms = ms(s.launch_gap),
             preparing_ms = ms(preparing), dataloader_serial_ms = ms(s.dataloader_serial),
             dataloader_serial_ratio = ratio(s.dataloader_serial, wall) }
  -- 5 pipeline bubble
  local has_wait = sets.p2p_wait:clip(w.w0, w.w1):total() > 0
  if has_wait then
    r.pp_bubble = { pp_bubble_ratio = ratio(s.bubble, wall), bubble_ms = ms(s.bubble), step_ms = ms(wall) }
    if step_row and step_row.bubble_us then r.pp_bubble.profiler_bubble_ms = step_row.bubble_us / 1000 end
    if opts.pp and opts.microbatches then
      local theory = (opts.pp - 1) / (opts.pp - 1 + opts.microbatches)
      r.pp_bubble.theory = theory
      r.pp_bubble.excess = r.pp_bubble.pp_bubble_ratio - theory
    end
  end
  return lo, hi
end

--- All dimensions for one rank. tl: reader columns (nil for a rank with only the profiler's
-- step split); re: compiled patterns; step_trace: ascend/step_trace.lua result or nil.
-- opts: step, compare_step, pp, microbatches, top_n.
function M.analyse(tl, rules, re, step_trace, opts)
  opts = opts or {}
  local top_n = opts.top_n or rules.top_n or 10
  local r = { not_computed = {}, lanes = {}, warnings = {} }
  if not tl then
    r.steps_found = 0
    r.jitter, r.comm_jitter, r.not_computed = jitter.measure(step_trace, nil, nil, rules)
    local why = require("ascope.i18n").t("timeline.why.no_trace")
    for _, d in ipairs({ "critical_path", "op_util", "overlap", "host", "pp_bubble", "hotspots" }) do
      r.not_computed[d] = why
    end
    r.phases = { applicable = false, reason = why }
    r.dashboard = M.dashboard(r)
    return r
  end
  local m = model_mod.build(tl, rules, re)
  m.busy, m.tagged_rows = model_mod.busy, model_mod.tagged_rows
  local steps = model_mod.steps(tl, rules)
  r.steps_found = #steps
  local wins, k = per_step.windows(steps, opts.step)
  if not wins then return nil, k end
  local w = wins[k]
  local sets = trace_sets(m)
  local splits = #steps > 0 and per_step.all(sets, wins, M.MAX_STEPS) or nil
  local step_row
  if step_trace and w.id then
    for _, srow in ipairs(step_trace.steps) do
      if tonumber(srow.step) == w.id then step_row = srow end
    end
  end
  local comp_lanes = lanes_composition(m, w.w0, w.w1)
  local lo, hi = step_dimensions(r, sets, w, comp_lanes, opts, step_row)
  r.step = r.step or { id = w.id }
  if m.device_lanes == 0 and r.op_util and r.op_util.source == "tasks" then
    -- no lane is a device lane: compute cannot be measured, which is not the same as none
    r.op_util = nil
    r.not_computed.op_util = require("ascope.i18n").t("timeline.why.no_device_lane")
  end
  if not lo then
    local why = require("ascope.i18n").t("timeline.why.no_tasks")
    for _, d in ipairs({ "critical_path", "op_util", "overlap", "host", "pp_bubble", "hotspots" }) do
      if not r[d] then r.not_computed[d] = why end
    end
  else
    r.lanes, r.max_lane_idle, r.max_lane_idle_unexplained, r.idle_lane =
      lanes_dimension(m, lo, hi, sets.p2p_wait:clip(lo, hi))
    local dev = sets.compute:union(sets.comm):union(sets.copy):clip(lo, hi)
    local stage = hi - lo
    -- 1 critical path
    local edges, skipped = path.flow_edges(m, w.w0, w.w1)
    if skipped > 0 then
      r.warnings[#r.warnings + 1] = require("ascope.i18n").t("timeline.flows_skipped", skipped)
    end
    r.critical_path = { critical_path_ratio = ratio(dev:total(), stage), busy_union_ms = ms(dev:total()),
                        span_ms = ms(stage), flow_edges = #edges }
    local len, p, nnodes, gain, comm_time = path.longest(m, w.w0, w.w1, lo, hi, edges)
    if len then
      local cp = r.critical_path
      cp.longest_path_ms, cp.longest_path_tasks, cp.dag_nodes = ms(len), #p, nnodes
      cp.composition = path.composition(m, p, gain)
      cp.free_ms = ms(stage - len)
      local comm_ms = (cp.composition.comm or 0) + (cp.composition.p2p or 0)
      cp.comm_share = ratio(comm_ms, cp.longest_path_ms)
      -- 7 hotspots
      r.hotspots, r.raw_top, r.raw_top_off_path = path.hotspots(m, p, gain, comm_time, w.w0, w.w1, top_n)
    end
    if #edges > 0 then r.alignment = path.alignment(m, edges, top_n) end
    if not r.overlap then r.not_computed.overlap = require("ascope.i18n").t("timeline.why.no_comm_in_step") end
    if not r.pp_bubble then r.not_computed.pp_bubble = require("ascope.i18n").t("timeline.why.no_p2p") end
    if r.host and #m.tagged_rows(m, "host_launch", HOST_KINDS) == 0 then
      r.host.host_launch_gap_ratio = nil
      r.not_computed.host = require("ascope.i18n").t("timeline.why.no_host")
    end
    -- the picture starts at the step's start: the host-only time before the stage is shown as such
    local from = w.id and math.min(w.w0, lo) or lo
    r.swimlanes = swimlanes(m, r.lanes, from, hi)
    r.step.picture_ms = ms(hi - from)
  end
  -- host-bound gaps must recur: the median over the steps of each step's launch-gap ratio
  -- (above a threshold in at least half the steps); fewer than 3 steps cannot show recurrence
  if splits and r.host and r.host.host_launch_gap_ratio then
    local ratios = {}
    for _, s in ipairs(splits) do
      if not s.empty then ratios[#ratios + 1] = s.launch_gap / s.stage end
    end
    r.host.steps = #ratios
    table.sort(ratios)
    if #ratios >= jitter.MIN_STEPS then r.host.launch_gap_median = stats.percentile(ratios, 50) end
  end
  -- 6 jitter
  local why
  r.jitter, r.comm_jitter, why = jitter.measure(step_trace, #steps > 0 and wins or nil, splits, rules)
  for d, text in pairs(why) do r.not_computed[d] = text end
  -- the long step against the typical one
  if splits and (r.jitter or opts.compare_step) then
    r.compare = compare.steps(m, sets, wins, k, r.jitter and r.jitter.long_tail or {}, opts.compare_step, top_n)
  end
  -- 8 prefill/decode
  r.phases = phases.measure(m, w.w0, w.w1)
  r.dashboard = M.dashboard(r)
  return r
end

--- The dashboard keys; a key that was not measured is left out.
function M.dashboard(r)
  local d = {}
  d.critical_path_ratio = r.critical_path and r.critical_path.critical_path_ratio
  d.op_utilization = r.op_util and r.op_util.op_utilization
  d.overlap_ratio = r.overlap and r.overlap.overlap_ratio
  d.host_launch_gap_ratio = r.host and r.host.host_launch_gap_ratio
  d.pp_bubble_ratio = r.pp_bubble and r.pp_bubble.pp_bubble_ratio
  d.step_cv = r.jitter and r.jitter.cv
  d.max_lane_idle = r.max_lane_idle
  d.comm_jitter = r.comm_jitter and r.comm_jitter.cv
  return d
end

-- the rule metric behind a dashboard key where the rule tests a stricter form of it (a ⚠ on
-- the key means that rule fired)
M.DASHBOARD_RULE_METRIC = { host_launch_gap_ratio = "host_launch_gap_median", max_lane_idle = "max_lane_idle_unexplained",
                            pp_bubble_ratio = "bubble_excess" }

M.DASHBOARD_KEYS = { "critical_path_ratio", "op_utilization", "overlap_ratio", "host_launch_gap_ratio",
                     "pp_bubble_ratio", "step_cv", "max_lane_idle", "comm_jitter" }

return M
