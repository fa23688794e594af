--- The memory inputs of a profiler database (ascend_pytorch_profiler_*.db, written when the
-- profiler exports `db` instead of or beside text), as the columns the CSV and trace readers
-- give, so that `ascope memory` reads a database-only rank like a text one:
--   OP_MEMORY          -> operator_memory.csv's columns (memory_csv.read)
--   PYTORCH_API + PYTORCH_CALLCHAINS -> the call stacks of trace_view.json (trace.call_stacks)
--   MEMORY_RECORD      -> memory_record.csv's columns (memory_record.read)
-- The database holds bytes and ns where the CSVs hold KB, MB and us: 19268096 B is the CSV's
-- 18816.5 KB, 1000729600 B its 954.3701171875 MB. Names go through STRING_IDS; a device is
-- "NPU:<deviceId>" as the CSVs' Device Type. The CANN workspace rows of OP_MEMORY are the ones
-- without a stream pointer, and their names lack the "cann::" operator_memory.csv puts before
-- them (which rules/memory.lua's pools go by): it is put back (a real run: the 57 rows without
-- a streamPtr are the text export's 57 cann:: rows). The process-wide APP rows of
-- memory_record.csv have no counterpart in MEMORY_RECORD.
local core = require "ascope_core"
local column = core.column
local i18n = require "ascope.i18n"
local profdb = require "ascope.ascend.profdb"

local M = {}

--- Is path a database (by its name, as discovery found it)?
function M.is_db(path) return path ~= nil and path:match("%.db$") ~= nil end

-- the kind each column must have; a column all null has no kind of its own in SQLite
local function kinds(r, want)
  local c = r.columns
  for name, kind in pairs(want) do
    if c[name]:kind() ~= kind then c[name] = column.fill(kind, nil, r.n) end
  end
  return c
end

local MEM_SQL = [[
SELECT CASE WHEN o.streamPtr IS NULL THEN 'cann::' ELSE '' END || COALESCE(n.value, '') AS name,
       o.size / 1024.0 AS size_kb, o.allocationTime AS alloc_ns,
       o.releaseTime AS release_ns, o.duration AS dur_ns,
       o.allocationTotalAllocated / 1048576.0 AS allocated_mb, o.allocationTotalReserved / 1048576.0 AS reserved_mb,
       o.allocationTotalActive / 1048576.0 AS active_mb, o.releaseTotalAllocated / 1048576.0 AS rel_allocated_mb,
       o.releaseTotalReserved / 1048576.0 AS rel_reserved_mb, 'NPU:' || o.deviceId AS device
  FROM OP_MEMORY o LEFT JOIN STRING_IDS n ON n.id = o.name ORDER BY o.rowid]]

--- OP_MEMORY as memory_csv.read's columns: {n, name, size_kb, alloc_ns, release_ns, dur_ns,
-- allocated_mb, reserved_mb, active_mb, rel_allocated_mb, rel_reserved_mb, device, bad_cells = 0} or nil, message.
function M.mem(path)
  local r, err = profdb.query(path, { "OP_MEMORY", "STRING_IDS" }, MEM_SQL)
  if not r then return nil, err end
  local c = kinds(r, { name = "string", size_kb = "number", alloc_ns = "integer", release_ns = "integer",
                       dur_ns = "integer", allocated_mb = "number", reserved_mb = "number", active_mb = "number",
                       rel_allocated_mb = "number", rel_reserved_mb = "number", device = "string" })
  return { n = r.n, name = c.name, size_kb = c.size_kb, alloc_ns = c.alloc_ns, release_ns = c.release_ns,
           dur_ns = c.dur_ns, allocated_mb = c.allocated_mb, reserved_mb = c.reserved_mb, active_mb = c.active_mb,
           rel_allocated_mb = c.rel_allocated_mb, rel_reserved_mb = c.rel_reserved_mb, device = c.device, bad_cells = 0, ragged_rows = 0 }
end

-- the operators with a call stack, each with the rank k of its chain among the chains (by id);
-- startNs and endNs are TEXT in the database
local API_SQL = [[
SELECT COALESCE(n.value, '') AS name, CAST(p.startNs AS INTEGER) AS ts,
       CAST(p.endNs AS INTEGER) - CAST(p.startNs AS INTEGER) AS dur, ch.k AS chain
  FROM PYTORCH_API p
  JOIN (SELECT id, DENSE_RANK() OVER (ORDER BY id) AS k FROM (SELECT DISTINCT id FROM PYTORCH_CALLCHAINS)) ch
    ON ch.id = p.callchainId
  LEFT JOIN STRING_IDS n ON n.id = p.name
 ORDER BY CAST(p.startNs AS INTEGER), p.rowid]]

-- every chain's frames, innermost (stackDepth 0) first, chains by id
local FRAMES_SQL = [[
SELECT c.id AS id, COALESCE(s.value, '') AS frame
  FROM PYTORCH_CALLCHAINS c LEFT JOIN STRING_IDS s ON s.id = c.stack ORDER BY c.id, c.stackDepth]]

--- The operators that carry a Python call stack, as trace.call_stacks's columns: {n, name, ts,
-- dur (ns), stack} (frames joined by ";\r\n", innermost first, as trace_view.json writes them),
-- or nil, message. A database without PYTORCH_CALLCHAINS (the profiler ran without
-- with_stack) gives no operators, and says so in warning.
function M.call_stacks(path)
  local h, err = profdb.open(path, {})
  if not h then return nil, err end
  local lacks, serr = profdb.first_missing(h, { "PYTORCH_API", "PYTORCH_CALLCHAINS", "STRING_IDS" })
  h:close()
  if lacks == false then return nil, serr end
  if lacks then
    local none = column.fill("integer", nil, 0)
    return { n = 0, name = column.fill("string", nil, 0), ts = none, dur = none, stack = column.fill("string", nil, 0),
             warning = i18n.t("memory.db_no_stacks") }
  end
  local frames, ferr = profdb.query(path, {}, FRAMES_SQL)
  if not frames then return nil, ferr end
  local stacks, parts, last = {}, {}, nil
  local ids, texts = frames.columns.id, frames.columns.frame
  for i = 1, frames.n do
    local id = ids[i]
    if id ~= last and last ~= nil then
      stacks[#stacks + 1] = table.concat(parts, ";\r\n")
      parts = {}
    end
    last = id
    parts[#parts + 1] = texts[i]
  end
  if last ~= nil then stacks[#stacks + 1] = table.concat(parts, ";\r\n") end
  local r, qerr = profdb.query(path, {}, API_SQL)
  if not r then return nil, qerr end
  local c = kinds(r, { name = "string", ts = "integer", dur = "integer", chain = "integer" })
  return { n = r.n, name = c.name, ts = c.ts, dur = c.dur, stack = c.chain:lookup(stacks) }
end

local RECORD_SQL = [[
SELECT COALESCE(n.value, '') AS component, m.timestamp AS ts_ns, m.totalAllocated / 1048576.0 AS allocated_mb,
       m.totalReserved / 1048576.0 AS reserved_mb, m.totalActive / 1048576.0 AS active_mb,
       'NPU:' || m.deviceId AS device
  FROM MEMORY_RECORD m LEFT JOIN STRING_IDS n ON n.id = m.component ORDER BY m.rowid]]

--- MEMORY_RECORD as memory_record.read's columns: {n, component, ts_ns, allocated_mb,
-- reserved_mb, active_mb, device, bad_cells = 0} or nil, message.
function M.record(path)
  local r, err = profdb.query(path, { "MEMORY_RECORD", "STRING_IDS" }, RECORD_SQL)
  if not r then return nil, err end
  local c = kinds(r, { component = "string", ts_ns = "integer", allocated_mb = "number", reserved_mb = "number",
                       active_mb = "number", device = "string" })
  return { n = r.n, component = c.component, ts_ns = c.ts_ns, allocated_mb = c.allocated_mb,
           reserved_mb = c.reserved_mb, active_mb = c.active_mb, device = c.device, bad_cells = 0, ragged_rows = 0 }
end

return M
