--- The ascope executable's entry point: global flags, command dispatch, help, version, run.
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"
local log = require "ascope.log"

local M = {}

M.VERSION = "0.1.0"

-- command -> module; each module returns {spec = <cli spec>, main = function(opts, words, ctx)}
M.commands = {
  memory = "ascope.commands.memory",
  timeline = "ascope.commands.timeline",
  opjitter = "ascope.commands.opjitter",
  graph = "ascope.commands.graph",
  plog = "ascope.commands.plog",
  moe = "ascope.commands.moe",
  diagnose = "ascope.commands.diagnose",
  merge = "ascope.commands.merge",
}

local GLOBAL_FLAGS = {
  ["--debug"] = "debug", ["--quiet"] = "quiet", ["-q"] = "quiet",
  ["--lang"] = "lang", ["--rules-dir"] = "rules_dir", ["--help"] = "help", ["-h"] = "help",
}

-- ASCOPE_PATH=DIR: modules are looked up in DIR (an edited copy of lua/) before the bundled ones.
local function add_user_path()
  local dir = os.getenv("ASCOPE_PATH")
  if not dir or dir == "" then return end
  local path = dir .. "/?.lua;" .. dir .. "/?/init.lua"
  table.insert(package.searchers, 2, function(name)
    local file, err = package.searchpath(name, path)
    if not file then return err end
    return assert(loadfile(file)), file
  end)
  for name in pairs(package.loaded) do
    if name:match("^ascope%.") and name ~= "ascope.main" then package.loaded[name] = nil end
  end
end

local function split_globals(argv)
  local ctx, rest = {}, {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local flag, value = a:match("^(%-%-[%w-]+)=(.*)$")
    local g = GLOBAL_FLAGS[flag or a]
    if g == "lang" or g == "rules_dir" then
      if not value then
        i = i + 1
        value = argv[i]
        if not value then errors.usage("%s needs a value", a) end
      end
      ctx[g] = value
    elseif g and not value then
      ctx[g] = true
    else
      rest[#rest + 1] = a
    end
    i = i + 1
  end
  return ctx, rest
end

local function overview()
  local lines = {
    "ascope " .. M.VERSION .. " - analysis toolkit for Ascend NPU profiling and failure data",
    "",
    "usage: ascope <command> [options]",
    "",
    "commands:",
  }
  local names = {}
  for name in pairs(M.commands) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local spec = require(M.commands[name]).spec
    lines[#lines + 1] = ("  %-10s %s"):format(name, i18n.pick(spec.summary))
  end
  lines[#lines + 1] = ("  %-10s %s"):format("run", "run a Lua script with the ascope API preloaded: ascope run SCRIPT.lua [args]")
  lines[#lines + 1] = ("  %-10s %s"):format("help", "help on a command: ascope help memory")
  lines[#lines + 1] = ("  %-10s %s"):format("version", "versions of ascope and the libraries it was built with")
  lines[#lines + 1] = ""
  lines[#lines + 1] = "global options: --quiet (no progress), --debug (tracebacks), --lang zh|en, --rules-dir DIR"
  lines[#lines + 1] = "environment: ASCOPE_PATH=DIR loads edited Lua modules from DIR before the bundled ones"
  return table.concat(lines, "\n") .. "\n"
end

local function version()
  local core = require "ascope_core"
  local v = core.versions()
  local ok, lpeg = pcall(require, "lpeg")
  local lv = ok and lpeg.version or "?"
  if type(lv) == "function" then lv = lv() end -- LPeg 1.0 has version(), 1.1 a string
  io.write(("ascope %s\n"):format(M.VERSION))
  io.write(("  %s, LPeg %s, yajl %s, libcsv %s, SQLite %s\n"):format(v.lua, lv, v.yajl, v.libcsv, v.sqlite))
  return 0
end

-- ascope run SCRIPT [args]: arg[0] = SCRIPT, arg[1..] = args, as lua5.4 does it.
local function run_script(words)
  local script = words[1]
  if not script then errors.usage("usage: ascope run SCRIPT.lua [args]") end
  local chunk, err = loadfile(script)
  if not chunk then error(err, 0) end
  local new_arg = { [0] = script }
  for i = 2, #words do new_arg[i - 1] = words[i] end
  _G.arg = new_arg
  local code = chunk(table.unpack(new_arg))
  return math.tointeger(code) or 0
end

local function dispatch(ctx, words)
  log.quiet = ctx.quiet or false
  i18n.set(ctx.lang)
  if ctx.rules_dir then require("ascope.rules").set_dir(ctx.rules_dir) end
  local cmd = table.remove(words, 1)
  if cmd == nil or cmd == "help" then
    local topic = words[1]
    if topic and M.commands[topic] then
      io.write(require("ascope.cli").help(require(M.commands[topic]).spec))
    elseif topic then
      errors.usage("no command '%s' (commands: %s)", topic, M.command_list())
    else
      io.write(overview())
    end
    return 0
  end
  if cmd == "version" or cmd == "--version" then return version() end
  if cmd == "run" then return run_script(words) end
  local mod = M.commands[cmd]
  if not mod then errors.usage("unknown command '%s' (commands: %s; see 'ascope help')", cmd, M.command_list()) end
  local command = require(mod)
  if ctx.help then
    io.write(require("ascope.cli").help(command.spec))
    return 0
  end
  local opts, rest = require("ascope.cli").parse(command.spec, words)
  return command.main(opts, rest, ctx) or 0
end

function M.command_list()
  local names = {}
  for name in pairs(M.commands) do names[#names + 1] = name end
  table.sort(names)
  names[#names + 1] = "run"
  return table.concat(names, ", ")
end

--- Run the program with the host's arg table; returns the exit code.
function M.main(argv)
  add_user_path()
  local words = {}
  for i = 1, #argv do words[i] = argv[i] end
  local ctx = {}
  local ok, result = xpcall(function()
    local rest
    ctx, rest = split_globals(words)
    -- `ascope run` passes everything after the script to the script untouched
    if rest[1] == "run" then
      local raw = {}
      local seen = false
      for _, w in ipairs(words) do
        if seen then raw[#raw + 1] = w elseif w == "run" then seen = true end
      end
      rest = { "run", table.unpack(raw) }
    end
    return dispatch(ctx, rest)
  end, function(e)
    if errors.is_usage(e) then return e end
    if ctx.debug or os.getenv("ASCOPE_DEBUG") then return debug.traceback(tostring(e), 2) end
    return e
  end)
  io.stdout:flush()
  if ok then return result end
  if errors.is_usage(result) then
    io.stderr:write("ascope: ", result.msg, "\n")
    return 2
  end
  io.stderr:write("ascope: ", tostring(result), "\n")
  if not ctx.debug then io.stderr:write("(run with --debug for a traceback)\n") end
  return 1
end

return M
