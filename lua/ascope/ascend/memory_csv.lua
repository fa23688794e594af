--- operator_memory.csv: one row per operator-level allocation (Size > 0) or release (< 0).
-- Both headers seen in the field are read: the current 15 columns and the legacy 10 (without
-- the Active columns). Times are exact int64 ns; a value with a trailing tab or quotes is fine.
local csv = require("ascope_core").csv

local M = {}

M.COLUMNS = {
  ["Name"] = "string",
  ["Size(KB)"] = "number",
  ["Allocation Time(us)"] = "us",
  ["Release Time(us)"] = "?us",
  ["Duration(us)"] = "?us",
  ["Allocation Total Allocated(MB)"] = "?number",
  ["Allocation Total Reserved(MB)"] = "?number",
  ["Allocation Total Active(MB)"] = "?number",
  ["Device Type"] = "?string",
}

--- Read one file. Returns a table of columns
--   {n, name, size_kb, alloc_ns, release_ns, dur_ns, allocated_mb, reserved_mb, active_mb,
--    device, present = {header -> bool}, bad_cells, first_bad}
-- or nil, message (file and place named).
function M.read(path, progress)
  local r, err = csv.read(path, { columns = M.COLUMNS, bad = "null", progress = progress })
  if not r then return nil, err end
  local c = r.columns
  return {
    n = r.n,
    name = c["Name"],
    size_kb = c["Size(KB)"],
    alloc_ns = c["Allocation Time(us)"],
    release_ns = c["Release Time(us)"],
    dur_ns = c["Duration(us)"],
    allocated_mb = c["Allocation Total Allocated(MB)"],
    reserved_mb = c["Allocation Total Reserved(MB)"],
    active_mb = c["Allocation Total Active(MB)"],
    device = c["Device Type"],
    present = r.present,
    bad_cells = r.bad_cells,
    first_bad = r.first_bad,
    cut = r.cut, -- the last line had no line end
  }
end

return M
