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

-- the kind each column must have; a column all null has no kind of its own in SQLite
local function kinds(r, want)
  local c = r.columns
  for name, kind in pairs(want) do
    if c[name]:kind() ~= kind then c[name] = column.fill(kind, nil, r.n) end
  end
  return c
end

local W = profdb.whole

-- OP_MEMORY's columns that hold numbers (bytes, ns)
local MEM_NUMBERS = { "size", "allocationTime", "releaseTime", "duration", "allocationTotalAllocated",
                      "allocationTotalReserved", "allocationTotalActive", "releaseTotalAllocated", "releaseTotalReserved" }

local MEM_SQL = profdb.STRINGS .. ([[
SELECT CASE WHEN o.streamPtr IS NULL THEN 'cann::' ELSE '' END || COALESCE(n.value, '') AS name,
       %s / 1024.0 AS size_kb, %s AS alloc_ns, %s AS release_ns, %s AS dur_ns,
       %s / 1048576.0 AS allocated_mb, %s / 1048576.0 AS reserved_mb, %s / 1048576.0 AS active_mb,
       %s / 1048576.0 AS rel_allocated_mb, %s / 1048576.0 AS rel_reserved_mb, 'NPU:' || o.deviceId AS device
  FROM OP_MEMORY o LEFT JOIN S n ON n.id = o.name ORDER BY o.rowid]]):format(W("o.size"), W("o.allocationTime"),
  W("o.releaseTime"), W("o.duration"), W("o.allocationTotalAllocated"), W("o.allocationTotalReserved"),
  W("o.allocationTotalActive"), W("o.releaseTotalAllocated"), W("o.releaseTotalReserved"))

-- query sql on the open database h, and count the cells of tbl's numbers that are none (left
-- empty, as the CSV reader leaves them); closes h. Returns the result with bad_cells and
-- first_bad set, or nil, message.
local function read_table(h, sql, tbl, numbers, named)
  local r, err = h:query(sql)
  local bad, first, unnamed, uerr
  if r then bad, first = profdb.not_whole(h, tbl, numbers) end
  if bad and named then unnamed, uerr = profdb.unnamed(h, tbl, named) end
  h:close()
  if not r then return nil, err end
  if not bad then return nil, first end
  if named and not unnamed then return nil, uerr end
  r.bad_cells, r.first_bad = bad, first
  if (unnamed or 0) > 0 then r.note = i18n.t("input.db_unnamed", unnamed, tbl, named) end
  return r
end

--- OP_MEMORY as memory_csv.read's columns: {n, name, size_kb, alloc_ns, release_ns, dur_ns,
-- allocated_mb, reserved_mb, active_mb, rel_allocated_mb, rel_reserved_mb, device, bad_cells,
-- first_bad} or nil, message.
function M.mem(path)
  local h, err = profdb.open(path, { "OP_MEMORY", "STRING_IDS" })
  if not h then return nil, err end
  local r, qerr = read_table(h, MEM_SQL, "OP_MEMORY", MEM_NUMBERS, "name")
  if not r then return nil, qerr end
  local c = kinds(r, { name = "string", size_kb = "number", alloc_ns = "integer", release_ns = "integer",
                       dur_ns = "integer", allocated_mb = "number", reserved_mb = "number", active_mb = "number",
                       rel_allocated_mb = "number", rel_reserved_mb = "number", device = "string" })
  return { n = r.n, name = c.name, size_kb = c.size_kb, alloc_ns = c.alloc_ns, release_ns = c.release_ns,
           dur_ns = c.dur_ns, allocated_mb = c.allocated_mb, reserved_mb = c.reserved_mb, active_mb = c.active_mb,
           rel_allocated_mb = c.rel_allocated_mb, rel_reserved_mb = c.rel_reserved_mb, device = c.device,
           bad_cells = r.bad_cells, first_bad = r.first_bad, ragged_rows = 0, note = r.note }
end

-- A chain is the frames of one whole-number PYTORCH_CALLCHAINS id; k numbers the chains in id
-- order, the same in every query (an id of another kind, NULL or 2.5, is no chain of any). The
-- least 64-bit integer is left out too: the C join reads it as an absent id.
local NO_ID = "-9223372036854775808"
local function is_chain(col) return ("typeof(%s) = 'integer' AND %s <> %s"):format(col, col, NO_ID) end
local CHAINS = "SELECT DISTINCT id FROM PYTORCH_CALLCHAINS WHERE " .. is_chain("id")

-- the operators with a call stack, each with the number k of its chain (%%s: OPS or nothing)
local API_SQL = profdb.STRINGS .. ([[
SELECT COALESCE(n.value, '') AS name, %s AS ts, %s - %s AS dur, ch.k AS chain
  FROM PYTORCH_API p
  JOIN (SELECT id, DENSE_RANK() OVER (ORDER BY id) AS k FROM (%s)) ch ON ch.id = %s
  LEFT JOIN S n ON n.id = p.name
 WHERE %s IS NOT NULL%%s
 ORDER BY 2, p.rowid]]):format(W("p.startNs"), W("p.endNs"), W("p.startNs"), CHAINS, W("p.callchainId"),
  W("p.startNs"))
-- PYTORCH_API holds operators and the profiler's queue, trace and mstx rows; the text export
-- takes call stacks from the cpu_op events only, which are the rows of type 'op' as
-- ENUM_API_TYPE names it (50001 in msprof's databases). A database without that table cannot
-- tell them apart: every row is taken.
local OPS = "\n   AND p.type IN (SELECT id FROM ENUM_API_TYPE WHERE name = 'op')"

-- every chain's frames as string ids with their depth, in the table's order: a profiler writes
-- each chain's rows together, innermost (stackDepth 0) first, chains in id order, and a sort of
-- millions of rows would cost more than the rest of the read. When the rows are in another
-- order, ORDERED_FRAMES_SQL gives them sorted.
-- A depth that is no whole number sorts after every other: its frame is the chain's outermost.
local DEPTH = ("COALESCE(%s, 9223372036854775807)"):format(W("c.stackDepth"))
local FRAMES_SQL = ([[
SELECT c.id AS id, %s AS frame, %s AS depth
  FROM PYTORCH_CALLCHAINS c
 WHERE %s]]):format(W("c.stack"), DEPTH, is_chain("c.id"))
local ORDERED_FRAMES_SQL = ([[
SELECT c.id AS id, %s AS frame
  FROM PYTORCH_CALLCHAINS c
 WHERE %s
 ORDER BY c.id, %s]]):format(W("c.stack"), is_chain("c.id"), DEPTH)
-- the texts of the frames, once each, as text whatever their type (a value of another type in a
-- table without TEXT affinity would give the column its kind). Frame id -2^63 is no id to the
-- columns, as a chain's.
local FRAME_TEXTS_SQL = profdb.STRINGS .. ([[
SELECT id, CAST(value AS TEXT) AS value
  FROM S WHERE id IN (SELECT %s FROM PYTORCH_CALLCHAINS c WHERE %s) AND id <> %s]]):format(W("c.stack"),
  is_chain("c.id"), NO_ID)

--- How many bytes of call stacks a database of size bytes may expand to: its chains share
-- frames (STRING_IDS holds each once), and each chain is written out whole. 200k operators
-- with 20-frame stacks of the real sample's frames (a 90 MB file) take about 4 times the file;
-- one long frame in every chain would take the frame's length times the chains.
function M.stack_budget(size) return 256 * 1048576 + 8 * size end

--- The operators (type 'op') that carry a Python call stack, as trace.call_stacks's columns: {n, name, ts,
-- dur (ns), stack} (frames joined by ";\r\n", innermost first, as trace_view.json writes them),
-- or nil, message. A database without PYTORCH_API or PYTORCH_CALLCHAINS (the profiler ran
-- without with_stack), or whose stacks would take more than stack_budget, gives no operators,
-- and says why in warning; operators whose times are no numbers are left out, and note says
-- how many.
function M.call_stacks(path)
  local none = column.fill("integer", nil, 0)
  local function without(warning)
    return { n = 0, name = column.fill("string", nil, 0), ts = none, dur = none, stack = column.fill("string", nil, 0),
             warning = warning }
  end
  local h, err = profdb.open(path, {})
  if not h then return nil, err end
  local lacks, serr = profdb.first_missing(h, { "PYTORCH_API", "PYTORCH_CALLCHAINS", "STRING_IDS" })
  if lacks ~= nil then
    h:close()
    if lacks == false then return nil, serr end
    return without(i18n.t("memory.db_no_stacks", lacks))
  end
  local frames, ferr = h:query(FRAMES_SQL)
  if not frames then
    h:close()
    return nil, ferr
  end
  local fc = kinds(frames, { id = "integer", frame = "integer", depth = "integer" })
  local named, nerr = h:query(FRAME_TEXTS_SQL)
  if not named then
    h:close()
    return nil, nerr
  end
  local text = {}
  for i = 1, named.n do text[named.columns.id[i]] = named.columns.value[i] end
  named = nil -- luacheck: ignore 311 (garbage once the texts are in the table)
  -- the frames' texts; a column that names none (no chain, or no frame STRING_IDS holds) has no
  -- kind of its own, and is a string column all null
  local function texts(ids)
    local t = ids:lookup(text)
    if t:kind() ~= "string" then t = column.fill("string", nil, #ids) end
    return t
  end
  local st = core.fs.stat(path)
  local budget = M.stack_budget(st and st.size or 0)
  -- the chains in id order, the k-th numbered k as API_SQL's DENSE_RANK numbers them, joined in
  -- C straight into the string table: no Lua string is made of a stack. Without stacks, `why`
  -- says why ("order", "too big"); with them it is their keys.
  local stacks, why, unnamed = core.stacktree.join(fc.id, texts(fc.frame), budget, fc.depth)
  if not stacks and why == "order" then
    frames, ferr = h:query(ORDERED_FRAMES_SQL)
    if not frames then
      h:close()
      return nil, ferr
    end
    fc = kinds(frames, { id = "integer", frame = "integer" })
    stacks, why, unnamed = core.stacktree.join(fc.id, texts(fc.frame), budget) -- luacheck: ignore 311
  end
  -- rows without a frame id are empty frames too, said apart from the ids STRING_IDS lacks
  local frameless = #fc.frame - fc.frame:stats()
  frames, fc = nil, nil -- luacheck: ignore 311 (the frames' columns are garbage once the stacks are built)
  if not stacks then
    h:close()
    return without(i18n.t("memory.db_stacks_too_big", budget / 1048576))
  end
  local typed = h:has_table("ENUM_API_TYPE")
  local r, qerr = read_table(h, API_SQL:format(typed and OPS or ""), "PYTORCH_API", { "startNs", "endNs" })
  if not r then return nil, qerr end
  local c = kinds(r, { name = "string", ts = "integer", dur = "integer", chain = "integer" })
  local out = { n = r.n, name = c.name, ts = c.ts, dur = c.dur, stack = stacks:take(c.chain) }
  local notes = {}
  if r.bad_cells > 0 then notes[#notes + 1] = i18n.t("memory.db_bad_times", r.bad_cells, r.first_bad) end
  if frameless > 0 then notes[#notes + 1] = i18n.t("memory.db_frameless", frameless) end
  if unnamed > frameless then
    notes[#notes + 1] = i18n.t("input.db_unnamed", unnamed - frameless, "PYTORCH_CALLCHAINS", "stack")
  end
  out.note = #notes > 0 and table.concat(notes, "; ") or nil
  return out
end

local RECORD_NUMBERS = { "timestamp", "totalAllocated", "totalReserved", "totalActive" }

local RECORD_SQL = profdb.STRINGS .. ([[
SELECT COALESCE(n.value, '') AS component, %s AS ts_ns, %s / 1048576.0 AS allocated_mb,
       %s / 1048576.0 AS reserved_mb, %s / 1048576.0 AS active_mb, 'NPU:' || m.deviceId AS device
  FROM MEMORY_RECORD m LEFT JOIN S n ON n.id = m.component ORDER BY m.rowid]]):format(W("m.timestamp"),
  W("m.totalAllocated"), W("m.totalReserved"), W("m.totalActive"))

--- MEMORY_RECORD as memory_record.read's columns: {n, component, ts_ns, allocated_mb,
-- reserved_mb, active_mb, device, bad_cells, first_bad}; false when the database has no
-- MEMORY_RECORD (no process memory was recorded: as a rank without memory_record.csv); or nil,
-- message.
function M.record(path)
  local h, err = profdb.open(path, { "STRING_IDS" })
  if not h then return nil, err end
  local lacks, serr = profdb.first_missing(h, { "MEMORY_RECORD" })
  if lacks ~= nil then
    h:close()
    if lacks == false then return nil, serr end
    return false
  end
  local r, qerr = read_table(h, RECORD_SQL, "MEMORY_RECORD", RECORD_NUMBERS)
  if not r then return nil, qerr end
  local c = kinds(r, { component = "string", ts_ns = "integer", allocated_mb = "number", reserved_mb = "number",
                       active_mb = "number", device = "string" })
  return { n = r.n, component = c.component, ts_ns = c.ts_ns, allocated_mb = c.allocated_mb,
           reserved_mb = c.reserved_mb, active_mb = c.active_mb, device = c.device, bad_cells = r.bad_cells,
           first_bad = r.first_bad, ragged_rows = 0 }
end

return M
