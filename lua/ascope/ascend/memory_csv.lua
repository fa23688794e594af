--- operator_memory.csv: one row per operator-level allocation (Size > 0) or release (< 0).
-- Both headers seen in the field are read: the current 15 columns and the legacy 10 (without
-- the Active columns). Times are exact int64 ns; a value with a trailing tab or quotes is fine.
local csv = require("ascope_core").csv

local M = {}

--- Read a CSV file into named columns. fields: {{header, key, type}, ...} (types as csv.read
-- takes them; "?type" for a column a header may lack). Returns {n, <key> = column, ...,
-- present = {header -> bool}, bad_cells, first_bad, ragged_rows, first_ragged} or nil, message (file and place named).
-- Cells that are not numbers are left empty and counted. beside: a function run while the file
-- is read on a thread of its own (csv.read's; no progress then).
function M.read_fields(path, fields, progress, beside)
  local columns = {}
  for _, f in ipairs(fields) do columns[f[1]] = f[3] end
  local r, err = csv.read(path, { columns = columns, bad = "null", progress = progress, beside = beside })
  if not r then return nil, err end
  local out = { n = r.n, present = r.present, bad_cells = r.bad_cells, first_bad = r.first_bad,
                ragged_rows = r.ragged_rows, first_ragged = r.first_ragged,
                cut = r.cut, cut_dropped = r.cut_dropped } -- cut: the last line had no line end
  for _, f in ipairs(fields) do out[f[2]] = r.columns[f[1]] end
  return out
end

-- The columns read. Which of them a file must have is said once, by the columns_present check
-- of rules/memory.lua (M.required); the others may be missing (legacy headers lack some).
M.FIELDS = {
  { "Name", "name", "string" },
  { "Size(KB)", "size_kb", "number" },
  { "Allocation Time(us)", "alloc_ns", "us" },
  { "Release Time(us)", "release_ns", "us" },
  { "Duration(us)", "dur_ns", "us" },
  { "Allocation Total Allocated(MB)", "allocated_mb", "number" },
  { "Allocation Total Reserved(MB)", "reserved_mb", "number" },
  { "Allocation Total Active(MB)", "active_mb", "number" },
  -- the totals the allocator gave at the release: between two listed allocations the process
  -- may have allocated more than either saw (rows not listed), and a release shows it
  { "Release Total Allocated(MB)", "rel_allocated_mb", "number" },
  { "Release Total Reserved(MB)", "rel_reserved_mb", "number" },
  { "Device Type", "device", "string" },
}

M.FILE = "operator_memory.csv"

--- The headers operator_memory.csv must have, from memory rules (default: the bundled ones):
-- the columns of the columns_present input check on the operator_memory input, so the check and
-- this reader require the same columns.
function M.required(rules)
  if not rules then rules = assert(require("ascope.rules").load("memory")) end
  local out = {}
  for _, c in ipairs(rules.input or {}) do
    if c.check == "columns_present" and c.input == "operator_memory" then
      for _, col in ipairs(c.columns or {}) do out[#out + 1] = col end
    end
  end
  return out
end

--- Read one file. Returns a table of columns
--   {n, name, size_kb, alloc_ns, release_ns, dur_ns, allocated_mb, reserved_mb, active_mb,
--    rel_allocated_mb, rel_reserved_mb, device, present = {header -> bool}, bad_cells, first_bad}
-- or nil, message (file and place named). required: the headers it must have (M.required()).
-- beside: as read_fields'.
function M.read(path, progress, required, beside)
  local need = {}
  for _, h in ipairs(required or M.required()) do need[h] = true end
  local fields = {}
  for i, f in ipairs(M.FIELDS) do fields[i] = { f[1], f[2], (need[f[1]] and "" or "?") .. f[3] } end
  return M.read_fields(path, fields, progress, beside)
end

return M
