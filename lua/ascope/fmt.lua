--- Number formatting that keeps exact times exact.
local M = {}

--- Exact decimal text of ns / 10^digits, trailing zeros dropped, at least one decimal:
-- fmt.scaled(1000100000, 6) -> "1000.1", fmt.scaled(6000000000, 6) -> "6000.0"
function M.scaled(ns, digits)
  local unit = 10 ^ digits // 1
  unit = math.tointeger(unit)
  local neg = ns < 0
  if neg then ns = -ns end
  local whole, frac = ns // unit, ns % unit
  local f = ("%0" .. digits .. "d"):format(frac):gsub("0+$", "")
  if f == "" then f = "0" end
  return (neg and "-" or "") .. whole .. "." .. f
end

--- ns -> milliseconds text: fmt.ms(1736405443871259720) -> "1736405443871.25972"
function M.ms(ns) return M.scaled(ns, 6) end

--- ns -> microseconds text (Chrome trace "ts" values): fmt.us(1000100000) -> "1000100.0"
function M.us(ns) return M.scaled(ns, 3) end

--- A ratio as a percentage with one decimal: fmt.pct(0.1234) -> "12.3%"
function M.pct(x)
  if x == nil then return "n/a" end
  return ("%.1f%%"):format(x * 100)
end

--- Round to n decimals for reports (not for data files).
function M.round(x, n)
  if x == nil then return nil end
  local m = 10 ^ (n or 3)
  return math.floor(x * m + 0.5) / m
end

return M
