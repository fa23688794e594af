--- The ascope executable's entry point: global options, command dispatch, help.
-- replaced by add_user_path when ASCOPE_PATH is set
local cli = require "ascope.cli"
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"
local log = require "ascope.log"

local M = {}

M.VERSION = require "ascope.version"

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
  run = "ascope.commands.run",
  help = "ascope.commands.help",
  version = "ascope.commands.version",
}

-- the analyses in alphabetical order, then these
local TOOLS = { "merge", "run", "help", "version" }

--- The environment variables ascope reads, for help texts and the man page.
M.environment = {
  { "ASCOPE_PATH", "env.ASCOPE_PATH" },
  { "ASCOPE_RULES_DIR", "env.ASCOPE_RULES_DIR" },
  { "ASCOPE_DEBUG", "env.ASCOPE_DEBUG" },
  { "ASCOPE_STRING_MEMORY", "env.ASCOPE_STRING_MEMORY" },
  { "TMPDIR", "env.TMPDIR" },
  { "LC_ALL, LC_MESSAGES, LANG", "env.LANG" },
  { "NO_COLOR", "env.NO_COLOR" },
}

--- Every command name in the order help lists them.
function M.command_names()
  local names = {}
  for name in pairs(M.commands) do
    local tool = false
    for _, t in ipairs(TOOLS) do tool = tool or t == name end
    if not tool then names[#names + 1] = name end
  end
  table.sort(names)
  for _, t in ipairs(TOOLS) do names[#names + 1] = t end
  return names
end

function M.command_list() return table.concat(M.command_names(), ", ") end

--- The option spec of a command.
function M.spec(name) return require(M.commands[name]).spec end

--- A usage error for a word that is not a command, with the likely one.
function M.unknown_command(word)
  errors.usage(i18n.t("cli.unknown_command", word, cli.did_you_mean(word, M.command_names()), M.command_list()))
end

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
  -- this module's own are among those just dropped: the commands load the new ones, and it is
  -- those that must get the log's sink, the language and the usage errors' type (with the old
  -- ones every warning and error line went nowhere and --lang was ignored)
  cli, errors, i18n, log = require "ascope.cli", require "ascope.errors", require "ascope.i18n", require "ascope.log"
end

local function apply(ctx)
  log.set_sink(log.stderr) -- the library is silent until a front end gives it somewhere to speak
  require("ascope.workers").default = nil -- the command line's -j defaults to the CPUs
  log.quiet = ctx.quiet or false
  i18n.set(ctx.lang)
  if ctx.rules_dir then require("ascope.rules").set_dir(ctx.rules_dir) end
end

-- The commands print their summary and findings with print(); while a command runs (M.main puts
-- the plain one back), print paints the severity tags on a terminal and writes out the control
-- characters of names from the data (log.visible). With --json the text is
-- left out and the command's summary data and findings are printed as one JSON document.
-- Scripts keep the plain print, and help stays text. A command returns code, findings, result,
-- summary data.
local plain_print = print
local function call(command, opts, words, ctx)
  local script = command.spec.script or command.spec.text
  if ctx.json and not script then
    rawset(_G, "print", function() end)
  elseif not script then
    rawset(_G, "print", log.print) -- tags painted on a terminal; the data's control characters written out
  end
  local code, found, _, summary = command.main(opts, words, ctx)
  if ctx.json and not script then
    rawset(_G, "print", plain_print)
    io.write(require("ascope.report.stdout_json").encode(command.spec.name, code or 0, summary, found, opts.output), "\n")
  end
  return code, found
end

-- global options, the command, its options and words
local function dispatch(argv, ctx)
  if argv[1] == "--version" then argv[1] = "version" end
  local lead, rest = cli.parse_leading(cli.globals, argv)
  for k, v in pairs(lead) do ctx[k] = v end
  apply(ctx)
  local name = table.remove(rest, 1)
  if name == nil then
    io.write(require("ascope.commands.help").overview())
    return 0
  end
  if not M.commands[name] then M.unknown_command(name) end
  ctx.command = name
  local command = require(M.commands[name])
  local opts, words
  if command.spec.script then
    -- `ascope run [global options] SCRIPT [args]`: the words after the script are the script's
    local g
    g, words = cli.parse_leading(cli.globals, rest)
    for k, v in pairs(g) do ctx[k] = v end
    opts = {}
  else
    local g
    opts, words, g = cli.parse(command.spec, rest, cli.globals)
    for k, v in pairs(g) do ctx[k] = v end
  end
  apply(ctx)
  if ctx.help then
    io.write(cli.help(command.spec))
    return 0
  end
  if opts.output then cli.check_output(opts.output) end
  -- the string tables read it in C (strtab.c), where digits only, up to SIZE_MAX >> 21 MiB, are
  -- a number of MiB; anything else keeps 16
  local memory = os.getenv("ASCOPE_STRING_MEMORY")
  if memory and memory ~= "" and not (memory:match("^%d+$") and tonumber(memory) <= (math.maxinteger >> 20)) then
    log.warn("%s", i18n.t("env.string_memory_bad", memory))
  end
  -- --fail-on error|warning: exit 3 when a finding at or above it exists (1 and 2 win over it)
  local code, found = call(command, opts, words, ctx)
  return require("ascope.findings").exit_code(code or 0, found, ctx.fail_on)
end

--- Run the program with the host's arg table; returns the exit code.
function M.main(argv)
  add_user_path()
  local words = {}
  for i = 1, #argv do words[i] = argv[i] end
  local ctx = {}
  local ok, result = xpcall(dispatch, function(e)
    if errors.is_usage(e) then return e end
    if ctx.debug or os.getenv("ASCOPE_DEBUG") then return debug.traceback(tostring(e), 2) end
    return e
  end, words, ctx)
  rawset(_G, "print", plain_print)
  if ok then
    io.stdout:flush()
    return result
  end
  local code = errors.is_usage(result) and 2 or 1
  local msg = errors.is_usage(result) and result.msg or tostring(result)
  -- --json: a script reading stdout gets a document whatever happened
  if ctx.json then io.write(require("ascope.report.stdout_json").encode_error(ctx.command, code, msg), "\n") end
  io.stdout:flush()
  io.stderr:write("ascope: ", log.visible(msg), "\n")
  if code == 1 and not ctx.debug then io.stderr:write(i18n.t("main.debug_hint"), "\n") end
  return code
end

return M
