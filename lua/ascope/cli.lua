--- Command-line parsing shared by every command.
--
-- A command describes itself once; parsing, defaults, validation and --help come from that:
--   local spec = {
--     name = "memory", args = "INPUT", summary = "...",
--     options = {
--       { "output", "o", arg = "DIR", default = "ascope_out", help = "where results go" },
--       { "jobs", "j", arg = "N", type = "int", help = "ranks in parallel" },
--       { "role", arg = "NAME", many = true, help = "only these roles" },
--       { "input-path", arg = "P", alias_of = "input" },       -- the reference tool's spelling
--     },
--     keys = { TARGET_DIR = "target-dir" },                    -- KEY=VALUE words
--   }
--   local opts, words = cli.parse(spec, argv)                  -- opts.output, opts.jobs, ...
local errors = require "ascope.errors"

local M = {}

local function key(name) return (name:gsub("%-", "_")) end

local function find(spec, name, short)
  for _, o in ipairs(spec.options) do
    if (name and o[1] == name) or (short and o[2] == short) then return o end
  end
end

local function convert(o, value, shown)
  if o.type == "int" then
    local n = math.tointeger(tonumber(value))
    if not n then errors.usage("%s takes a whole number, not %q", shown, value) end
    if o.min and n < o.min then errors.usage("%s must be at least %d", shown, o.min) end
    if o.max and n > o.max then errors.usage("%s must be at most %d", shown, o.max) end
    return n
  elseif o.choices then
    for _, c in ipairs(o.choices) do
      if c == value then return value end
    end
    errors.usage("%s takes one of %s, not %q", shown, table.concat(o.choices, ", "), value)
  end
  return value
end

local function set(opts, o, value, shown)
  local target = key(o.alias_of or o[1])
  if o.arg then value = convert(o, value, shown) end
  if o.many then
    opts[target] = opts[target] or {}
    table.insert(opts[target], value)
  else
    opts[target] = value
  end
end

--- Parse argv (a list of words) against spec; returns opts and the positional words.
-- Raises a usage error (exit 2) for unknown flags, missing values or bad values.
function M.parse(spec, argv)
  local opts, words = {}, {}
  local i = 1
  local only_words = false
  while i <= #argv do
    local a = argv[i]
    if only_words then
      words[#words + 1] = a
    elseif a == "--" then
      only_words = true
    elseif a:match("^%-%-") then
      local name, value = a:match("^%-%-([^=]+)=(.*)$")
      name = name or a:sub(3)
      local o = find(spec, name)
      if not o then errors.usage("unknown option --%s for 'ascope %s' (see 'ascope help %s')", name, spec.name, spec.name) end
      if o.arg then
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then errors.usage("--%s needs a value (%s)", name, o.arg) end
        end
        set(opts, o, value, "--" .. name)
      else
        if value then errors.usage("--%s takes no value", name) end
        set(opts, o, true, "--" .. name)
      end
    elseif a:match("^%-%a") then
      local short = a:sub(2, 2)
      local o = find(spec, nil, short)
      if not o then errors.usage("unknown option -%s for 'ascope %s' (see 'ascope help %s')", short, spec.name, spec.name) end
      if o.arg then
        local value = #a > 2 and a:sub(3) or nil
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then errors.usage("-%s needs a value (%s)", short, o.arg) end
        end
        set(opts, o, value, "-" .. short)
      else
        set(opts, o, true, "-" .. short)
      end
    elseif spec.keys and a:match("^[%u_][%u%d_]*=") then
      local k, value = a:match("^([^=]+)=(.*)$")
      local flag = spec.keys[k]
      if not flag then errors.usage("unknown parameter %s for 'ascope %s'", k, spec.name) end
      set(opts, find(spec, flag), value, k)
    else
      words[#words + 1] = a
    end
    i = i + 1
  end
  for _, o in ipairs(spec.options) do
    local k = key(o[1])
    if not o.alias_of and opts[k] == nil and o.default ~= nil then opts[k] = o.default end
  end
  return opts, words
end

--- The --help text of a command.
function M.help(spec)
  local t = require("ascope.i18n")
  local lines = { ("usage: ascope %s %s"):format(spec.name, spec.args or ""), "" }
  lines[#lines + 1] = t.pick(spec.summary)
  if spec.details then
    lines[#lines + 1] = ""
    lines[#lines + 1] = t.pick(spec.details)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "options:"
  for _, o in ipairs(spec.options) do
    local flag = (o[2] and ("-" .. o[2] .. ", ") or "    ") .. "--" .. o[1] .. (o.arg and (" " .. o.arg) or "")
    local help = t.pick(o.help) or (o.alias_of and ("same as " .. o.alias_of)) or ""
    if o.default ~= nil and o.default ~= false then help = help .. (" (default: %s)"):format(tostring(o.default)) end
    lines[#lines + 1] = ("  %-30s %s"):format(flag, help)
  end
  if spec.keys then
    local ks = {}
    for k, v in pairs(spec.keys) do ks[#ks + 1] = ("%s=... (--%s)"):format(k, v) end
    table.sort(ks)
    lines[#lines + 1] = ""
    lines[#lines + 1] = "parameters may also be given as KEY=VALUE: " .. table.concat(ks, ", ")
  end
  if spec.examples then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "examples:"
    for _, e in ipairs(spec.examples) do lines[#lines + 1] = "  " .. e end
  end
  return table.concat(lines, "\n") .. "\n"
end

local function rank_number(digits, text)
  local n = math.tointeger(tonumber(digits))
  if not n then errors.usage("--rank-list: %s is not a rank number (in %q)", digits, text) end
  return n
end

--- "all" or "0,2,4-7" -> nil (all) or a set: ranks[r] is true for the ranks listed. The ranges
-- are kept as ranges (a set of 0-99999999999 costs two numbers, not a table of every rank).
function M.rank_list(text)
  if text == nil or text == "all" then return nil end
  local ranges = {}
  text = tostring(text)
  for part in text:gmatch("[^,]+") do
    local a, b = part:match("^%s*(%d+)%s*%-%s*(%d+)%s*$")
    if a then
      a, b = rank_number(a, text), rank_number(b, text)
      if b < a then errors.usage("--rank-list: range %s runs backwards", part) end
      ranges[#ranges + 1] = { a, b }
    else
      local n = part:match("^%s*(%d+)%s*$")
      if not n then errors.usage("--rank-list takes 'all' or numbers and ranges like 0,2,4-7, not %q", text) end
      n = rank_number(n, text)
      ranges[#ranges + 1] = { n, n }
    end
  end
  if #ranges == 0 then errors.usage("--rank-list takes 'all' or numbers and ranges like 0,2,4-7, not %q", text) end
  return setmetatable({}, { __index = function(_, r)
    if math.type(r) ~= "integer" then return nil end
    for _, ab in ipairs(ranges) do
      if r >= ab[1] and r <= ab[2] then return true end
    end
    return nil
  end })
end

--- The most worker processes a command may ask for; the runtime also clamps to what the
-- system allows (open files, processes).
M.MAX_JOBS = 1024

return M
