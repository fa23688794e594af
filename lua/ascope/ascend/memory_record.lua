--- memory_record.csv: process-level memory over time, one row per sample of one component.
-- Components seen in the field: APP (the whole process, reserved only), PTA (the PyTorch
-- caching allocator), GE (the CANN / graph-engine workspace pool) and PTA+GE (their sum).
-- The legacy header has no Total Active(MB) column; that value is then missing, never 0.
local memory_csv = require "ascope.ascend.memory_csv"

local M = {}

M.FILE = "memory_record.csv"

M.FIELDS = {
  { "Component", "component", "string" },
  { "Timestamp(us)", "ts_ns", "us" },
  { "Total Allocated(MB)", "allocated_mb", "?number" },
  { "Total Reserved(MB)", "reserved_mb", "?number" },
  { "Total Active(MB)", "active_mb", "?number" },
  { "Device Type", "device", "?string" },
}

--- Read one file. Returns {n, component, ts_ns, allocated_mb, reserved_mb, active_mb, device,
-- bad_cells, first_bad} (columns) or nil, message (file and place named).
function M.read(path, progress) return memory_csv.read_fields(path, M.FIELDS, progress) end

return M
