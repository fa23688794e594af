--- The kernels of a profiler database (ascend_pytorch_profiler_*.db, written when the profiler
-- exports `db` instead of or beside text) as kernel_csv.read's shape, so that `ascope opjitter`
-- reads a database-only rank like a text one: {n, name, type, duration (us), device, aiv, path}.
--
-- kernel_details.csv lists a rank's compute tasks and its HCCL operators in start order: the
-- compute tasks are COMPUTE_TASK_INFO joined with TASK (name, opType, the task's start and end,
-- deviceId), the HCCL operators COMMUNICATION_OP (opName, opType, start and end; no device
-- column: the rank's folder gives the card). On a real run the 187 compute tasks of
-- COMPUTE_TASK_INFO are the text export's 187 rows of Accelerator Core N/A, its 4 allreduces the
-- 4 rows of HCCL. The database keeps no aiv_* columns (the PMU's): they come back empty. A
-- COMPUTE_TASK_INFO without its key may name a task twice: the task is one row all the same.
local core = require "ascope_core"
local column = core.column
local i18n = require "ascope.i18n"
local profdb = require "ascope.ascend.profdb"
local kernel_csv = require "ascope.ascend.kernel_csv"

local M = {}

local W = profdb.whole

local COMPUTE = ([[
SELECT n.value AS name, ty.value AS type, (%s - %s) / 1000.0 AS duration, CAST(%s AS TEXT) AS device,
       %s AS start, t.rowid AS k
  FROM TASK t
  JOIN (SELECT globalTaskId, MIN(name) AS name, MIN(opType) AS opType FROM COMPUTE_TASK_INFO GROUP BY globalTaskId) c
    ON c.globalTaskId = t.globalTaskId
  LEFT JOIN S n ON n.id = c.name LEFT JOIN S ty ON ty.id = c.opType]]):format(W("t.endNs"), W("t.startNs"),
  W("t.deviceId"), W("t.startNs"))
local COMMUNICATION = ([[
SELECT n.value, ty.value, (%s - %s) / 1000.0, NULL, %s, -1
  FROM COMMUNICATION_OP o LEFT JOIN S n ON n.id = o.opName LEFT JOIN S ty ON ty.id = o.opType]]):format(
  W("o.endNs"), W("o.startNs"), W("o.startNs"))

--- Read one database; aiv_columns: the aiv columns asked for (they come back empty). Returns the
-- shape of kernel_csv.read, or nil, message.
function M.read(path, aiv_columns)
  local h, err = profdb.open(path, { "TASK", "COMPUTE_TASK_INFO", "STRING_IDS" })
  if not h then return nil, err end
  local comm, cerr = h:has_table("COMMUNICATION_OP")
  if comm == nil then
    h:close()
    return nil, cerr
  end
  -- in start order (a start that is no whole number last), ties in the tables' order
  local sql = profdb.STRINGS .. "SELECT name, type, duration, device FROM (\n" .. COMPUTE
    .. (comm and "\nUNION ALL\n" .. COMMUNICATION or "") .. ")\n ORDER BY start IS NULL, start, k"
  local r, qerr = h:query(sql)
  -- names and types STRING_IDS lacks: those kernels would all be one type "?" without a word
  local notes = {}
  for _, col in ipairs(r and { "name", "opType" } or {}) do
    local n, uerr = profdb.unnamed(h, "COMPUTE_TASK_INFO", col)
    if not n then
      h:close()
      return nil, uerr
    end
    if n > 0 then notes[#notes + 1] = i18n.t("input.db_unnamed", n, "COMPUTE_TASK_INFO", col) end
  end
  h:close()
  if not r then return nil, qerr end
  local c = r.columns
  for name, kind in pairs({ name = "string", type = "string", duration = "number", device = "string" }) do
    if c[name]:kind() ~= kind then c[name] = column.fill(kind, nil, r.n) end
  end
  -- the kernels whose start or end is no whole number, or none: their duration is left empty
  local timed = c.duration:stats()
  local bad, first = r.n - timed, nil
  for i = 1, bad > 0 and r.n or 0 do
    if c.duration[i] == nil then
      first = ("%s (kernel %d, in start order)"):format(tostring(c.name[i] or "?"), i)
      break
    end
  end
  local aiv, present = {}, {}
  for _, a in ipairs(aiv_columns or {}) do
    aiv[a], present[a] = column.fill("number", nil, r.n), false
  end
  return { n = r.n, name = c.name, type = kernel_csv.type_key(c.type, c.name), duration = c.duration,
           device = c.device, aiv = aiv,
           aiv_present = present, bad_cells = bad, first_bad = first, ragged_rows = 0, notes = notes, path = path }
end

return M
