--- step_trace_time.csv: one row per step with its time split (us). Both headers seen in the
-- field are read: "Device_id,Step,..." and the older "Step,...".
local csv = require("ascope_core").csv

local M = {}

local COLUMNS = {
  ["Step"] = "?string", ["Device_id"] = "?string", ["Computing"] = "?number",
  ["Communication(Not Overlapped)"] = "?number", ["Overlapped"] = "?number", ["Communication"] = "?number",
  ["Free"] = "?number", ["Stage"] = "?number", ["Bubble"] = "?number",
}

--- Returns {steps = {{step, time_us, comm_us, comm_not_overlapped_us, overlapped_us, ...}}, has = {...}}
-- or nil, message. A step's time is Stage when present, else Computing + Communication(Not
-- Overlapped) + Free.
function M.read(path)
  local r, err = csv.read(path, { columns = COLUMNS, bad = "null" })
  if not r then return nil, err end
  local c, p = r.columns, r.present
  if not p["Step"] then return nil, path .. ': missing column "Step" in the header' end
  if not p["Stage"] and not (p["Computing"] and p["Free"]) then
    return nil, path .. ': neither "Stage" nor "Computing" and "Free" columns: no step time'
  end
  local steps = {}
  for i = 1, r.n do
    local stage = c["Stage"][i]
    if not stage and c["Computing"][i] and c["Free"][i] then
      stage = c["Computing"][i] + (c["Communication(Not Overlapped)"][i] or 0) + c["Free"][i]
    end
    steps[#steps + 1] = {
      step = c["Step"][i], device = c["Device_id"][i], time_us = stage,
      computing_us = c["Computing"][i], comm_us = c["Communication"][i],
      comm_not_overlapped_us = c["Communication(Not Overlapped)"][i], overlapped_us = c["Overlapped"][i],
      free_us = c["Free"][i], bubble_us = c["Bubble"][i],
    }
  end
  return { steps = steps, has = p, source = path, cut = r.cut, bad_cells = r.bad_cells, first_bad = r.first_bad }
end

return M
