--- kernel_details.csv ("Name, Type, Duration(us), aiv_*") and op_summary_*.csv ("Op Name,
-- OP Type, Task Duration(us), ...") as one shape: {n, name, type, duration (us, number; nil
-- for a missing or non-numeric cell), device, aiv = {column -> number column}}.
local core = require "ascope_core"
local csv, column = core.csv, core.column
local i18n = require "ascope.i18n"

local M = {}

local VARIANTS = {
  { name = "Name", type = "Type", duration = "Duration(us)" },
  { name = "Op Name", type = "OP Type", duration = "Task Duration(us)" },
}

local function header(path)
  local r, err = csv.open(path)
  if not r then return nil, err end
  local h, _, rerr = r:next()
  r:close()
  if rerr then return nil, rerr end -- a stray quote is not an empty file
  if not h then return nil, i18n.t("input.no_header", path) end
  local set = {}
  for _, c in ipairs(h) do set[(c:gsub("^\239\187\191", ""))] = true end
  return set
end

--- Read one file; aiv_columns: the aiv columns wanted (those missing come back empty).
function M.read(path, aiv_columns)
  local have, err = header(path)
  if not have then return nil, err end
  local v
  for _, cand in ipairs(VARIANTS) do
    if have[cand.type] and have[cand.duration] then
      v = cand
      break
    end
  end
  if not v then
    return nil, i18n.t("kernel_csv.missing_columns", path)
  end
  local cols = { [v.type] = "string", [v.duration] = "number", [v.name] = "?string", ["Device_id"] = "?string" }
  for _, c in ipairs(aiv_columns or {}) do cols[c] = "?number" end
  local r, rerr = csv.read(path, { columns = cols, bad = "null" })
  if not r then return nil, rerr end
  local aiv, present = {}, {}
  for _, c in ipairs(aiv_columns or {}) do
    aiv[c] = r.columns[c]
    present[c] = r.present[c]
  end
  -- older CANN writes "N/A" as every Type: the operator's name is the type then
  local key = r.columns[v.type]
  if r.present[v.name] then
    local pair_ids, pairs_ = column.group(r.columns[v.type], r.columns[v.name])
    local keys, fallback = {}, false
    for i, p in ipairs(pairs_) do
      local t = p[1]
      if t == nil or t == "" or t == "N/A" or t == "NA" then
        keys[i], fallback = p[2] or "?", true
      else
        keys[i] = t
      end
    end
    if fallback then key = pair_ids:lookup(keys) end
  end
  return { n = r.n, name = r.columns[v.name], type = key, duration = r.columns[v.duration],
           device = r.columns["Device_id"], aiv = aiv, aiv_present = present, bad_cells = r.bad_cells,
           first_bad = r.first_bad, cut = r.cut, path = path }
end

return M
