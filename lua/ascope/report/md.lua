--- Markdown pieces: tables with escaped cells.
local M = {}

local function cell(v)
  if v == nil then return "" end
  return (tostring(v):gsub("|", "\\|"):gsub("\r?\n", " "))
end

--- A table from a header list and a list of row lists.
function M.table(header, rows)
  local out = { "| " .. table.concat(header, " | ") .. " |" }
  local sep = {}
  for i = 1, #header do sep[i] = "---" end
  out[#out + 1] = "| " .. table.concat(sep, " | ") .. " |"
  for _, r in ipairs(rows) do
    local cells = {}
    for i = 1, #header do cells[i] = cell(r[i]) end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(out, "\n") .. "\n"
end

return M
