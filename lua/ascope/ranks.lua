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
  return setmetatable({}, { ranges = ranges, __index = function(_, r)
    if math.type(r) ~= "integer" then return nil end
    for _, ab in ipairs(ranges) do
      if r >= ab[1] and r <= ab[2] then return true end
    end
    return nil
  end })
end

-- ranges {{a, b}, ...} sorted and merged (overlapping or adjacent ones made one)
local function merge(list)
  table.sort(list, function(x, y) return x[1] < y[1] end)
  local merged = {}
  for _, ab in ipairs(list) do
    local last = merged[#merged]
    if last and ab[1] <= last[2] + 1 then
      if ab[2] > last[2] then last[2] = ab[2] end
    else
      merged[#merged + 1] = ab
    end
  end
  return merged
end

-- the ranges of a set (parse's, or a table rank -> true), sorted and merged
local function set_ranges(set)
  local mt, list = getmetatable(set), {}
  if mt and mt.ranges then
    for i, ab in ipairs(mt.ranges) do list[i] = { ab[1], ab[2] } end
  else
    for r, v in pairs(set) do
      if v and math.type(r) == "integer" then list[#list + 1] = { r, r } end
    end
  end
  return merge(list)
end

-- "0-3, 5, 8-9" for sorted ranges, the first 20 of them (a sparse job could list thousands)
local function ranges_text(ranges)
  local parts = {}
  for i, ab in ipairs(ranges) do
    if i > 20 then
      parts[#parts + 1] = "..."
      break
    end
    parts[i] = ab[1] == ab[2] and tostring(ab[1]) or ("%d-%d"):format(ab[1], ab[2])
  end
  return #parts > 0 and table.concat(parts, ", ") or t("ranks.none")
end

--- Sorted ranges {{a, b}, ...} as a message shows them: "0-3, 5, 8-9" (the first 20, then "...").
M.ranges_text = ranges_text

--- Integers (a list, any order) as a message shows them: {5, 3, 4, 9} -> "3-5, 9".
function M.list_text(numbers)
  local set = {}
  for _, n in ipairs(numbers) do set[n] = true end
  return ranges_text(set_ranges(set))
end

--- The gaps of sorted numbers: the ranges {{a, b}, ...} strictly between the lowest and the
-- highest that none of them falls on. Costs the numbers, not the gaps (cards 0 and 10^9: one range).
function M.gaps(sorted)
  local out = {}
  for i = 2, #sorted do
    if sorted[i] > sorted[i - 1] + 1 then out[#out + 1] = { sorted[i - 1] + 1, sorted[i] - 1 } end
  end
  return out
end

--- What a selection asks for that the input does not have, for every command that takes
-- --rank-list (and --role): set (parse's; nil: every rank) and roles (a list of names; nil or
-- empty: every role) against the rank folders found (found: a list of {rank, role}; rank nil
-- when unknown) under input. Returns a list of messages, empty when everything asked for is
-- there: each role no folder has, then the listed ranks that no folder of the roles asked for
-- has. The caller fails the run on any: a rank asked for and absent is data not analysed.
function M.unmatched(set, roles, found, input)
  local out = {}
  local asked, role_names, have = nil, {}, {}
  for _, d in ipairs(found) do
    if d.role and not have[d.role] then
      have[d.role] = true
      role_names[#role_names + 1] = d.role
    end
  end
  table.sort(role_names)
  if roles and #roles > 0 then
    asked = {}
    for _, r in ipairs(roles) do
      asked[r] = true
      if not have[r] then out[#out + 1] = t("ranks.no_role", r, #role_names > 0 and table.concat(role_names, ", ")
        or t("ranks.none")) end
    end
  end
  if not set or #out > 0 then return out end
  local ranks = {}
  for _, d in ipairs(found) do
    if math.type(d.rank) == "integer" and (not asked or asked[d.role]) then ranks[#ranks + 1] = d.rank end
  end
  table.sort(ranks)
  local runs, k = {}, 1 -- the parts of each listed range that no rank found falls on
  for _, ab in ipairs(set_ranges(set)) do
    local from = ab[1]
    while k <= #ranks and ranks[k] < from do k = k + 1 end
    while k <= #ranks and ranks[k] <= ab[2] do
      if ranks[k] > from then runs[#runs + 1] = { from, ranks[k] - 1 } end
      from = ranks[k] + 1
      k = k + 1
    end
    if from <= ab[2] then runs[#runs + 1] = { from, ab[2] } end
  end
  if #runs > 0 then
    local seen = {}
    for i, r in ipairs(ranks) do seen[i] = { r, r } end
    out[#out + 1] = t("ranks.missing", ranges_text(runs), input, ranges_text(merge(seen)))
  end
  return out
end

return M
