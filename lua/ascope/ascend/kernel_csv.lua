--- kernel_details.csv ("Name, Type, Duration(us), aiv_*") and op_summary_*.csv ("Op Name,
-- OP Type, Task Duration(us), ...") as one shape: {n, name, type, duration (us, number; nil
-- for a missing or non-numeric cell), device, aiv = {column -> number column}}.
local core = require "ascope_core"
local csv, column = core.csv, core.column
local tr = require("ascope.i18n").t

local M = {}

local VARIANTS = {
  { name = "Name", type = "Type", duration = "Duration(us)" },
  { name = "Op Name", type = "OP Type", duration = "Task Duration(us)" },
}

-- the Type cells that name no type
local NO_TYPE = { [""] = true, ["N/A"] = true, NA = true }

-- Does a type column hold a missing or NO_TYPE cell? Asked of the distinct types alone: with a
-- type an operator, pairing every type with its names cost a Lua table a row.
local function has_unnamed_type(types)
  local _, firsts = column.group(types, nil, { ids = false, rows = false, keys = "first" })
  local values = types:take(firsts):totable()
  for g = 1, #firsts do
    if values[g] == nil or NO_TYPE[values[g]] then return true end
  end
  return false
end

--- The type column an operator is known by: older CANN writes "N/A" as every Type (the
-- database's opType likewise), and the operator's name is the type then.
function M.type_key(types, names)
  if not has_unnamed_type(types) then return types end
  local pair_ids, pairs_ = column.group(types, names)
  local keys = {}
  for i, p in ipairs(pairs_) do
    keys[i] = NO_TYPE[p[1] or ""] and (p[2] or "?") or p[1]
  end
  return pair_ids:lookup(keys)
end

--- Read one file (opened once: the columns of both variants are asked for as optional, the
-- first variant whose type and duration columns are present is the file's); aiv_columns: the aiv
-- columns wanted (those missing come back empty).
function M.read(path, aiv_columns)
  local cols = { ["Device_id"] = "?string" }
  for _, cand in ipairs(VARIANTS) do
    cols[cand.type], cols[cand.duration], cols[cand.name] = "?string", "?number", "?string"
  end
  for _, c in ipairs(aiv_columns or {}) do cols[c] = "?number" end
  local r, rerr, which = csv.read(path, { columns = cols, bad = "null" })
  if not r then
    if which == "the file is empty (no header line)" then -- the C message's name, in any language
      return nil, tr("opjitter.empty_file", path)
    end
    return nil, rerr
  end
  local v
  for _, cand in ipairs(VARIANTS) do
    if r.present[cand.type] and r.present[cand.duration] then
      v = cand
      break
    end
  end
  if not v then
    return nil, tr("opjitter.missing_columns", path)
  end
  local aiv, present = {}, {}
  for _, c in ipairs(aiv_columns or {}) do
    aiv[c] = r.columns[c]
    present[c] = r.present[c]
  end
  local key = r.columns[v.type]
  if r.present[v.name] then key = M.type_key(key, r.columns[v.name]) end
  return { n = r.n, name = r.columns[v.name], type = key, duration = r.columns[v.duration],
           device = r.columns["Device_id"], aiv = aiv, aiv_present = present, bad_cells = r.bad_cells,
           first_bad = r.first_bad, ragged_rows = r.ragged_rows, first_ragged = r.first_ragged, cut = r.cut,
           path = path }
end

return M
