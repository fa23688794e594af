-- Finds messages written in the code instead of the catalogues: a string literal holding words
-- (a space and a word of two letters or more, format directives aside) in the arguments of
-- errors.usage / usage_value, log.stage/warn/error/line, error(), or after `return nil,`. The
-- first literal of an i18n call (t("key"), i18n.t("key")) is a key, not a message.
--   for _, hit in ipairs(require("message_scan").file("lua/ascope/x.lua")) do print(hit.line, hit.text) end
local M = {}

local CALLS = {
  "errors%.usage%(", "errors%.usage_value%(", "%)%.usage%(", "%)%.usage_value%(",
  "log%.stage%(", "log%.warn%(", "log%.error%(", "log%.line%(", "[^%w_.:]error%(",
}

-- the end of the string literal that starts at i (a quote or a long bracket), or nil
local function literal_end(src, i)
  local q = src:sub(i, i)
  if q == '"' or q == "'" then
    local j = i + 1
    while j <= #src do
      local ch = src:sub(j, j)
      if ch == "\\" then
        j = j + 2
      elseif ch == q then
        return j, src:sub(i + 1, j - 1)
      elseif ch == "\n" then
        return nil
      else
        j = j + 1
      end
    end
    return nil
  end
  local eq = src:match("^%[(=*)%[", i)
  if eq then
    local close = "]" .. eq .. "]"
    local s, e = src:find(close, i, true)
    if s then return e, src:sub(i + #eq + 2, s - 1) end
  end
  return nil
end

-- the text of the arguments from just after "(" at i to the matching ")" (strings skipped)
local function args_end(src, i)
  local depth, j = 1, i
  while j <= #src do
    local ch = src:sub(j, j)
    if ch == '"' or ch == "'" or src:match("^%[=*%[", j) then
      local e = literal_end(src, j)
      if not e then return j end
      j = e + 1
    elseif ch == "-" and src:sub(j, j + 1) == "--" then
      j = (src:find("\n", j, true) or #src) + 1
    else
      if ch == "(" then depth = depth + 1 end
      if ch == ")" then
        depth = depth - 1
        if depth == 0 then return j end
      end
      j = j + 1
    end
  end
  return #src
end

--- Whether a literal reads as words to a person.
function M.is_message(s)
  if s:match("^[%w_%.]+, [%w_%., ]+$") then return false end -- a list of names: "csv, json"
  local plain = s:gsub("%%[-+ #0]*%d*%.?%d*[sdqfgxXiuce%%]", " ")
  return plain:find("%s") ~= nil and plain:find("%a%a") ~= nil
end

-- literals in the text of one call's arguments (src from a to b) that are messages
local function messages_in(src, a, b, out, line_of)
  local j = a
  while j <= b do
    local ch = src:sub(j, j)
    if ch == '"' or ch == "'" or src:match("^%[=*%[", j) then
      local e, body = literal_end(src, j)
      if not e then break end
      local before = src:sub(math.max(1, j - 12), j - 1)
      local is_key = before:match("[^%w_]t%($") or before:match("^t%($") or before:match("i18n%.t%($")
      if body and not is_key and M.is_message(body) then out[#out + 1] = { line = line_of(j), text = body } end
      j = e + 1
    elseif ch == "-" and src:sub(j, j + 1) == "--" then
      j = (src:find("\n", j, true) or #src) + 1
    else
      j = j + 1
    end
  end
end

-- the source with its comments blanked, positions kept (a call named in a comment is not a
-- call); strings are skipped whole, so "--format" in a message is no comment
local function strip_comments(src)
  local parts, j, from = {}, 1, 1
  while j <= #src do
    local ch = src:sub(j, j)
    if ch == '"' or ch == "'" or src:match("^%[=*%[", j) then
      j = (literal_end(src, j) or j) + 1
    elseif src:sub(j, j + 1) == "--" then
      local eq = src:match("^%-%-%[(=*)%[", j)
      local stop = eq and select(2, src:find("]" .. eq .. "]", j, true)) or src:find("\n", j, true) or #src + 1
      if not eq then stop = stop - 1 end
      parts[#parts + 1] = src:sub(from, j - 1)
      parts[#parts + 1] = (src:sub(j, stop):gsub("[^\n]", " "))
      j, from = stop + 1, stop + 1
    else
      j = j + 1
    end
  end
  parts[#parts + 1] = src:sub(from)
  return table.concat(parts)
end

--- The hard-coded messages of a Lua source text: {{line, text}, ...}.
function M.source(src)
  local starts = { 1 }
  for p in src:gmatch("()\n") do starts[#starts + 1] = p + 1 end
  local function line_of(pos)
    local lo, hi = 1, #starts
    while lo < hi do
      local mid = (lo + hi + 1) // 2
      if starts[mid] <= pos then lo = mid else hi = mid - 1 end
    end
    return lo
  end
  local code = strip_comments(src)
  local out = {}
  for _, pat in ipairs(CALLS) do
    for open in code:gmatch(pat .. "()") do
      messages_in(code, open, args_end(code, open), out, line_of)
    end
  end
  for from in code:gmatch("return nil,()") do
    local stop = code:find("\n", from, true) or #code
    -- the returned value runs to the end of the line, or to the ")" that closes a call in it
    local s = code:sub(from, stop)
    if s:match("^%s*%(") then stop = args_end(code, code:find("(", from, true) + 1) end
    messages_in(code, from, stop, out, line_of)
  end
  -- a reason, why, error or message given to a person: `reason = "..."`, `why.jitter = "..."`,
  -- `r.not_computed.host = "..."`
  for _, pat in ipairs({ "[^%w_]reason%s*=%s*()", "[^%w_]why[%w_.]*%s*=%s*()", "[^%w_][%w_]*error%s*=%s*()",
                         "[^%w_]msg%s*=%s*()", "[^%w_]message%s*=%s*()",
                         "[^%w_]not_computed[%w_.]*%s*=%s*()" }) do
    for from in code:gmatch(pat) do
      local stop = code:find("\n", from, true) or #code
      if code:sub(from, stop):match("^%(") then stop = args_end(code, from + 1) end
      messages_in(code, from, stop, out, line_of)
    end
  end
  table.sort(out, function(x, y) return x.line < y.line end)
  return out
end

function M.file(path)
  local f = assert(io.open(path, "rb"))
  local src = f:read("a")
  f:close()
  return M.source(src)
end

return M
