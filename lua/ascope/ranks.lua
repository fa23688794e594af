--- Rank lists as people write them on a command line or in a script: "all" or "0,2,4-7".
-- Shared by every job that reads per-rank data, and by the command line's --rank-list.
--
--     local ranks = require "ascope.ranks"
--     local set = assert(ranks.parse("0,2,4-7"))   --> set[4] == true, set[3] == nil
--     ranks.parse("all")                            --> nil: every rank
-- @module ascope.ranks
local t = require("ascope.i18n").t

local M = {}

local function number(digits, text)
  local n = math.tointeger(tonumber(digits))
  if not n then return nil, t("ranks.not_a_number", digits, text) end
  return n
end

-- the ranges of a list text: {{a, b}, ...} or nil, message
local function ranges_of(text)
  local ranges = {}
  for part in text:gmatch("[^,]+") do
    local a, b = part:match("^%s*(%d+)%s*%-%s*(%d+)%s*$")
    if a then
      local err
      a, err = number(a, text)
      if not a then return nil, err end
      b, err = number(b, text)
      if not b then return nil, err end
      if b < a then return nil, t("ranks.backwards", part) end
      ranges[#ranges + 1] = { a, b }
    else
      local n = part:match("^%s*(%d+)%s*$")
      if not n then return nil, t("ranks.bad_list", text) end
      local err
      n, err = number(n, text)
      if not n then return nil, err end
      ranges[#ranges + 1] = { n, n }
    end
  end
  if #ranges == 0 then return nil, t("ranks.bad_list", text) end
  return ranges
end

--- "all" (or nil) -> nil, false (every rank); "0,2,4-7" -> a set: set[r] is true for the ranks
-- listed. The ranges are kept as ranges (a set of 0-99999999999 costs two numbers, not a table
-- of every rank). A set given as a table is returned as it is. A text that is not a rank list
-- -> nil, message (naming --rank-list, the option that carries it).
function M.parse(text)
  if text == nil or text == "all" then return nil, false end
  if type(text) == "table" then return text end
  text = tostring(text)
  local ranges, err = ranges_of(text)
  if not ranges then return nil, err end
  return setmetatable({}, { __index = function(_, r)
    if math.type(r) ~= "integer" then return nil end
    for _, ab in ipairs(ranges) do
      if r >= ab[1] and r <= ab[2] then return true end
    end
    return nil
  end })
end

return M
