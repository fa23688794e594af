--- Number formatting that keeps exact times exact, and the marks the JSON writers read.
local M = {}

--- t (a new table when nil) marked to be written as a JSON array, [] when empty.
function M.array(t) return setmetatable(t or {}, { __jsontype = "array" }) end

--- Exact decimal text of ns / 10^digits, trailing zeros dropped, at least one decimal:
-- fmt.scaled(1000100000, 6) -> "1000.1", fmt.scaled(6000000000, 6) -> "6000.0"
local UNITS, FORMATS = {}, {}
for d = 0, 18 do
  UNITS[d] = math.tointeger(10 ^ d)
  FORMATS[d] = "%s%d.%0" .. d .. "d"
end

function M.scaled(ns, digits)
  local unit = UNITS[digits]
  local sign = ""
  if ns < 0 then sign, ns = "-", -ns end
  local whole, frac = ns // unit, ns % unit
  if frac == 0 then return sign .. whole .. ".0" end
  while frac % 10 == 0 do -- drop trailing zeros with integer steps (hot: once per row)
    frac = frac // 10
    digits = digits - 1
  end
  return FORMATS[digits]:format(sign, whole, frac)
end

--- ns -> milliseconds text: fmt.ms(1736405443871259720) -> "1736405443871.25972"
function M.ms(ns) return M.scaled(ns, 6) end

--- ns -> microseconds text (Chrome trace "ts" values): fmt.us(1000100000) -> "1000100.0"
function M.us(ns) return M.scaled(ns, 3) end

--- A measured value with the digits it was read with (the shortest text that reads back as
-- the same double): fmt.num(19071.60547) -> "19071.60547", never "19071.605470"; "" for nil.
function M.num(x)
  if x == nil then return "" end
  return require("ascope_core").json.encode(x)
end

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

--- A label for a report (a table cell, a chart bar): at most `max` bytes (default
-- M.LABEL_MAX), cut on a UTF-8 character boundary and ended with "…" when longer. A call
-- stack with no frame separator is one 100 MB "frame": reports show its start, not all of it.
M.LABEL_MAX = 1000
function M.label(s, max)
  max = max or M.LABEL_MAX
  if s == nil or #s <= max then return s end
  local cut = max
  -- step back over continuation bytes (10xxxxxx) to the start of a character: three at most
  -- (a UTF-8 character has four bytes at most); other text (GBK's bytes are often in that
  -- range) is cut where it is, not to nothing
  while cut > 0 and max - cut < 3 and s:byte(cut + 1) & 0xC0 == 0x80 do cut = cut - 1 end
  if s:byte(cut + 1) & 0xC0 == 0x80 then cut = max end
  return s:sub(1, cut) .. "…"
end

return M
