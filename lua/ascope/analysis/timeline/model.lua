--- The timeline model the dimensions work on: lanes with a kind (device, comm, host, overlap,
-- other), every slice with a class (compute, comm, copy, sync, other), rows grouped by lane and
-- class, name tags, flows and step markers. Built from the reader's columns with the grouping
-- done in C; names are tested with the compiled patterns of analysis/timeline/patterns.lua.
local core = require "ascope_core"
local patterns = require "ascope.analysis.timeline.patterns"
local heap = require "ascope.heap"
local column, interval = core.column, core.interval

local M = {}

--- "A|B" or {"A", "B"} -> list of Lua patterns (plog and opjitter name their classes this way)
function M.alternatives(p)
  if type(p) == "table" then return p end
  local out = {}
  for alt in tostring(p or ""):gmatch("[^|]+") do out[#out + 1] = alt end
  return out
end

--- A test of whether a text matches any of the Lua patterns (case-insensitively), with the
-- patterns lowered once: for a test run a million times (the node names of a graph file).
function M.matcher(patterns_)
  local lowered = {}
  for i, p in ipairs(M.alternatives(patterns_)) do lowered[i] = p:lower() end
  return function(text)
    if not text then return false end
    local lower = text:lower()
    for _, p in ipairs(lowered) do
      if lower:find(p) then return true end
    end
    return false
  end
end

--- Does text match any Lua pattern (case-insensitively)?
function M.matches(text, patterns_) return M.matcher(patterns_)(text) end

local function set_of(list)
  local s = {}
  for _, v in ipairs(list or {}) do s[v:upper()] = true end
  return s
end

local function lane_kind(name, re)
  if patterns.test(re.lanes.overlap, name) then return "overlap" end
  if patterns.test(re.lanes.comm, name) then return "comm" end
  if patterns.test(re.lanes.device, name) then return "device" end
  if patterns.test(re.lanes.host, name) then return "host" end
  return "other"
end

M.CLASSES = { "compute", "comm", "copy", "sync" }

--- Class of a device task: its task type when the rules know it; a missing, "Other" or unknown
-- type (older traces say "Other" for AI Core kernels) goes by the name.
function M.classify(task_type, name, types, re)
  local tt = task_type and task_type:upper()
  if tt and tt ~= "" then
    for _, cls in ipairs(M.CLASSES) do
      if types[cls][tt] then return cls end
    end
  end
  -- most names are none of the narrower classes: one search over them all says so
  if not re.narrow_names or re.narrow_names:find(name) then
    for _, cls in ipairs(patterns.NARROW_CLASSES) do
      if patterns.test(re.names[cls], name) then return cls end
    end
  end
  if patterns.test(re.names.compute, name) then return "compute" end
  return "other"
end

-- first match wins: a receive wait is also a P2P op, tagged as the narrower one
M.TAGS = { "p2p_wait", "p2p", "host_launch", "dataloader", "prefill", "decode", "request", "event_wait",
           "event_record" }

-- what column.group should not allocate: each left-out result is four bytes a row
local ROWS_ONLY = { ids = false }
-- the group numbers and each group's first row, in place of a Lua table of values a group
local FIRST_ROWS = { rows = false, keys = "first" }
-- the rows of the tagged groups only: the untagged rows are most of the trace
local TAGGED_ROWS = { ids = false, missing = false }

local function concat(cols)
  if #cols == 0 then return column.new("integer") end
  if #cols == 1 then return cols[1] end
  return column.concat(cols)
end
M.concat = concat

--- Step markers: ProfilerStep#N slices (or STEP_TIME rows of a .db), one per step number,
-- sorted by start: {id, start, dur}. m: the model, whose kinds know their step numbers (the
-- names were matched once each when it was built), so only the markers' rows are listed.
function M.steps(m)
  local tl = m.tl
  local steps = {}
  if next(m.step_of) then
    local numbers = m.kind:lookup(m.step_of) -- a marker's step number, nil for every other row
    local _, keys, rows_of = column.group(numbers, nil, TAGGED_ROWS)
    numbers = nil -- luacheck: ignore 311
    for g, key in ipairs(keys) do
      local rows = key[1] and rows_of[g] or {} -- the other rows' group has no list
      for k = 1, #rows do
        local r = rows[k]
        if tl.ts[r] and tl.dur[r] then
          steps[#steps + 1] = { id = tonumber(key[1]), start = tl.ts[r], dur = tl.dur[r] }
        end
      end
    end
  end
  -- one window per step number (a .db has the step in STEP_TIME and in PYTORCH_API)
  local by_id, unique = {}, {}
  for _, st in ipairs(steps) do
    local prev = by_id[st.id]
    if not prev then
      by_id[st.id] = st
      unique[#unique + 1] = st
    elseif st.start < prev.start or (st.start == prev.start and st.dur > prev.dur) then
      prev.start, prev.dur = st.start, st.dur
    end
  end
  table.sort(unique, function(a, b) return a.start < b.start end)
  return unique
end

--- Build the model. tl: reader output; rules: rules/timeline.lua; re: its compiled patterns.
-- The model takes tl's task_type and flow columns over (both are nil afterwards): a row's task
-- type, class, tag and step number are read through one number, m.kind[r], of its (task type,
-- name, ph), which costs the four bytes a row that a task type column and a class column would
-- each hold;
-- the flow ids are kept for the flow ends only (m.flow_start_ids[k] is m.flow_starts[k]'s).
function M.build(tl, rules, re)
  local types = {}
  for _, cls in ipairs(M.CLASSES) do types[cls] = set_of(rules.task_types[cls]) end
  local m = { tl = tl, rules = rules, re = re, lanes = {} }
  local listed = {}
  for _, name in ipairs(tl.comm_lanes or {}) do listed[name] = true end
  for i, name in ipairs(tl.lanes) do
    m.lanes[i] = { index = i, name = name, kind = lane_kind(name, re),
                   process = name:match("^(.-)/"), thread = name:match("/(.*)$") }
  end
  -- Each intermediate below is a column of a row's worth of values; the collector sees them as
  -- small objects, so each is let go (and collected) before the next is made: the peak is two
  -- or three of them, not all of them.
  -- The distinct (task type, name) pairs and (pair, ph) kinds come as each one's first row, and
  -- their values as plain lists taken from the columns: a trace whose names carry a counter
  -- has about as many pairs as rows, and a Lua table a pair cost more than the rest of the model.
  local pair_ids, pair_first = column.group(tl.task_type, tl.name, FIRST_ROWS)
  local pair_tt, pair_name = tl.task_type:take(pair_first):totable(), tl.name:take(pair_first):totable()
  local npairs = #pair_first
  tl.task_type, pair_first = nil, nil -- luacheck: ignore 311
  local kind, kind_first = column.group(pair_ids, tl.ph, FIRST_ROWS) -- (pair, ph) numbers
  local kind_pair, kind_ph = pair_ids:take(kind_first):totable(), tl.ph:take(kind_first):totable()
  pair_ids, kind_first = nil, nil -- luacheck: ignore 311
  heap.release(tl.n) -- the task type column and the pair numbers
  local class_by_pair, tag_by_pair, step_by_pair = {}, {}, {}
  local step_pattern = rules.patterns.step
  for i = 1, npairs do
    local name = pair_name[i]
    class_by_pair[i] = M.classify(pair_tt[i], name, types, re)
    step_by_pair[i] = name and name:match(step_pattern)
    local maybe = name and (not re.any_tag or re.any_tag:find(name))
    for _, tag in ipairs(maybe and M.TAGS or {}) do
      if patterns.test(re.patterns[tag], name) then
        tag_by_pair[i] = tag
        break
      end
    end
  end
  pair_name = nil -- luacheck: ignore 311
  -- by kind: task type, class and tag (those of its pair, whatever the ph), and the key rows
  -- are listed under: a slice's class, a flow end's ph (not a class name: "~s", "~f")
  m.kind, m.task_type, m.class, m.tag, m.step_of = kind, {}, {}, {}, {}
  local list_key = {}
  for k = 1, #kind_pair do
    local pair, ph = kind_pair[k], kind_ph[k]
    m.task_type[k], m.class[k], m.tag[k] = pair_tt[pair], class_by_pair[pair], tag_by_pair[pair]
    if ph == "X" then m.step_of[k] = step_by_pair[pair] end -- a step marker is a slice
    list_key[k] = ph == "X" and class_by_pair[pair] or "~" .. tostring(ph)
  end
  m.tagged = {} -- lane -> tag -> rows
  -- (a trace without tagged rows makes no column: lookup's column of nothing but missing
  -- values would be an integer one, eight bytes a row)
  local tags = next(m.tag) and kind:lookup(m.tag)
  local _, lt, lt_rows
  if tags then _, lt, lt_rows = column.group(tl.lane, tags, TAGGED_ROWS) end
  for g, key in ipairs(lt or {}) do
    if key[2] then
      m.tagged[key[1]] = m.tagged[key[1]] or {}
      m.tagged[key[1]][key[2]] = lt_rows[g]
    end
  end
  tags, lt_rows = nil, nil -- luacheck: ignore 311
  heap.release(tl.n)
  -- slices by (lane, class) and flow ends by (lane, ph), in one grouping: no row is listed
  -- twice (a lane's slices are the union of its classes' rows: M.slices)
  local listed_as = kind:lookup(list_key)
  local _, lk, lk_rows = column.group(tl.lane, listed_as, ROWS_ONLY)
  listed_as = nil -- luacheck: ignore 311
  m.rows = {} -- lane -> class -> rows of slices (ph X)
  local by_ph, f_lanes = {}, {}
  for g, key in ipairs(lk) do
    local lane, k = key[1], key[2]
    local ph = k:match("^~(.*)")
    if ph then
      by_ph[ph] = by_ph[ph] or {}
      table.insert(by_ph[ph], lk_rows[g])
      if ph == "f" then f_lanes[#by_ph.f] = lane end
    else
      m.rows[lane] = m.rows[lane] or {}
      m.rows[lane][k] = lk_rows[g]
    end
  end
  -- a device stream that carries communication tasks (HCCL's notify waits, SDMA, the hcom_
  -- ops; in a .db the streams of COMMUNICATION_TASK_INFO) is a communication stream: all of its
  -- tasks are communication whatever their type (HCCL's reduce kernels say AI_CORE)
  m.device_lanes = 0 -- lanes the device pattern named, communication streams included
  for i, lane in ipairs(m.lanes) do
    if lane.kind == "device" then m.device_lanes = m.device_lanes + 1 end
    if lane.kind == "device" and (listed[lane.name] or (m.rows[i] and m.rows[i].comm)) then
      lane.kind, lane.stream = "comm", true
    end
  end
  m.slices = M.slices
  m.flow_starts = concat(by_ph.s or {})
  m.flow_ends = concat(by_ph.f or {})
  m.flow_start_ids, m.flow_end_ids = tl.flow:take(m.flow_starts), tl.flow:take(m.flow_ends)
  -- the flow ends on compute streams: the launches of device tasks
  local launches = {}
  for k, rows in ipairs(by_ph.f or {}) do
    if m.lanes[f_lanes[k]].kind == "device" then launches[#launches + 1] = rows end
  end
  m.launch_ends = concat(launches)
  m.launch_end_ids = tl.flow:take(m.launch_ends)
  tl.flow = nil
  -- the intermediate columns are big in C but small to Lua's collector, which would not hurry
  heap.release(tl.n)
  return m
end

--- The class of row r: every task of a communication lane is communication.
function M.class_of(m, r)
  local lane = m.lanes[m.tl.lane[r]]
  if lane.kind == "comm" then return "comm" end
  return m.class[m.kind[r]] or "other"
end

--- The task type of row r (nil when it has none).
function M.task_type_of(m, r) return m.task_type[m.kind[r]] end

-- the row columns of lane i's slices, class by class, appended to cols
local function lane_slices(m, i, cols)
  local rows = m.rows[i]
  if not rows then return cols end
  for _, c in ipairs(M.CLASSES) do
    if rows[c] then cols[#cols + 1] = rows[c] end
  end
  if rows.other then cols[#cols + 1] = rows.other end
  return cols
end

--- Rows of the slices of lane i, or nil when it has none (its classes' rows together, in class
-- order: for busy sets, which do not depend on the order).
function M.slices(m, i)
  if not m.rows[i] then return nil end
  return concat(lane_slices(m, i, {}))
end

--- Rows (X slices) of lanes of a kind, optionally only of one class.
function M.rows_of(m, kind, class)
  local cols = {}
  for i, lane in ipairs(m.lanes) do
    if lane.kind == kind then
      if class then
        local r = m.rows[i] and m.rows[i][class]
        if r then cols[#cols + 1] = r end
      else
        lane_slices(m, i, cols)
      end
    end
  end
  return concat(cols)
end

--- Busy union of rows, clipped to [w0, w1) when given.
function M.busy(m, rows, w0, w1)
  -- clipped while built: a step's set never holds the rest of the trace
  return interval.from_durations(m.tl.ts, m.tl.dur, rows, w0, w1)
end

--- Rows of X slices that start in [w0, w1) on lanes of the given kinds (a set), in row order.
-- The lanes' slices are filtered in C, so a step costs a pass over them, not a Lua loop.
function M.window_rows(m, w0, w1, kinds)
  local cols = {}
  for i, lane in ipairs(m.lanes) do
    if kinds[lane.kind] then lane_slices(m, i, cols) end
  end
  if #cols == 0 then return {} end
  local rows = column.rows_starting(m.tl.ts, m.tl.dur, w0, w1, concat(cols))
  return rows:take(rows:order()):totable()
end

--- Rows tagged with one of tags (a name or a list) on lanes of the given kinds (a set, or nil
-- for all lanes).
function M.tagged_rows(m, tags, kinds)
  if type(tags) == "string" then tags = { tags } end
  local cols = {}
  for i, lane in ipairs(m.lanes) do
    if (not kinds or kinds[lane.kind]) and m.tagged[i] then
      for _, tag in ipairs(tags) do
        if m.tagged[i][tag] then cols[#cols + 1] = m.tagged[i][tag] end
      end
    end
  end
  return concat(cols)
end

return M
