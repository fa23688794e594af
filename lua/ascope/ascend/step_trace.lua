--- The profiler's per-step time split: step_trace_time.csv (both headers seen in the field:
-- "Device_id,Step,..." and the older "Step,..."), msprof-analyze's cluster_step_trace_time.csv
-- ("Step,Type,Index,...": a row per rank and step) or the StepTraceTime table of analysis.db
-- (the same columns in snake case). All times us.
--
-- A step is one row of the result. Rows of one step from several devices or ranks become one:
-- the slowest rank's row (a synchronous step lasts as long as its slowest rank; the spread
-- between ranks is not jitter from step to step), with `ranks` how many there were. The
-- cluster file's "stage" rows are dropped: each column there is the maximum over the ranks,
-- taken column by column, so the row is no rank's step.
local core = require "ascope_core"
local csv, db = core.csv, core.db
local i18n = require "ascope.i18n"
local profdb = require "ascope.ascend.profdb"

local M = {}

-- the CSV header, the analysis.db column and the key in a step row
local FIELDS = {
  { "Computing", "computing", "computing_us" },
  { "Communication(Not Overlapped)", "communication_not_overlapped", "comm_not_overlapped_us" },
  { "Overlapped", "overlapped", "overlapped_us" },
  { "Communication", "communication", "comm_us" },
  { "Free", "free", "free_us" },
  { "Stage", "stage", "stage_us" },
  { "Bubble", "bubble", "bubble_us" },
  { "Preparing", "preparing", "preparing_us" },
}

-- A step's time: Computing + Communication(Not Overlapped) + Free, plus Preparing when the file
-- has it. Stage is not used: in a pipeline-parallel run it leaves the bubble out.
local function step_time(s)
  if not (s.computing_us and s.free_us) then return nil end
  return s.computing_us + (s.comm_not_overlapped_us or 0) + s.free_us + (s.preparing_us or 0)
end

local function slower(a, b) return (a.time_us or -math.huge) > (b.time_us or -math.huge) end

-- rows: {step, kind (the cluster file's Type), ...}; the steps in the order first met, one per
-- step id (rows without one are a step each, but a cluster file's: its one step has no id)
local function one_row_a_step(rows)
  local steps, at = {}, {}
  for i, s in ipairs(rows) do
    if not (s.kind and s.kind:lower() == "stage") then
      local key = (s.step ~= "" and s.step) or (s.kind and s.kind ~= "" and "") or i
      local k = at[key]
      if not k then
        s.ranks = 1
        steps[#steps + 1] = s
        at[key] = #steps
      else
        local cur = steps[k]
        s.ranks = cur.ranks + 1
        if slower(s, cur) then steps[k] = s else cur.ranks = s.ranks end
      end
    end
    s.kind = nil
  end
  return steps
end

-- extra: what the CSV reader says of the file (cut, bad_cells, first_bad, ragged_rows, first_ragged)
local function finish(rows, has, source, extra)
  for _, s in ipairs(rows) do s.time_us = step_time(s) end
  local out = { steps = one_row_a_step(rows), has = has, source = source, bad_cells = 0 }
  for k, v in pairs(extra or {}) do out[k] = v end
  return out
end

local function read_csv(path)
  local cols = { ["Step"] = "?string", ["Device_id"] = "?string", ["Type"] = "?string" }
  for _, f in ipairs(FIELDS) do cols[f[1]] = "?number" end
  local r, err = csv.read(path, { columns = cols, bad = "null" })
  if not r then return nil, err end
  local c, p = r.columns, r.present
  if not p["Step"] then return nil, i18n.t("step_trace.no_step_column", path) end
  if not (p["Computing"] and p["Free"]) then
    return nil, i18n.t("step_trace.no_time_columns", path)
  end
  local steps, has = {}, {}
  for _, f in ipairs(FIELDS) do has[f[3]] = p[f[1]] or false end
  for i = 1, r.n do
    local s = { step = c["Step"][i], device = c["Device_id"][i], kind = c["Type"][i] }
    for _, f in ipairs(FIELDS) do s[f[3]] = c[f[1]][i] end
    steps[#steps + 1] = s
  end
  return finish(steps, has, path, { cut = r.cut, bad_cells = r.bad_cells, first_bad = r.first_bad,
                                    ragged_rows = r.ragged_rows, first_ragged = r.first_ragged })
end

-- a cell of column c that holds a number (a text such as 'abc' is none: SQLite would read it as 0)
local function number(c) return ([[(CASE WHEN typeof("%s") IN ('integer', 'real') THEN "%s" END)]]):format(c, c) end

local function read_db(path)
  local h, err = profdb.open(path, { "StepTraceTime" }, function(p) return i18n.t("step_trace.no_table", p) end)
  if not h then return nil, err end
  local info, ierr = h:query("PRAGMA table_info(StepTraceTime)")
  if not info then
    h:close()
    return nil, ierr
  end
  local present = {}
  for i = 1, info.n do present[info.columns.name[i]] = true end
  if not (present.step and present.computing and present.free) then
    h:close()
    return nil, i18n.t("step_trace.no_columns", path)
  end
  -- the times that are no numbers are left empty, counted and the first named, as the CSV's are
  local cols, bad, first = { "step", present.type and "type" or "NULL AS type" }, 0, nil
  for _, f in ipairs(FIELDS) do
    if present[f[2]] then
      cols[#cols + 1] = number(f[2]) .. ' AS "' .. f[2] .. '"'
      local q = h:query(([[SELECT COUNT(*) AS n, MIN(rowid) AS r FROM StepTraceTime
 WHERE "%s" IS NOT NULL AND %s IS NULL]]):format(f[2], number(f[2])))
      local n = q and q.columns.n[1] or 0
      if n > 0 then
        bad = bad + n
        first = first or ("table StepTraceTime, row %d, column %s"):format(q.columns.r[1], f[2])
      end
    end
  end
  local r, qerr = h:query("SELECT " .. table.concat(cols, ", ") .. " FROM StepTraceTime ORDER BY rowid")
  h:close()
  if not r then return nil, qerr end
  local c = r.columns
  local steps, has = {}, {}
  for _, f in ipairs(FIELDS) do has[f[3]] = present[f[2]] or false end
  for i = 1, r.n do
    -- a step without an id is a step of its own, as a CSV row without one is
    local s = { step = c.step[i] ~= nil and tostring(c.step[i]) or "",
                kind = c.type[i] ~= nil and tostring(c.type[i]) or nil }
    for _, f in ipairs(FIELDS) do s[f[3]] = c[f[2]] and c[f[2]][i] end
    steps[#steps + 1] = s
  end
  return finish(steps, has, path, { bad_cells = bad, first_bad = first })
end

local function head(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local h = f:read(16) or ""
  f:close()
  return h
end

local function is_sqlite(h) return h:sub(1, 15) == "SQLite format 3" end

--- Does the file hold a step split? A step_trace_time.csv does; an analysis.db only when it has
-- the StepTraceTime table (MindStudio writes analysis.db with other tables too, and an empty
-- file is an empty database). A file that cannot be read is left to read() to report.
function M.holds_split(path)
  if not path:match("%.db$") then return true end
  local h = head(path)
  if not h or not is_sqlite(h) then return h ~= "" end
  local d = db.open(path)
  if not d then return true end
  local yes = d:has_table("StepTraceTime") -- nil: a schema it cannot read, for read() to report
  d:close()
  return yes ~= false
end

--- Returns {steps = {{step, time_us, computing_us, comm_us, comm_not_overlapped_us, overlapped_us,
-- free_us, stage_us, bubble_us, preparing_us}}, has = {key = bool}, source} or nil, message.
function M.read(path)
  local h = head(path)
  if not h then return nil, i18n.t("input.cannot_open", path) end
  if is_sqlite(h) then return read_db(path) end
  if path:match("%.db$") then return nil, i18n.t("step_trace.not_sqlite", path) end
  return read_csv(path)
end

return M
