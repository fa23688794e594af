--- The messages the C layer can give, read from its sources: every template of asc_fail (and of
-- the RAISE macro, its shorthand in the bindings) and every literal that reaches asc_fail_text
-- or becomes another message's argument (a scanner's "expected ':'", a walk's "why").
-- spec/i18n_spec.lua holds the catalogues to this list in both directions.
local M = {}

-- A C string literal's text, escapes undone (the sources use \" \\ \n \xNN only).
local ESCAPES = { n = "\n", ['"'] = '"', ["\\"] = "\\", ["'"] = "'" }
local function unquote(lit)
  return (lit:gsub("\\(.)(%x?%x?)", function(c, hex)
    if c == "x" then return string.char(tonumber(hex, 16)) end
    return (ESCAPES[c] or c) .. hex
  end))
end

-- The literals that start at position i of s, joined as C joins adjacent literals; nil when
-- the argument there is not a literal.
local function literal_at(s, i, defines)
  local j = s:find("%S", i)
  local name = s:match("^([%u_][%u%d_]*)%s*[,)]", j)
  if name and defines[name] then return defines[name] end
  local parts = {}
  while s:sub(j, j) == '"' do
    local k = j + 1
    while true do
      local c = s:sub(k, k)
      if c == "\\" then k = k + 2
      elseif c == '"' then break
      else k = k + 1 end
    end
    parts[#parts + 1] = unquote(s:sub(j + 1, k - 1))
    j = s:find("%S", k + 1)
    if not j then break end
  end
  if #parts == 0 then return nil end
  return table.concat(parts)
end

-- Position after the n-th top-level comma of the call whose "(" is at position open.
local function after_comma(s, open, n)
  local depth, k = 0, open
  while k <= #s do
    local c = s:sub(k, k)
    if c == '"' then
      k = k + 1
      while s:sub(k, k) ~= '"' do k = k + (s:sub(k, k) == "\\" and 2 or 1) end
    elseif c == "(" then depth = depth + 1
    elseif c == ")" then
      depth = depth - 1
      if depth == 0 then return nil end
    elseif c == "," and depth == 1 then
      n = n - 1
      if n == 0 then return k + 1 end
    end
    k = k + 1
  end
end

-- Where a message is: the call, how many arguments come before it, and whether it is a printf
-- template (its conversions become the catalogue's %s) or a text used as it is.
local CALLS = { { "asc_fail%(", 5, true }, { "RAISE%(", 1, true }, { "asc_fail_text%(", 5 },
                { "unreadable%(", 4 }, { "refuse%(", 2 } }
-- Literals assigned to the variables that carry a message to asc_fail_text or into an argument.
local ASSIGNED = { "bad_msg%s*=%s*", "%*why%s*=%s*" }

--- {[template] = {file = ..., format = true when a printf template}} for the C sources under dir
-- (default "src").
function M.templates(dir)
  dir = dir or "src"
  local found = {}
  local p = assert(io.popen("ls " .. dir .. "/*.c"))
  for file in p:lines() do
    local f = assert(io.open(file))
    local s = f:read("a")
    f:close()
    s = s:gsub("/%*.-%*/", " ")
    local defines = {}
    for name, rest in s:gmatch("#define%s+([%u_][%u%d_]*)%s+(\"[^\n]*)") do
      defines[name] = literal_at(rest, 1, {})
    end
    for _, call in ipairs(CALLS) do
      for open in s:gmatch("%f[%w_]" .. call[1] .. "()") do
        local at = after_comma(s, open - 1, call[2])
        local text = at and literal_at(s, at, defines)
        if text and text ~= "" then found[text] = found[text] or { file = file, format = call[3] } end
      end
    end
    for _, lhs in ipairs(ASSIGNED) do
      for at in s:gmatch(lhs .. "()\"") do
        local text = literal_at(s, at, defines)
        if text then found[text] = found[text] or { file = file } end
      end
    end
  end
  p:close()
  return found
end

--- The catalogue's English text of a C message: a printf template with each conversion
-- replaced by %s (C formats the arguments), a plain text as it is.
function M.english(text, info)
  return info.format and M.normalise(text) or text
end

--- The template with each printf conversion replaced by %s, as the catalogues write it.
function M.normalise(template)
  return (template:gsub("%%(.)", "\1%1"):gsub("\1%%", "\2")
    :gsub("\1[-+ #0]*%*?%d*%.?%*?%d*[hlLzjt]*[diouxXcspfeEgGaA]", "%%s"):gsub("\2", "%%%%"))
end

return M
