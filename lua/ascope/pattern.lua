--- Lua patterns given by users (rule files): well formed, and cheap enough to run on long lines.
-- Each repetition (`*`, `+`, `-`) can make the matcher backtrack over the whole subject, so the
-- worst case grows as the line length to the power of their number; a pattern with more than
-- MAX_REPEATS of them is refused instead of hanging on an unlucky line. Patterns of the linear
-- subset (ascope_core.logclass: each quantified item followed by something it cannot take, so
-- no match ever backtracks) have no such limit: plog's classifiers are written in it.
--   local ok, why = pattern.check("kernel_name[=:]%s*([%w_]+)")
-- @module ascope.pattern
local t = require("ascope.i18n").t -- the checks lpat also makes say what lpat says (its "c:" keys)

local M = {}

M.MAX_REPEATS = 4

-- The end of the set that starts at i (the "["), as Lua's matcher finds it; nil if unfinished.
local function set_end(p, i)
  local j = i + 1
  if p:sub(j, j) == "^" then j = j + 1 end
  repeat
    if j > #p then return nil end
    local c = p:sub(j, j)
    j = j + 1
    if c == "%" then
      if j > #p then return nil end
      j = j + 1
    end
  until p:sub(j, j) == "]"
  return j + 1
end

--- The number of repetitions in a pattern, or nil and why it is malformed (Lua's matcher only
-- finds some mistakes when a match reaches them).
function M.repeats(p)
  local n, i, len, open, captures = 0, 1, #p, 0, 0
  if p:sub(1, 1) == "^" then i = 2 end
  while i <= len do
    local c = p:sub(i, i)
    local item = true
    if c == "(" then
      captures, item = captures + 1, false
      if p:sub(i + 1, i + 1) == ")" then i = i + 2 else open, i = open + 1, i + 1 end
    elseif c == ")" then
      if open == 0 then return nil, t("c:invalid pattern capture") end
      open, item, i = open - 1, false, i + 1
    elseif c == "%" then
      local nx = p:sub(i + 1, i + 1)
      if nx == "" then return nil, t("c:malformed pattern (ends with '%')") end
      if nx == "b" then
        if i + 3 > len then return nil, t("pattern.missing_b_args") end
        i, item = i + 4, false
      elseif nx == "f" then
        if p:sub(i + 2, i + 2) ~= "[" then return nil, t("pattern.missing_f_bracket") end
        i = set_end(p, i + 2)
        if not i then return nil, t("c:malformed pattern (missing ']')") end
        item = false
      elseif nx:match("%d") then
        if tonumber(nx) == 0 or tonumber(nx) > captures then return nil, t("pattern.bad_capture_index", nx) end
        i, item = i + 2, false
      else
        i = i + 2
      end
    elseif c == "[" then
      i = set_end(p, i)
      if not i then return nil, t("c:malformed pattern (missing ']')") end
    elseif c == "$" and i == len then
      i, item = i + 1, false
    else
      i = i + 1
    end
    local q = p:sub(i, i)
    if item and (q == "*" or q == "+" or q == "-" or q == "?") then
      if q ~= "?" then n = n + 1 end
      i = i + 1
    end
  end
  if open > 0 then return nil, t("c:unfinished capture") end
  return n
end

--- true, or false and why the pattern is refused.
function M.check(p)
  if type(p) ~= "string" then return false, t("pattern.not_string") end
  local n, why = M.repeats(p)
  if not n then return false, why end
  local ok, err = pcall(string.find, "", p)
  if not ok then return false, (tostring(err):gsub("^.-:%d+: ", "")) end
  if n > M.MAX_REPEATS and require("ascope_core").logclass.find("", p) == false then
    return false, require("ascope.i18n").t("rules.too_many_repeats", n, M.MAX_REPEATS)
  end
  return true
end

return M
