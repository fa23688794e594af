--- Dimensions 1 and 7: the longest dependency path of a step and the hotspots on it, and the
-- cross-lane alignment gaps along flow edges (dimension 2).
--   nodes   device and communication tasks that start in the step's window, plus the host slices
--           that launch them (flows: async_npu / HostToDevice, a .db's connection ids)
--   edges   lane order (same stream = serial) and flows
--   length  each task adds the part of [its start, its end] after its predecessor's end, all
--           clipped to the stage: a path is never longer than the stage
local core = require "ascope_core"
local model_mod = require "ascope.analysis.timeline.model"
local patterns = require "ascope.analysis.timeline.patterns"
local match, interval, column = core.match, core.interval, core.column

local M = {}

local function ms(ns) return ns and ns / 1e6 end

local DEVICE_KINDS = { device = true, comm = true }

--- Flow edges {producer row, consumer row} whose consumer sits in [w0, w1), or in [d0, d1) when
-- it is on a device or communication lane (the device side of a step: the tasks it launched,
-- not those of the step before that a device running behind still runs in its host time):
-- each flow binds to the slice that holds its end on its lane. Also the number of flows left
-- out because an end had no readable time. Found in C whatever the trace's length: the ends in
-- the step, each one's start (the last start with its id, match.last) and the slices that hold
-- them (match.within, one pass over the slices).
function M.flow_edges(m, w0, w1, d0, d1)
  local tl = m.tl
  local s_rows, f_rows = m.flow_starts, m.flow_ends
  local nf = #f_rows
  if nf == 0 then return {}, 0 end
  d0, d1 = d0 or w0, d1 or w1
  local sides = d0 ~= w0 or d1 ~= w1
  local s_ts, f_ts = tl.ts:take(s_rows), tl.ts:take(f_rows)
  local untimed_start = s_ts:stats() < #s_rows
  -- the ends to look at: with every time known, the ones in the step (an end outside it is
  -- neither an edge nor a skip, and its id need not be read)
  local ends
  if untimed_start or f_ts:stats() < nf then
    ends = {}
    for k = 1, nf do ends[k] = k end
  else
    ends = column.rows_starting(f_ts, column.fill("integer", 0, nf), math.min(w0, d0), math.max(w1, d1))
  end
  -- the looked-at ends' times, rows and starts as plain tables: the loop reads each once
  local start_of = match.last(m.flow_start_ids, m.flow_end_ids:take(ends))
  local e_ts, e_rows, e_start = f_ts:take(ends):totable(), f_rows:take(ends):totable(), start_of:totable()
  local e_lanes = sides and tl.lane:take(e_rows):totable()
  -- consumers at 1..n, producers at n+1..2n of one query list
  local q_rows, producers = {}, {}
  local n, skipped = 0, 0
  for j = 1, #ends do
    local t = e_ts[j]
    local lo, hi = w0, w1
    if sides and DEVICE_KINDS[m.lanes[e_lanes[j]].kind] then lo, hi = d0, d1 end
    local inside = t and t >= lo and t < hi
    local s = (untimed_start or not t or inside) and e_start[j]
    if s and (not t or not s_ts[s]) then
      skipped = skipped + 1 -- a time that could not be read: this flow only is left out
    elseif s and inside then
      n = n + 1
      q_rows[n], producers[n] = e_rows[j], s
    end
  end
  if n == 0 then return {}, skipped end
  producers = s_rows:take(producers):totable()
  for k = 1, n do q_rows[n + k] = producers[k] end
  local held = match.within(tl.lane, tl.ts, tl.dur, tl.lane:take(q_rows), tl.ts:take(q_rows))
  local edges = {}
  for k = 1, n do
    local c, p = held[k], held[n + k]
    if c and p and c ~= p then edges[#edges + 1] = { p, c } end
  end
  return edges, skipped
end

-- how far back from a wait's end the records are looked through for one on another stream
local RECORDS_LOOKED_AT = 64

-- rows in (start, row) order
local function by_start(tl, rows)
  local ts = tl.ts:take(rows)
  return rows:take(ts:order())
end

-- rows (a column in (start, row) order) as a table in (start, end, row) order: only the runs
-- that start together are sorted again, a lane's rows rarely do
local function path_order(tl, rows)
  local out, ts, dur = rows:totable(), tl.ts:take(rows):totable(), tl.dur:take(rows):totable()
  local i, n = 1, #out
  while i <= n do
    local j = i
    while j < n and ts[j + 1] == ts[i] do j = j + 1 end
    if j > i then
      local run = {}
      for x = i, j do run[#run + 1] = { ts[x] + dur[x], out[x] } end
      table.sort(run, function(a, b)
        if a[1] ~= b[1] then return a[1] < b[1] end
        return a[2] < b[2]
      end)
      for x = i, j do out[x] = run[x - i + 1][2] end
    end
    i = j + 1
  end
  return out
end

--- Stream waits as edges {record row, row}: a stream's event wait (patterns.event_wait) that
-- the last event record (patterns.event_record) of another stream inside its span ends makes
-- that record a predecessor of the task after the wait on its stream; all of them start in
-- [w0, w1). The trace names no event, so the record is found by time: a wait ends when its
-- event is recorded (a compute stream waiting for the communication stream's record that ends
-- an allreduce, and the communication stream waiting for the compute one's before it starts).
-- The edge goes to the next task, not to the wait: the wait began before the record, and a
-- path takes a predecessor that starts earlier only. A wait already satisfied (no record
-- inside it) or last on its stream is no edge.
function M.sync_edges(m, w0, w1)
  local tl = m.tl
  local function in_step(rows)
    if #rows == 0 then return rows end
    return by_start(tl, column.rows_starting(tl.ts, tl.dur, w0, w1, rows))
  end
  local waits = in_step(m.tagged_rows(m, "event_wait", DEVICE_KINDS))
  local records = in_step(m.tagged_rows(m, "event_record", DEVICE_KINDS))
  if #waits == 0 or #records == 0 then return {} end
  local r_rows, r_ts, r_lane = records:totable(), tl.ts:take(records):totable(), tl.lane:take(records):totable()
  local w_rows, w_ts, w_dur, w_lane = waits:totable(), tl.ts:take(waits):totable(), tl.dur:take(waits):totable(),
    tl.lane:take(waits):totable()
  -- the wait's lane: row -> the row after it in (start, end, row) order, the longest path's
  -- (a wait of no length ends before a task that starts with it)
  local next_of = {}
  local function after(lane, row)
    if not next_of[lane] then
      local order = path_order(tl, in_step(m.slices(m, lane)))
      local t = {}
      for k = 1, #order - 1 do t[order[k]] = order[k + 1] end
      next_of[lane] = t
    end
    return next_of[lane][row]
  end
  local edges = {}
  for k, w in ipairs(w_rows) do
    local ws, we = w_ts[k], w_ts[k] + w_dur[k]
    local lo, hi = 1, #r_ts + 1 -- the first record after the wait's end
    while lo < hi do
      local mid = (lo + hi) // 2
      if r_ts[mid] <= we then lo = mid + 1 else hi = mid end
    end
    for j = lo - 1, math.max(1, lo - RECORDS_LOOKED_AT), -1 do
      if r_ts[j] < ws then break end
      if r_lane[j] ~= w_lane[k] then
        local succ = after(w_lane[k], w)
        if succ then edges[#edges + 1] = { r_rows[j], succ } end
        break
      end
    end
  end
  return edges
end

--- Alignment gaps (consumer start - producer end) along the edges: total, count and top n.
-- Only the top n are kept while the edges are walked (largest gap first, ties to the earlier
-- consumer row, then to the earlier producer row), so a step of a hundred thousand flows makes
-- no table per gap.
function M.alignment(m, edges, top_n)
  local tl = m.tl
  local top, total, count = {}, 0, 0 -- top: {gap, consumer row, producer row}, best first
  for _, e in ipairs(edges) do
    local p, c = e[1], e[2]
    local gap = tl.ts[c] - (tl.ts[p] + tl.dur[p])
    if gap > 0 then
      total, count = total + gap, count + 1
      local lo, hi = 1, #top + 1 -- where it goes: after every kept gap that ranks before it
      while lo < hi do
        local mid = (lo + hi) // 2
        local g = top[mid]
        if g[1] > gap or (g[1] == gap and (g[2] < c or (g[2] == c and g[3] <= p))) then lo = mid + 1 else hi = mid end
      end
      local at = lo
      if at <= top_n then
        table.insert(top, at, { gap, c, p })
        top[top_n + 1] = nil
      end
    end
  end
  local out = {}
  for k, g in ipairs(top) do
    local gap, c, p = g[1], g[2], g[3]
    out[k] = { gap_ms = ms(gap), producer = tl.name[p], consumer = tl.name[c],
               producer_lane = m.lanes[tl.lane[p]].name, consumer_lane = m.lanes[tl.lane[c]].name }
  end
  return { total_ms = ms(total), count = count, edges = #edges, top = out }
end

--- Category of a task on the path: host, p2p, comm, compute:<task type>, copy, sync, other.
function M.category(m, r)
  local lane = m.lanes[m.tl.lane[r]]
  if lane.kind == "host" or lane.kind == "other" then return "host" end
  -- a receive wait is the pipeline's bubble: the stage waiting for another, no transfer to hide
  if patterns.test(m.re.patterns.p2p_wait, m.tl.name[r]) then return "bubble" end
  if patterns.test(m.re.patterns.p2p, m.tl.name[r]) then return "p2p" end
  local cls = model_mod.class_of(m, r)
  if cls == "compute" then return "compute:" .. (model_mod.task_type_of(m, r) or "unknown") end
  return cls
end

-- device and communication slices that start in [w0, w1); the longest path and the hotspots
-- walk the same step, so its rows are found once
local function step_rows(m, w0, w1, fn)
  local c = m.device_window
  if not (c and c.w0 == w0 and c.w1 == w1) then
    c = { w0 = w0, w1 = w1, rows = model_mod.window_rows(m, w0, w1, DEVICE_KINDS) }
    m.device_window = c
  end
  for _, r in ipairs(c.rows) do fn(r) end
end

--- The longest path over the step's tasks, clipped to the stage [lo, hi] (the walk is
-- interval.longest_path's, in C: a step of a hundred thousand tasks is a tenth of a second of
-- sorting and table work in Lua).
-- Returns length (ns), path (rows, last first), node count, gain (row -> ns it adds) and the
-- path's communication time: the union of what its communication tasks add (an interval set).
function M.longest(m, w0, w1, lo, hi, edges)
  local tl = m.tl
  local rows = {}
  step_rows(m, w0, w1, function(r) rows[#rows + 1] = r end)
  local producers, consumers = {}, {}
  for k, e in ipairs(edges) do producers[k], consumers[k] = e[1], e[2] end
  local best, path, nodes, gains = interval.longest_path(tl.ts, tl.dur, tl.lane, rows, producers, consumers, lo, hi)
  if not best then return nil end
  local gain, starts, ends = {}, {}, {}
  for k, r in ipairs(path) do
    gain[r] = gains[k]
    if m.lanes[tl.lane[r]].kind == "comm" then
      local e = math.min(math.max(tl.ts[r] + tl.dur[r], lo), hi)
      starts[#starts + 1], ends[#ends + 1] = e - gains[k], e
    end
  end
  return best, path, nodes, gain, interval.union(starts, ends)
end

--- Time on the path by category (ms).
function M.composition(m, path, gain)
  local by = {}
  for _, r in ipairs(path) do
    local c = M.category(m, r)
    by[c] = (by[c] or 0) + gain[r]
  end
  local out = {}
  for c, t in pairs(by) do out[c] = ms(t) end
  return out
end

-- A communication operator is on the path when at least this share of its time lies in the
-- path's communication time: an HCCL op and the notify waits and copies of its stream are the
-- same communication, and the path runs through one of them.
M.ON_PATH_SHARE = 0.5

-- the group lanes (communication lanes that are no stream: HCCL's operator lanes)
local function group_lanes(m)
  local out = {}
  for i, lane in ipairs(m.lanes) do
    if lane.kind == "comm" and not lane.stream then out[#out + 1] = i end
  end
  return out
end

-- how many of a stream's tasks in [w0, w1) start where an operator of group lane g starts or end
-- where one ends (a profiler times an operator from its first task to its last)
local function shared_instants(m, stream, g, w0, w1)
  local tl = m.tl
  local function step_of(lane)
    local rows = column.rows_starting(tl.ts, tl.dur, w0, w1, m.slices(m, lane))
    return tl.ts:take(rows):totable(), tl.dur:take(rows):totable()
  end
  local ots, odur = step_of(g)
  local starts, ends = {}, {}
  for k = 1, #ots do starts[ots[k]], ends[ots[k] + odur[k]] = true, true end
  local ts, dur = step_of(stream)
  local n = 0
  for k = 1, #ts do
    if starts[ts[k]] or ends[ts[k] + dur[k]] then n = n + 1 end
  end
  return n
end

--- The communication operators of the path's tasks on communication streams: row -> the row of
-- the operator (a slice of a group lane: HCCL's operator lanes, an operator spanning its notify
-- waits, copies and reduces) holding the task's start. The path runs through the streams'
-- tasks, which the stream waits link to compute, but a user asks which allreduce it was.
-- Two groups' operators may run at once, one holding the other's tasks: a profiler times an
-- operator from its first task to its last, so an operator that starts where none of the
-- stream's tasks starts is another stream's, and one that ends where a task of some length
-- starts is over.
-- Of the operators left, the one that started last is the task's; of those that started
-- together, the one of the group whose operators start or end with most of the stream's tasks
-- in the step, then the longest. When no operator starts with one of the stream's tasks (times
-- from another clock), every operator holding the task is weighed so. A task that no operator
-- holds is left out (it is its own operator).
function M.ops_of(m, path, w0, w1)
  local tl = m.tl
  local tasks = {}
  for _, r in ipairs(path) do
    if m.lanes[tl.lane[r]].stream then tasks[#tasks + 1] = r end
  end
  local out = {}
  local groups = group_lanes(m)
  if #tasks == 0 or #groups == 0 then return out end
  local times, durs = tl.ts:take(tasks):totable(), tl.dur:take(tasks):totable()
  local starts_of = {} -- stream -> set of its tasks' starts (the whole trace: an operator may begin a step before)
  local function starts(stream)
    local set = starts_of[stream]
    if not set then
      set = {}
      for _, t in ipairs(tl.ts:take(m.slices(m, stream)):totable()) do set[t] = true end
      starts_of[stream] = set
    end
    return set
  end
  -- the operators holding tasks[k] that started last: of the stream's (k -> list), of any (any[k])
  local latest, any = {}, {}
  local function keep(lists, k, op)
    local best = lists[k]
    if not best or tl.ts[op] > tl.ts[best[1]] then
      lists[k] = { op }
    elseif tl.ts[op] == tl.ts[best[1]] then
      best[#best + 1] = op
    end
  end
  for _, g in ipairs(groups) do
    local lanes = {}
    for k = 1, #tasks do lanes[k] = g end
    local held = match.within(tl.lane, tl.ts, tl.dur, lanes, times)
    for k = 1, #tasks do
      local op = held[k]
      if op and tl.dur[op] > 0 and durs[k] > 0 and tl.ts[op] + tl.dur[op] == times[k] then op = nil end
      if op then
        keep(any, k, op)
        if starts(tl.lane[tasks[k]])[tl.ts[op]] then keep(latest, k, op) end
      end
    end
  end
  for k = 1, #tasks do latest[k] = latest[k] or any[k] end
  local votes = {} -- stream -> group lane -> shared instants, counted when a tie asks
  for k, r in ipairs(tasks) do
    local best = latest[k]
    if best and #best > 1 then
      local stream = tl.lane[r]
      local v = votes[stream] or {}
      votes[stream] = v
      for _, op in ipairs(best) do
        local g = tl.lane[op]
        v[g] = v[g] or shared_instants(m, stream, g, w0, w1)
      end
      table.sort(best, function(a, b)
        local va, vb = v[tl.lane[a]], v[tl.lane[b]]
        if va ~= vb then return va > vb end
        if tl.dur[a] ~= tl.dur[b] then return tl.dur[a] > tl.dur[b] end
        return a < b
      end)
    end
    out[r] = best and best[1]
  end
  return out
end

--- Hotspots: operators by time on the path x count, beside their raw-time rank in the step.
-- Returns the list, the raw top operator and whether it is off the path: a compute operator
-- when none of its tasks is on the path, a communication one when less than half of its time
-- lies in the path's communication time.
function M.hotspots(m, path, gain, comm_time, w0, w1, top_n)
  local tl = m.tl
  local on_path, path_count, counted = {}, {}, {}
  local op_of = M.ops_of(m, path, w0, w1)
  for _, r in ipairs(path) do
    local lane = m.lanes[tl.lane[r]]
    if lane.kind == "device" or lane.kind == "comm" then
      local op = op_of[r] or r -- a communication stream's task counts as its operator
      local n = tl.name[op] or "?"
      on_path[n] = (on_path[n] or 0) + gain[r]
      if not counted[op] then
        counted[op] = true
        path_count[n] = (path_count[n] or 0) + 1
      end
    end
  end
  local raw, raw_count, rows_of = {}, {}, {}
  step_rows(m, w0, w1, function(r)
    local n = tl.name[r] or "?"
    raw[n] = (raw[n] or 0) + tl.dur[r]
    raw_count[n] = (raw_count[n] or 0) + 1
    rows_of[n] = rows_of[n] or {}
    table.insert(rows_of[n], r)
  end)
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
  if not raw_top then return out end
  -- a receive wait is the pipeline's bubble (pp_bubble), no operator to optimise: whether the
  -- path holds it says nothing about where to look
  if patterns.test(m.re.patterns.p2p_wait, raw_top) then return out, raw_top, false end
  local top_rows = rows_of[raw_top]
  if m.lanes[tl.lane[top_rows[1]]].kind ~= "comm" then return out, raw_top, (on_path[raw_top] or 0) == 0 end
  local busy = interval.from_durations(tl.ts, tl.dur, top_rows)
  local share = busy:total() > 0 and busy:intersect(comm_time):total() / busy:total() or 0
  return out, raw_top, share < M.ON_PATH_SHARE
end

return M
