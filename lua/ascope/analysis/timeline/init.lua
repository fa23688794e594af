--- The eight timeline dimensions of one rank, over its typical step. All times in the result
-- are ms (floats); ratios are 0..1. Definitions (README "ascope timeline" has them too):
--   step window   ProfilerStep#N start to the next step's start (the last runs to the end);
--                 the typical step is --step K or the one with the median duration
--   span          first to last device activity (device and communication lanes) in the window
--   1 critical_path_ratio = busy union of device activity / span; longest_path = the longest
--                 chain of tasks over lane order (same stream = serial) and host->device flows
--                 (async_npu / HostToDevice); each task adds the time from the later of its
--                 start and its predecessor's end to its end; composition by task category
--   2 overlap_ratio = 1 - Communication(Not Overlapped) / Communication from the Overlap
--                 Analysis lanes, else compute-union-intersect-communication / communication;
--                 alignment gaps = consumer start - producer end along flow edges
--   3 op_utilization = busy union of compute-class device tasks / span; per lane: busy, idle
--                 ratio = 1 - busy / lane span, max gap and gap P95
--   4 host_launch_gap_ratio = device compute gaps covered by host launch/sync activity / span
--   5 pp_bubble_ratio = device compute gaps covered by P2P (send/recv) ops / span
--   6 step jitter: CV (population std / mean) of step times; long tail: > P95 or > 1.5 x median;
--                 comm_jitter = CV of per-step Communication(Not Overlapped) (else Communication)
--   7 hotspots: operators by time on the longest path, beside their raw-time rank
--   8 prefill/decode: phases from name patterns; TTFT = the first prefill's length, TPOT = mean
--                 decode task length
local core = require "ascope_core"
local model_mod = require "ascope.analysis.timeline.model"
local stats = require "ascope.analysis.stats"
local match = core.match

local M = {}

local function ms(ns) return ns and ns / 1e6 end
local function ratio(a, b) return (a and b and b > 0) and a / b or nil end

--- Step windows and the chosen one.
function M.windows(steps, want_step)
  local wins = {}
  for k, s in ipairs(steps) do
    local nxt = steps[k + 1]
    wins[k] = { id = s.id, w0 = s.start, w1 = nxt and nxt.start or math.maxinteger, dur = s.dur }
  end
  if #wins == 0 then return { { id = nil, w0 = math.mininteger, w1 = math.maxinteger } }, 1 end
  if want_step then
    for k, w in ipairs(wins) do
      if w.id == want_step then return wins, k end
    end
    return nil, ("step %d is not in the trace (steps: %d to %d)"):format(want_step, wins[1].id, wins[#wins].id)
  end
  local order = {}
  for k = 1, #wins do order[k] = k end
  table.sort(order, function(a, b) return wins[a].dur < wins[b].dur end)
  return wins, order[(#order + 1) // 2]
end

local function lanes_dimension(m, w0, w1)
  local out = {}
  m.lane_busy = {}
  local max_device_idle
  for i, lane in ipairs(m.lanes) do
    if lane.kind ~= "overlap" and m.slices[i] then
      local busy = m.busy(m, m.slices[i], w0, w1)
      local lo, hi = busy:bounds()
      if lo and hi > lo then
        local total = busy:total()
        local gaps = busy:gaps(lo, hi):stats()
        local idle = 1 - total / (hi - lo)
        m.lane_busy[i] = busy
        out[#out + 1] = { name = lane.name, kind = lane.kind, busy_ms = ms(total), span_ms = ms(hi - lo),
                          idle_ratio = idle, max_gap_ms = ms(gaps.max), gap_p95_ms = gaps.p95 / 1e6,
                          gaps = gaps.count }
        if lane.kind == "device" and (not max_device_idle or idle > max_device_idle) then max_device_idle = idle end
      end
    end
  end
  table.sort(out, function(a, b)
    if a.idle_ratio ~= b.idle_ratio then return a.idle_ratio > b.idle_ratio end
    return a.name < b.name
  end)
  return out, max_device_idle
end

local function overlap_lanes(m, w0, w1)
  local totals = {}
  for i, lane in ipairs(m.lanes) do
    if lane.kind == "overlap" and m.slices[i] then
      totals[lane.thread] = (totals[lane.thread] or 0) + m.busy(m, m.slices[i], w0, w1):total()
    end
  end
  return totals
end

-- the slice containing t on lane (flows bind to the slice they sit in); also the number of
-- flows left out because an end had no usable time
local function flow_bindings(m, w0, w1)
  local tl = m.tl
  local ix = match.index(tl.lane, tl.ts, tl.dur)
  local s_rows, f_rows = m.flow_starts, m.flow_ends
  local s_by_id = {}
  for k = 1, #s_rows do
    local r = s_rows[k]
    local id = tl.flow[r]
    if id then s_by_id[id] = r end
  end
  local cons_lane, cons_ts, prod_lane, prod_ts = {}, {}, {}, {}
  local n, skipped = 0, 0
  for k = 1, #f_rows do
    local r = f_rows[k]
    local t = tl.ts[r]
    local s = tl.flow[r] and s_by_id[tl.flow[r]]
    if s and (not t or not tl.ts[s]) then
      skipped = skipped + 1 -- a time that could not be read: this flow only is left out
    elseif s and t >= w0 and t < w1 then
      n = n + 1
      cons_lane[n], cons_ts[n] = tl.lane[r], t
      prod_lane[n], prod_ts[n] = tl.lane[s], tl.ts[s]
    end
  end
  if n == 0 then return {}, skipped end
  local cons = ix:within(cons_lane, cons_ts)
  local prod = ix:within(prod_lane, prod_ts)
  local edges = {}
  for k = 1, n do
    if cons[k] and prod[k] and cons[k] ~= prod[k] then edges[#edges + 1] = { prod[k], cons[k] } end
  end
  return edges, skipped
end

local function alignment(m, edges, top_n)
  local tl = m.tl
  local gaps, total = {}, 0
  for _, e in ipairs(edges) do
    local p, c = e[1], e[2]
    local gap = tl.ts[c] - (tl.ts[p] + tl.dur[p])
    if gap > 0 then
      total = total + gap
      gaps[#gaps + 1] = { gap = gap, producer = tl.name[p], consumer = tl.name[c],
                          producer_lane = m.lanes[tl.lane[p]].name, consumer_lane = m.lanes[tl.lane[c]].name }
    end
  end
  table.sort(gaps, function(a, b) return a.gap > b.gap end)
  local top = {}
  for k = 1, math.min(#gaps, top_n) do
    local g = gaps[k]
    top[k] = { gap_ms = ms(g.gap), producer = g.producer, consumer = g.consumer,
               producer_lane = g.producer_lane, consumer_lane = g.consumer_lane }
  end
  return { total_ms = ms(total), count = #gaps, edges = #edges, top = top }
end

local function category(m, r)
  local lane = m.lanes[m.tl.lane[r]]
  if lane.kind == "host" or lane.kind == "other" then return "host" end
  local name = m.tl.name[r]
  if model_mod.matches(name, m.rules.patterns.p2p) then return "p2p" end
  local cls = m.class[r] or "other"
  if lane.kind == "comm" then return "comm" end
  if cls == "compute" then return "compute:" .. (m.tl.task_type[r] or "unknown") end
  return cls
end

-- Longest weighted path over the step's tasks: nodes are device/communication slices in the
-- window plus the host slices that launch them; edges are lane order and flows.
local function longest_path(m, w0, w1, edges)
  local tl = m.tl
  local nodes = {}
  local seen = {}
  for i, lane in ipairs(m.lanes) do
    if (lane.kind == "device" or lane.kind == "comm") and m.slices[i] then
      local rows = m.slices[i]
      for k = 1, #rows do
        local r = rows[k]
        local t = tl.ts[r]
        if t and t >= w0 and t < w1 and tl.dur[r] then
          nodes[#nodes + 1] = r
          seen[r] = true
        end
      end
    end
  end
  local preds = {}
  for _, e in ipairs(edges) do
    local p, c = e[1], e[2]
    if seen[c] and tl.dur[p] then
      if not seen[p] then
        nodes[#nodes + 1] = p
        seen[p] = true
      end
      preds[c] = preds[c] or {}
      table.insert(preds[c], p)
    end
  end
  if #nodes == 0 then return nil end
  table.sort(nodes, function(a, b)
    local ta, tb = tl.ts[a], tl.ts[b]
    if ta ~= tb then return ta < tb end
    return a < b
  end)
  -- lane order: each node follows the previous node of its lane. A node adds the time from
  -- the later of its start and its predecessor's end to its own end, so overlapping tasks are
  -- never counted twice and a path is never longer than the time it spans.
  local last_on_lane = {}
  local dist, from, gain = {}, {}, {}
  local best, best_node = -1, nil
  for _, r in ipairs(nodes) do
    local lane = tl.lane[r]
    local s0, e0 = tl.ts[r], tl.ts[r] + tl.dur[r]
    local d0, f0, g0 = tl.dur[r], nil, tl.dur[r]
    local function consider(p)
      if not dist[p] then return end
      local pe = tl.ts[p] + tl.dur[p]
      local add = e0 - math.max(s0, pe)
      if add < 0 then add = 0 end
      if dist[p] + add > d0 then d0, f0, g0 = dist[p] + add, p, add end
    end
    local prev = last_on_lane[lane]
    if prev then consider(prev) end
    for _, p in ipairs(preds[r] or {}) do consider(p) end
    dist[r], from[r], gain[r] = d0, f0, g0
    last_on_lane[lane] = r
    if d0 > best then best, best_node = d0, r end
  end
  local path = {}
  local r = best_node
  while r do
    path[#path + 1] = r
    r = from[r]
  end
  return best, path, #nodes, gain
end

local function composition(m, path, gain)
  local by = {}
  for _, r in ipairs(path) do
    local c = category(m, r)
    by[c] = (by[c] or 0) + gain[r]
  end
  local out = {}
  for c, t in pairs(by) do out[c] = ms(t) end
  return out
end

local function hotspots(m, path, gain, w0, w1, top_n)
  local tl = m.tl
  local on_path, path_count = {}, {}
  for _, r in ipairs(path) do
    local lane = m.lanes[tl.lane[r]]
    if lane.kind == "device" or lane.kind == "comm" then
      local n = tl.name[r] or "?"
      on_path[n] = (on_path[n] or 0) + gain[r]
      path_count[n] = (path_count[n] or 0) + 1
    end
  end
  local raw, raw_count = {}, {}
  for i, lane in ipairs(m.lanes) do
    if (lane.kind == "device" or lane.kind == "comm") and m.slices[i] then
      local rows = m.slices[i]
      for k = 1, #rows do
        local r = rows[k]
        local t = tl.ts[r]
        if t and t >= w0 and t < w1 and tl.dur[r] then
          local n = tl.name[r] or "?"
          raw[n] = (raw[n] or 0) + tl.dur[r]
          raw_count[n] = (raw_count[n] or 0) + 1
        end
      end
    end
  end
  local names = {}
  for n in pairs(raw) do names[#names + 1] = n end
  table.sort(names, function(a, b)
    if raw[a] ~= raw[b] then return raw[a] > raw[b] end
    return a < b
  end)
  local raw_rank = {}
  for k, n in ipairs(names) do raw_rank[n] = k end
  local pnames = {}
  for n in pairs(on_path) do pnames[#pnames + 1] = n end
  table.sort(pnames, function(a, b)
    local sa, sb = on_path[a] * path_count[a], on_path[b] * path_count[b]
    if sa ~= sb then return sa > sb end
    return a < b
  end)
  local out = {}
  for k = 1, math.min(#pnames, top_n) do
    local n = pnames[k]
    out[k] = { name = n, path_ms = ms(on_path[n]), path_count = path_count[n], path_rank = k,
               raw_ms = ms(raw[n] or 0), raw_count = raw_count[n] or 0, raw_rank = raw_rank[n] }
  end
  local raw_top = names[1]
  return out, raw_top, raw_top and (on_path[raw_top] or 0) == 0
end

local function phases(m, w0, w1)
  local pre = m.tagged_rows(m, "prefill")
  local dec = m.tagged_rows(m, "decode")
  if #pre == 0 and #dec == 0 then
    return { applicable = false,
             reason = "no event name matches the prefill/decode patterns (rules: patterns.prefill, patterns.decode)" }
  end
  local pu, du = m.busy(m, pre, w0, w1), m.busy(m, dec, w0, w1)
  local out = { applicable = true, prefill_ms = ms(pu:total()), decode_ms = ms(du:total()),
                prefill_count = #pre, decode_count = #dec }
  if #pu > 0 then
    local s, e = pu:get(1)
    out.ttft_ms = ms(e - s)
  end
  if #dec > 0 then
    local tl, sum, n = m.tl, 0, 0
    for k = 1, #dec do
      local d = tl.dur[dec[k]]
      if d then sum, n = sum + d, n + 1 end
    end
    out.tpot_ms = n > 0 and ms(sum / n) or nil
  end
  return out
end

--- Step jitter from step_trace_time.csv rows (or the step markers' durations).
function M.jitter(step_trace, m)
  local times, comm, source, comm_col = {}, {}, nil, nil
  local ids = {}
  if step_trace and #step_trace.steps > 0 then
    source = step_trace.source
    local use = step_trace.has["Communication(Not Overlapped)"] and "comm_not_overlapped_us"
      or (step_trace.has["Communication"] and "comm_us")
    comm_col = use == "comm_not_overlapped_us" and "Communication(Not Overlapped)" or (use and "Communication")
    for _, s in ipairs(step_trace.steps) do
      if s.time_us then
        times[#times + 1] = s.time_us / 1000
        ids[#ids + 1] = s.step
        if use and s[use] then comm[#comm + 1] = s[use] / 1000 end
      end
    end
  elseif m and #m.steps > 0 then
    source = "ProfilerStep markers"
    for _, s in ipairs(m.steps) do
      times[#times + 1] = s.dur / 1e6
      ids[#ids + 1] = tostring(s.id)
    end
  end
  if #times == 0 then return nil, nil end
  local st = stats.describe(times)
  st.series = { ids = ids, times = times, comm = #comm == #times and comm or nil }
  local long = {}
  for k, t in ipairs(times) do
    if t > st.p95 or t > 1.5 * st.p50 then long[#long + 1] = { step = ids[k], time_ms = t } end
  end
  st.source, st.steps, st.long_tail = source, #times, long
  local cj
  if #comm > 0 then
    local c = stats.describe(comm)
    cj = { cv = c.cv, mean_ms = c.mean, column = comm_col, steps = #comm }
  end
  return st, cj
end

--- All dimensions for one rank. opts: step, pp, microbatches, top_n, device_regex, comm_regex.
function M.analyse(tl, rules, step_trace, opts)
  opts = opts or {}
  local top_n = opts.top_n or rules.top_n or 10
  local steps = model_mod.steps(tl, rules)
  local r = { not_computed = {}, steps_found = #steps, warnings = {} }
  local wins, k = M.windows(steps, opts.step)
  if not wins then return nil, k end
  local w = wins[k]
  local w0, w1 = w.w0, w.w1
  -- everything below looks at the typical step only
  local m = model_mod.build(#steps > 1 and model_mod.subset(tl, w0, w1) or tl, rules, opts)
  m.steps = steps
  m.busy, m.tagged_rows = model_mod.busy, model_mod.tagged_rows
  r.step = { id = w.id, window_start_ms = w.id and ms(w0) or nil }

  -- 2 overlap from the Overlap Analysis lanes: needs no device lane
  local ov = overlap_lanes(m, w0, w1)
  if ov["Communication"] and ov["Communication"] > 0 then
    local exposed = (ov["Communication(Not Overlapped)"] or 0) / ov["Communication"]
    r.overlap = { source = "Overlap Analysis", overlap_ratio = 1 - exposed, exposed_ratio = exposed,
                  communication_ms = ms(ov["Communication"]),
                  not_overlapped_ms = ms(ov["Communication(Not Overlapped)"] or 0),
                  computing_ms = ov["Computing"] and ms(ov["Computing"]), free_ms = ov["Free"] and ms(ov["Free"]) }
  end
  local device_rows = model_mod.rows_of(m, "device")
  local comm_lane_rows = model_mod.rows_of(m, "comm")
  local activity = m.busy(m, model_mod.concat({ device_rows, comm_lane_rows }), w0, w1)
  local lo, hi = activity:bounds()
  r.lanes, r.max_lane_idle = lanes_dimension(m, w0, w1)
  if not lo then
    local why = ("no device lanes with tasks (no lane matches %q)"):format(opts.device_regex
      or table.concat(model_mod.alternatives(rules.lanes.device), "|"))
    for _, d in ipairs({ "critical_path", "op_util", "host", "pp_bubble", "hotspots" }) do r.not_computed[d] = why end
    if not r.overlap then r.not_computed.overlap = why end
  else
    local span = hi - lo
    r.step.span_ms = ms(span)
    r.step.start_ms = ms(lo)
    local compute = m.busy(m, model_mod.rows_of(m, "device", "compute"), lo, hi)
    -- 3 op utilisation
    r.op_util = { op_utilization = ratio(compute:total(), span), compute_busy_ms = ms(compute:total()), span_ms = ms(span) }
    -- 1 critical path
    local edges, skipped = flow_bindings(m, w0, w1)
    if skipped > 0 then
      r.warnings[#r.warnings + 1] = require("ascope.i18n").t("timeline.flows_skipped", skipped)
    end
    local len, path, nnodes, gain = longest_path(m, w0, w1, edges)
    r.critical_path = { critical_path_ratio = ratio(activity:total(), span), busy_union_ms = ms(activity:total()),
                        span_ms = ms(span), flow_edges = #edges }
    if len then
      r.critical_path.longest_path_ms = ms(len)
      r.critical_path.longest_path_tasks = #path
      r.critical_path.dag_nodes = nnodes
      r.critical_path.composition = composition(m, path, gain)
      r.critical_path.free_ms = ms(math.max(span - len, 0))
    end
    -- 7 hotspots
    if path then
      local hs, raw_top, off = hotspots(m, path, gain, w0, w1, top_n)
      r.hotspots = hs
      r.raw_top = raw_top
      r.raw_top_off_path = off
    end
    -- 2 overlap (from the Overlap Analysis lanes above, else by intersection)
    if not r.overlap then
      local comm = m.busy(m, model_mod.concat({ model_mod.rows_of(m, "device", "comm"), comm_lane_rows }), lo, hi)
      if comm:total() > 0 then
        local hidden = comm:intersect(compute):total()
        r.overlap = { source = "intersection", overlap_ratio = hidden / comm:total(),
                      exposed_ratio = 1 - hidden / comm:total(), communication_ms = ms(comm:total()),
                      not_overlapped_ms = ms(comm:total() - hidden), computing_ms = ms(compute:total()) }
      else
        r.not_computed.overlap = "no communication in the step (no Overlap Analysis lane, no communication tasks)"
      end
    end
    if #edges > 0 then r.alignment = alignment(m, edges, top_n) end
    -- 4 host/device
    local gaps = compute:gaps(lo, hi)
    local launch_rows = m.tagged_rows(m, "host_launch", { host = true, other = true })
    local launch = m.busy(m, launch_rows, lo, hi)
    local covered = gaps:intersect(launch):total()
    r.host = { host_launch_gap_ratio = ratio(covered, span), device_gap_ms = ms(gaps:total()),
               covered_ms = ms(covered), launch_busy_ms = ms(launch:total()) }
    if #launch_rows == 0 then
      r.host.host_launch_gap_ratio = nil
      r.not_computed.host = "no host launch/sync events (rules: patterns.host_launch) on host lanes"
    end
    local dl_rows = m.tagged_rows(m, "dataloader", { host = true, other = true })
    if #dl_rows > 0 and #compute > 0 then
      local dl = m.busy(m, dl_rows, w0, w1)
      local c0 = compute:bounds()
      local d0, d1 = dl:bounds()
      if d0 then
        r.host.dataloader = { busy_ms = ms(dl:total()), first_compute_ms = ms(c0), last_end_ms = ms(d1),
                              overlap_with_compute_ms = ms(dl:intersect(compute):total()),
                              serial = dl:intersect(compute):total() == 0 }
      end
    end
    -- 5 pipeline bubble
    local p2p_rows = m.tagged_rows(m, "p2p", { device = true, comm = true })
    if #p2p_rows > 0 then
      local p2p = m.busy(m, p2p_rows, lo, hi)
      local bubble = gaps:intersect(p2p):total()
      r.pp_bubble = { pp_bubble_ratio = ratio(bubble, span), bubble_ms = ms(bubble), p2p_busy_ms = ms(p2p:total()) }
      if opts.pp and opts.microbatches then
        local theory = (opts.pp - 1) / (opts.pp - 1 + opts.microbatches)
        r.pp_bubble.theory = theory
        r.pp_bubble.excess = r.pp_bubble.pp_bubble_ratio - theory
      end
    else
      r.not_computed.pp_bubble = "no P2P send/recv ops (rules: patterns.p2p)"
    end
  end
  -- the busy blocks of each lane in the step, for the swimlane picture (ms from the span start)
  if lo then
    r.swimlanes = {}
    for i, lane in ipairs(m.lanes) do
      local busy = m.lane_busy[i]
      if busy and lane.kind ~= "overlap" then
        local starts, ends = busy:clip(lo, hi):columns()
        local s_ms, e_ms = {}, {}
        for j = 1, math.min(#starts, 20000) do
          s_ms[j], e_ms[j] = (starts[j] - lo) / 1e6, (ends[j] - lo) / 1e6
        end
        r.swimlanes[#r.swimlanes + 1] = { name = lane.name, kind = lane.kind, starts = s_ms, ends = e_ms }
      end
    end
  end
  -- 6 jitter
  r.jitter, r.comm_jitter = M.jitter(step_trace, m)
  if not r.jitter then r.not_computed.jitter = "no step_trace_time.csv and no ProfilerStep markers" end
  if not r.comm_jitter then
    r.not_computed.comm_jitter = "no Communication column in step_trace_time.csv"
  end
  -- 8 prefill/decode
  r.phases = phases(m, w0, w1)
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

M.DASHBOARD_KEYS = { "critical_path_ratio", "op_utilization", "overlap_ratio", "host_launch_gap_ratio",
                     "pp_bubble_ratio", "step_cv", "max_lane_idle", "comm_jitter" }

return M
