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
local i18n = require "ascope.i18n"

local M = {}

--- The options every command takes, before or after its name (`ascope --lang en moe ...` and
-- `ascope moe ... --lang en` are the same). Their values go to the command's ctx.
M.globals = {
  { "quiet", "q", help = "opt.global.quiet" },
  { "debug", help = "opt.global.debug" },
  { "lang", arg = "zh|en", choices = { "zh", "en" },
    help = "opt.global.lang" },
  { "rules-dir", arg = "DIR", help = "opt.global.rules_dir" },
  { "json", help = "opt.global.json" },
  { "fail-on", arg = "error|warning", choices = { "error", "warning" },
    help = "opt.global.fail_on" },
  { "help", "h", help = "opt.global.help" },
}

local function key(name) return (name:gsub("%-", "_")) end

local function find(options, name, short)
  for _, o in ipairs(options) do
    if (name and o[1] == name) or (short and o[2] == short) then return o end
  end
end

-- Edit distance with transpositions (optimal string alignment): "memroy" is 1 from "memory".
local function distance(a, b)
  local d = {}
  for i = 0, #a do d[i] = { [0] = i } end
  for j = 0, #b do d[0][j] = j end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      local v = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:byte(i) == b:byte(j - 1) and a:byte(i - 1) == b:byte(j) then
        v = math.min(v, d[i - 2][j - 2] + 1)
      end
      d[i][j] = v
    end
  end
  return d[#a][#b]
end

--- The candidate a mistyped word most likely meant, or nil when none is close: at most one
-- edit per three letters (at least one), or a candidate the word is the start of.
function M.suggest(word, candidates)
  local best, best_d
  local limit = math.max(1, #word // 3)
  for _, c in ipairs(candidates) do
    local d = distance(word:lower(), c:lower())
    if #word >= 3 and c:sub(1, #word) == word then d = math.min(d, 1) end
    if d <= limit and (not best_d or d < best_d) then best, best_d = c, d end
  end
  return best
end

--- " (did you mean X?)" for a mistyped word, or "".
function M.did_you_mean(word, candidates, prefix)
  local s = M.suggest(word, candidates)
  if not s then return "" end
  return i18n.t("cli.did_you_mean", (prefix or "") .. s)
end

local function long_names(lists)
  local names = {}
  for _, options in ipairs(lists) do
    for _, o in ipairs(options) do names[#names + 1] = o[1] end
  end
  return names
end

local function convert(o, value, shown)
  if o.type == "int" then
    local n = math.tointeger(tonumber(value))
    if not n then errors.usage(i18n.t("cli.not_whole", shown, value)) end
    if o.min and n < o.min then errors.usage(i18n.t("cli.at_least", shown, o.min)) end
    if o.max and n > o.max then errors.usage(i18n.t("cli.at_most", shown, o.max)) end
    return n
  elseif o.choices then
    for _, c in ipairs(o.choices) do
      if c == value then return value end
    end
    errors.usage(i18n.t("cli.not_choice", shown, table.concat(o.choices, ", "), value, M.did_you_mean(value, o.choices)))
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

-- Read the option at argv[i] (one of the option lists, each with the table its values go to);
-- returns the index of the last word used.
local function option(argv, i, lists, command)
  local a = argv[i]
  local long, value = a:match("^%-%-([^=]+)=(.*)$")
  local short
  if not long then
    if a:match("^%-%-") then long = a:sub(3) else short = a:sub(2, 2) end
  end
  local o, into
  for _, l in ipairs(lists) do
    o = find(l.options, long, short)
    if o then into = l.into break end
  end
  local shown = long and ("--" .. long) or ("-" .. short)
  if not o then
    local hint = long and M.did_you_mean(long, long_names({ lists[1].options, lists[2] and lists[2].options or {} }), "--") or ""
    if command == "" then errors.usage(i18n.t("cli.unknown_global", shown, hint)) end
    errors.usage(i18n.t("cli.unknown_option", shown, command, hint, command))
  end
  if not o.arg then
    if value then errors.usage(i18n.t("cli.no_value", shown)) end
    set(into, o, true, shown)
    return i
  end
  if short and #a > 2 then value = a:sub(3) end
  if not value then
    i = i + 1
    value = argv[i]
    if value == nil then errors.usage(i18n.t("cli.needs_value", shown, o.arg)) end
  end
  set(into, o, value, shown)
  return i
end

local function key_names(spec)
  local names = {}
  for name in pairs(spec.keys) do names[#names + 1] = name end
  table.sort(names)
  return names
end

local function is_option(a) return a:match("^%-%-.") or a:match("^%-%a") end

--- Parse argv (a list of words) against spec; returns opts, the positional words, and the
-- global options found among the words (with globals = M.globals).
-- Raises a usage error (exit 2) for unknown flags, missing values or bad values.
function M.parse(spec, argv, globals)
  local opts, words, gopts = {}, {}, {}
  local lists = { { options = spec.options, into = opts }, { options = globals or {}, into = gopts } }
  local i = 1
  local only_words = false
  while i <= #argv do
    local a = argv[i]
    if only_words then
      words[#words + 1] = a
    elseif a == "--" then
      only_words = true
    elseif is_option(a) then
      i = option(argv, i, lists, spec.name)
    elseif spec.keys and a:match("^[%u_][%u%d_]*=") then
      local k, value = a:match("^([^=]+)=(.*)$")
      local flag = spec.keys[k]
      if not flag then errors.usage(i18n.t("cli.unknown_key", k, spec.name, M.did_you_mean(k, key_names(spec)))) end
      set(opts, find(spec.options, flag), value, k)
    elseif spec.keys and a:match("^[%a_][%w_]*=") and M.suggest(a:match("^[^=]+"):upper(), key_names(spec)) then
      -- soc_version=950: a parameter in the wrong case rather than a path with '=' in it
      local k = a:match("^[^=]+")
      errors.usage(i18n.t("cli.unknown_key", k, spec.name, M.did_you_mean(k:upper(), key_names(spec))))
    else
      words[#words + 1] = a
    end
    i = i + 1
  end
  for _, o in ipairs(spec.options) do
    local k = key(o[1])
    if not o.alias_of and opts[k] == nil and o.default ~= nil then opts[k] = o.default end
  end
  return opts, words, gopts
end

--- The global options at the start of argv (up to the first word that is not one); returns
-- them and the remaining words.
function M.parse_leading(globals, argv)
  local gopts = {}
  local lists = { { options = globals, into = gopts } }
  local i = 1
  while argv[i] and is_option(argv[i]) do
    i = option(argv, i, lists, "") + 1
  end
  return gopts, table.move(argv, i, #argv, 1, {})
end

--- An output folder that cannot be one (empty, or the path or a folder above it is a file): a
-- usage error before any work starts.
function M.check_output(path)
  if path == "" then errors.usage(i18n.t("cli.output_empty")) end -- not the root folder, nor "here"
  local stat = require("ascope_core").fs.stat
  local p = path
  while p and p ~= "" do
    local st = stat(p)
    if st then
      if st.type ~= "dir" and p == path then errors.usage(i18n.t("cli.output_is_file", path)) end
      if st.type ~= "dir" then errors.usage(i18n.t("cli.output_not_folder", path, p)) end
      return
    end
    p = p:match("^(.*[^/])/+[^/]*$")
  end
end

--- "-o, --output DIR": how an option is written in help texts.
function M.flag_text(o)
  return (o[2] and ("-" .. o[2] .. ", ") or "    ") .. "--" .. o[1] .. (o.arg and (" " .. o.arg) or "")
end

local function option_lines(lines, options)
  for _, o in ipairs(options) do
    local help = i18n.t(o.help) or (o.alias_of and i18n.t("cli.same_as", o.alias_of)) or ""
    if o.default ~= nil and o.default ~= false then help = help .. i18n.t("cli.default", tostring(o.default)) end
    lines[#lines + 1] = ("  %-30s %s"):format(M.flag_text(o), help)
  end
end

--- The --help text of a command.
function M.help(spec)
  local t = i18n.t
  local lines = { ("%s ascope %s %s"):format(t("cli.usage"), spec.name, spec.args or ""):gsub("%s+$", ""), "" }
  lines[#lines + 1] = i18n.t(spec.summary)
  if spec.details then
    lines[#lines + 1] = ""
    lines[#lines + 1] = i18n.t(spec.details)
  end
  if #spec.options > 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = t("cli.options")
    option_lines(lines, spec.options)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = t("cli.global_options")
  option_lines(lines, M.globals)
  if spec.outputs then
    lines[#lines + 1] = ""
    lines[#lines + 1] = t("cli.outputs")
    for _, f in ipairs(spec.outputs) do
      lines[#lines + 1] = ("  %-30s %s"):format(f[1] .. (f.format and (" (" .. f.format .. ")") or ""), i18n.t(f.help))
    end
  end
  if spec.keys then
    local ks = {}
    for k, v in pairs(spec.keys) do ks[#ks + 1] = ("%s=... (--%s)"):format(k, v) end
    table.sort(ks)
    lines[#lines + 1] = ""
    lines[#lines + 1] = t("cli.keys") .. " " .. table.concat(ks, ", ")
  end
  if spec.examples then
    lines[#lines + 1] = ""
    lines[#lines + 1] = t("cli.examples")
    for _, e in ipairs(spec.examples) do lines[#lines + 1] = "  " .. e end
  end
  return table.concat(lines, "\n") .. "\n"
end

--- "all" or "0,2,4-7" -> nil (all) or a set (see ascope.ranks); a usage error otherwise.
function M.rank_list(text)
  local ranks, err = require("ascope.ranks").parse(text)
  if err then errors.usage("%s", err) end
  return ranks
end

--- The most worker processes a command may ask for (see ascope.workers).
M.MAX_JOBS = require("ascope.workers").MAX_JOBS

return M
