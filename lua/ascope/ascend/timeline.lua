--- Timeline readers: trace_view.json / msprof_*.json (Chrome trace) and
-- ascend_pytorch_profiler_*.db give the analyses the same columns, whatever the format:
--   {n, lane (integer column, index into lanes), lanes = {"process/thread", ...}, name, ts, dur
--    (ns), task_type, ph ("X" slice, "s"/"f" flow start/finish), flow (flow id), source,
--    comm_lanes = {lane name, ...} (the streams the file itself says carry communication),
--    notes = {text, ...} (a .db's rows left out, its unnamed task types, tasks of no stream,
--    slices of a negative duration)}
local core = require "ascope_core"
local json, column = core.json, core.column
local i18n = require "ascope.i18n"
local profdb = require "ascope.ascend.profdb"
local heap = require "ascope.heap"

local M = {}

-- "process/thread" by the metadata events' names, else by the numbers
local function lane_name(meta, pid, tid)
  return (meta.processes[pid] or ("pid " .. pid)) .. "/" .. ((meta.threads[pid] or {})[tid] or ("tid " .. tid))
end

--- Read a Chrome-trace JSON file (bare array or {"traceEvents": [...]}).
function M.read_json(path, progress)
  local r, err = json.scan(path, {
    where = { ph = { "X", "s", "f" } },
    fields = { ph = "string", pid = "string", tid = "string", name = "string", ts = "us", dur = "us",
               ["args.Task Type"] = "string", id = "string" },
    progress = progress,
    threads = require("ascope.workers").scan_threads,
  })
  if not r then return nil, err end
  local c = r.columns
  local lane_ids, pairs_ = column.group(c.pid, c.tid, { rows = false })
  -- the lane numbers replace pid and tid (eight bytes a row): let them go before the model
  -- makes its own columns
  c.pid, c.tid = nil, nil
  heap.release(r.n)
  local lanes, keys = {}, {}
  for i, p in ipairs(pairs_) do
    keys[i] = { p[1] or "?", p[2] or "?" }
    lanes[i] = lane_name(r.meta, keys[i][1], keys[i][2])
  end
  return { n = r.n, lane = lane_ids, lanes = lanes, name = c.name, ts = c.ts, dur = c.dur,
           task_type = c["args.Task Type"], ph = c.ph, flow = c.id, source = path, warning = r.warning,
           lane_keys = keys, meta = r.meta }
end

local W = profdb.whole

-- start and duration of table alias a's row, from its startNs and endNs as whole numbers
local function span(a)
  return ("%s, %s - %s"):format(W(a .. ".startNs"), W(a .. ".endNs"), W(a .. ".startNs"))
end
-- rows whose start and end are whole numbers (the others are counted, see read_db)
local function timed(a) return ("%s IS NOT NULL AND %s IS NOT NULL"):format(W(a .. ".startNs"), W(a .. ".endNs")) end

-- The tasks of TASK, each named by what the database knows of it: a kernel by its
-- COMPUTE_TASK_INFO name; a task of neither COMPUTE_ nor COMMUNICATION_TASK_INFO whose connection
-- is a COMMUNICATION_OP's by that operator; any other by its task type (HCCL's own tasks:
-- Notify_Wait, SDMA, ...). msprof writes an HCCL operator as one such task, of type AI_CORE,
-- on the communication stream, spanning the operator. When COMMUNICATION_TASK_INFO tells
-- HCCL's own tasks apart, that task is left out: the operator is the HCCL lane's
-- COMMUNICATION_OP row already (as in the trace, whose streams hold only HCCL's own tasks),
-- and kept it counted the operator twice. has: the optional tables present. A table is
-- joined through one row a key, so no task is counted twice; names go through S
-- (profdb.STRINGS), and an id S does not name is shown as the number.
local function db_tasks_sql(has)
  local joins, comm, only = {}, "NULL", ""
  local flow_lane, flow_ts, flow_join = "'Ascend Hardware/Stream ' || COALESCE(t.streamId, '?')", W("t.startNs"), ""
  if has.COMPUTE_TASK_INFO then
    joins[#joins + 1] = [[
  LEFT JOIN (SELECT globalTaskId, MIN(name) AS name FROM COMPUTE_TASK_INFO GROUP BY globalTaskId) c
    ON c.globalTaskId = t.globalTaskId
  LEFT JOIN S sn ON sn.id = c.name]]
  end
  if has.COMMUNICATION_OP then
    local task_info = has.COMMUNICATION_TASK_INFO
      and " AND t.globalTaskId NOT IN (SELECT globalTaskId FROM COMMUNICATION_TASK_INFO)" or ""
    joins[#joins + 1] = ([[
  LEFT JOIN (SELECT connectionId, MIN(opName) AS opName FROM COMMUNICATION_OP GROUP BY connectionId) co
    ON co.connectionId = t.connectionId%s%s
  LEFT JOIN S cn ON cn.id = co.opName]]):format(has.COMPUTE_TASK_INFO and " AND c.globalTaskId IS NULL" or "",
      task_info)
    comm = "cn.value"
    if has.COMMUNICATION_TASK_INFO then
      only = " AND co.connectionId IS NULL"
      -- the launch of the operator's task lands on the operator, as the trace's flows do
      flow_lane, flow_ts = "COALESCE(fo.lane, " .. flow_lane .. ")", "COALESCE(fo.ts, " .. flow_ts .. ")"
      flow_join = ([[
  LEFT JOIN (SELECT o.connectionId, MIN('HCCL/Group ' || COALESCE(g.value, CAST(o.groupName AS TEXT))) AS lane,
                    MIN(%s) AS ts
               FROM COMMUNICATION_OP o LEFT JOIN S g ON g.id = o.groupName GROUP BY o.connectionId) fo
    ON fo.connectionId = t.connectionId
   AND t.globalTaskId NOT IN (SELECT globalTaskId FROM COMMUNICATION_TASK_INFO)%s]]):format(W("o.startNs"),
        has.COMPUTE_TASK_INFO and "\n   AND t.globalTaskId NOT IN (SELECT globalTaskId FROM COMPUTE_TASK_INFO)" or "")
    end
  end
  return ([[
SELECT 'Ascend Hardware/Stream ' || COALESCE(t.streamId, '?') AS lane,
       COALESCE(%s, %s, tt.value, CAST(t.taskType AS TEXT)) AS name, %s,
       COALESCE(tt.value, CAST(t.taskType AS TEXT)) AS task_type, 'X' AS ph, NULL AS flow
  FROM TASK t
  LEFT JOIN S tt ON tt.id = t.taskType
%s
 WHERE %s%s
UNION ALL
SELECT %s, NULL, %s, NULL, NULL, 'f', CAST(t.connectionId AS TEXT)
  FROM TASK t%s
 WHERE t.connectionId IS NOT NULL AND %s]]):format(has.COMPUTE_TASK_INFO and "sn.value" or "NULL", comm,
    ("%s AS ts, %s - %s AS dur"):format(W("t.startNs"), W("t.endNs"), W("t.startNs")), table.concat(joins, "\n"),
    timed("t"), only, flow_lane, flow_ts, flow_join, W("t.startNs") .. " IS NOT NULL")
end

local DB_OPTIONAL = {
  COMMUNICATION_OP = ([[
SELECT 'HCCL/Group ' || COALESCE(g.value, CAST(o.groupName AS TEXT)), COALESCE(n.value, CAST(o.opName AS TEXT)), %s,
       'COMMUNICATION', 'X', NULL
  FROM COMMUNICATION_OP o
  LEFT JOIN S n ON n.id = o.opName
  LEFT JOIN S g ON g.id = o.groupName
 WHERE %s]]):format(span("o"), timed("o")),
  PYTORCH_API = ([[
SELECT 'Python/Thread ' || (p.globalTid %% 4294967296), COALESCE(n.value, CAST(p.name AS TEXT)), %s, NULL, 'X', NULL
  FROM PYTORCH_API p LEFT JOIN S n ON n.id = p.name
 WHERE %s]]):format(span("p"), timed("p")),
  CANN_API = ([[
SELECT 'CANN/Thread ' || (a.globalTid %% 4294967296), COALESCE(n.value, CAST(a.name AS TEXT)), %s, NULL, 'X', NULL
  FROM CANN_API a LEFT JOIN S n ON n.id = a.name
 WHERE %s
UNION ALL
SELECT 'CANN/Thread ' || (a.globalTid %% 4294967296), NULL, %s, NULL, NULL, 's', CAST(a.connectionId AS TEXT)
  FROM CANN_API a WHERE a.connectionId IS NOT NULL AND %s IS NOT NULL]]):format(span("a"), timed("a"),
    W("a.startNs"), W("a.startNs")),
  STEP_TIME = ([[
SELECT 'Python/Steps', 'ProfilerStep#' || s.id, %s, NULL, 'X', NULL FROM STEP_TIME s WHERE %s]]):format(span("s"),
    timed("s")),
}

-- the streams of HCCL's tasks: everything on them is communication, whatever its task type
local DB_COMM_STREAMS = [[
SELECT DISTINCT 'Ascend Hardware/Stream ' || COALESCE(t.streamId, '?') AS lane
  FROM TASK t JOIN COMMUNICATION_TASK_INFO c ON c.globalTaskId = t.globalTaskId ORDER BY 1]]

-- what read_db could not take as it was: rows left out for their times, task types unnamed,
-- tasks of no stream
local function notes(bad, first, unnamed, streamless)
  local out = {}
  if bad > 0 then out[#out + 1] = i18n.t("timeline.db_bad_times", bad, first) end
  if unnamed > 0 then out[#out + 1] = i18n.t("timeline.db_unnamed_types", unnamed) end
  if streamless > 0 then out[#out + 1] = i18n.t("timeline.db_no_stream", streamless) end
  return out
end

--- Read an ascend_pytorch_profiler_*.db (times already integer ns; names through STRING_IDS).
function M.read_db(path)
  local h, err = profdb.open(path, { "TASK", "STRING_IDS" })
  if not h then return nil, err end
  local has = {}
  for _, t in ipairs({ "COMPUTE_TASK_INFO", "COMMUNICATION_TASK_INFO", "COMMUNICATION_OP", "PYTORCH_API", "CANN_API",
                       "STEP_TIME" }) do
    has[t] = h:has_table(t)
  end
  local sql = { profdb.STRINGS .. db_tasks_sql(has) }
  for _, t in ipairs({ "COMMUNICATION_OP", "PYTORCH_API", "CANN_API", "STEP_TIME" }) do
    if has[t] then sql[#sql + 1] = "UNION ALL\n" .. DB_OPTIONAL[t] end
  end
  local r, qerr = h:query(table.concat(sql, "\n"))
  -- the rows left out for a start or end that is no whole number, and the first of them
  local bad, first = 0, nil
  if r then
    local tables = { "TASK" }
    for _, t in ipairs({ "COMMUNICATION_OP", "PYTORCH_API", "CANN_API", "STEP_TIME" }) do
      if has[t] then tables[#tables + 1] = t end
    end
    bad, first = profdb.times_not_whole(h, tables, true)
    if not bad then
      h:close()
      return nil, first
    end
  end
  -- task types STRING_IDS does not name: shown as their ids, and no rule knows them
  local unnamed = r and profdb.unnamed(h, "TASK", "taskType") or 0
  local streamless = r and h:query("SELECT COUNT(*) AS n FROM TASK WHERE streamId IS NULL")
  streamless = streamless and streamless.columns.n[1] or 0
  local comm_lanes = {}
  if r and has.COMMUNICATION_TASK_INFO then
    local cs, cerr = h:query(DB_COMM_STREAMS)
    if not cs then
      h:close()
      return nil, cerr
    end
    for i = 1, cs.n do comm_lanes[i] = cs.columns.lane[i] end
  end
  h:close()
  if not r then return nil, qerr end
  -- a column all null (no names, no flows) has no kind of its own in SQLite: give it its kind
  local c = r.columns
  for name, kind in pairs({ lane = "string", name = "string", ts = "integer", dur = "integer", task_type = "string",
                            ph = "string", flow = "string" }) do
    if c[name]:kind() ~= kind then c[name] = column.fill(kind, nil, r.n) end
  end
  local lane_ids, names = column.group(c.lane, nil, { rows = false })
  local lanes = {}
  for i, p in ipairs(names) do lanes[i] = p[1] or "?" end
  return { n = r.n, lane = lane_ids, lanes = lanes, name = c.name, ts = c.ts, dur = c.dur,
           task_type = c.task_type, ph = c.ph, flow = c.flow, source = path, comm_lanes = comm_lanes,
           notes = notes(bad, first, unnamed, streamless) }
end

-- msprof cuts a big timeline into slices, msprof_slice_<n>_<timestamp>.json (older versions
-- put slice_<n> last), each a whole Chrome trace of a stretch of time. A slice is read with the
-- other slices of its name, in slice order: the paths (just `path` when it is not a slice).
function M.slices(path)
  local dir, name = path:match("^(.*/)([^/]*)$") -- dir with its slash, "" for a bare name
  dir, name = dir or "", name or path
  if not (name:match("^msprof.*slice_%d+") and name:match("%.json$")) then return { path } end
  local key = name:gsub("slice_%d+", "slice_#", 1)
  local found = {}
  for _, other in ipairs(core.fs.list(dir == "" and "." or dir) or {}) do
    if other:gsub("slice_%d+", "slice_#", 1) == key then
      found[#found + 1] = { n = tonumber(other:match("slice_(%d+)")), path = dir .. other }
    end
  end
  table.sort(found, function(a, b) return a.n < b.n end)
  local paths = {}
  for i, f in ipairs(found) do paths[i] = f.path end
  return #paths > 0 and paths or { path }
end

-- The slices' columns one after the other, their lanes joined by process and thread id, named
-- by the metadata of whichever slice has it.
local function joined(parts)
  local meta = { processes = {}, threads = {} }
  for _, p in ipairs(parts) do
    for pid, name in pairs(p.meta.processes) do meta.processes[pid] = meta.processes[pid] or name end
    for pid, threads in pairs(p.meta.threads) do
      meta.threads[pid] = meta.threads[pid] or {}
      for tid, name in pairs(threads) do meta.threads[pid][tid] = meta.threads[pid][tid] or name end
    end
  end
  local lanes, index, lane_cols, n = {}, {}, {}, 0
  local cols = { name = {}, ts = {}, dur = {}, task_type = {}, ph = {}, flow = {} }
  for k, p in ipairs(parts) do
    local number = {} -- the slice's lane -> the joined one
    for i, key in ipairs(p.lane_keys) do
      local id = key[1] .. "\0" .. key[2]
      if not index[id] then
        lanes[#lanes + 1] = lane_name(meta, key[1], key[2])
        index[id] = #lanes
      end
      number[i] = index[id]
    end
    lane_cols[k] = p.lane:lookup(number)
    for key, list in pairs(cols) do list[k] = p[key] end
    n = n + p.n
  end
  local out = { n = n, lane = column.concat(lane_cols), lanes = lanes, source = parts[1].source }
  for key, list in pairs(cols) do out[key] = column.concat(list) end
  for _, p in ipairs(parts) do out.warning = out.warning or p.warning end
  return out
end

-- Slices that end before they start (a negative duration, which the profiler never writes)
-- lose their duration: every measure then leaves them out, as it does a slice without one, where
-- a negative time would have been taken off an operator's total. Counted, the first named.
local function negative_durations(tl)
  local _, _, least = tl.dur:stats()
  if not least or least >= 0 then return end
  local dur, kept, n, first = tl.dur, column.new("integer"), 0, nil
  for i = 1, tl.n do
    local d = dur[i]
    if d and d < 0 then
      n, first, d = n + 1, first or i, nil
    end
    kept:push(d)
  end
  tl.dur = kept
  tl.notes = tl.notes or {}
  tl.notes[#tl.notes + 1] = i18n.t("timeline.negative_durations", n, tostring(tl.name[first] or "?"),
    tl.lanes[tl.lane[first]] or "?", tl.ts[first] and ("%.6f"):format(tl.ts[first] / 1e6) or "?")
end

--- Either format, by the file's first bytes; the slices of an msprof timeline together.
function M.read(path, progress)
  local paths = M.slices(path)
  local tl, err
  if #paths == 1 then
    tl, err = M.read_one(paths[1], progress)
  else
    local parts = {}
    for i, p in ipairs(paths) do
      parts[i], err = M.read_one(p, progress)
      if not parts[i] then return nil, err end
    end
    tl = joined(parts)
  end
  if tl then negative_durations(tl) end
  return tl, err
end

--- One file, either format, by its first bytes.
function M.read_one(path, progress)
  local st = core.fs.stat(path)
  if st and st.type ~= "file" then -- a FIFO or a device would block the probe below
    return nil, i18n.t("input.not_regular_file", path)
  end
  local f = io.open(path, "rb")
  if not f then return nil, i18n.t("input.cannot_open", path) end
  local head = f:read(16) or ""
  f:close()
  -- a .db that is not one is named so by the database reader, not as invalid JSON
  if head:sub(1, 15) == "SQLite format 3" or path:match("%.db$") then return M.read_db(path) end
  return M.read_json(path, progress)
end

return M
