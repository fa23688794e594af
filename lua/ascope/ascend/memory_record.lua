--- memory_record.csv: process-level memory over time, one row per sample of one component.
-- Components seen in the field: APP (the whole process, reserved only), PTA (the PyTorch
-- caching allocator), GE (the CANN / graph-engine workspace pool) and PTA+GE (their sum).
-- The legacy header has no Total Active(MB) column; that value is then missing, never 0.
local csv = require("ascope_core").csv

local M = {}

M.FILE = "memory_record.csv"

M.COLUMNS = {
  ["Component"] = "string",
  ["Timestamp(us)"] = "us",
  ["Total Allocated(MB)"] = "?number",
  ["Total Reserved(MB)"] = "?number",
  ["Total Active(MB)"] = "?number",
  ["Device Type"] = "?string",
}

--- Read one file. Returns {n, component, ts_ns, allocated_mb, reserved_mb, active_mb, device,
-- bad_cells, first_bad} (columns) or nil, message (file and place named).
function M.read(path, progress)
  local r, err = csv.read(path, { columns = M.COLUMNS, bad = "null", progress = progress })
  if not r then return nil, err end
  local c = r.columns
  return {
    n = r.n,
    component = c["Component"],
    ts_ns = c["Timestamp(us)"],
    allocated_mb = c["Total Allocated(MB)"],
    reserved_mb = c["Total Reserved(MB)"],
    active_mb = c["Total Active(MB)"],
    device = c["Device Type"],
    bad_cells = r.bad_cells,
    first_bad = r.first_bad,
  }
end

return M
