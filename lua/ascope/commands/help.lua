--- `ascope help [COMMAND]`: the list of commands, or one command's usage.
local cli = require "ascope.cli"
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"

local M = {}

M.spec = {
  name = "help",
  args = "[COMMAND]",
  summary = {
    en = "the list of commands, or the usage of one: ascope help memory",
    zh = "列出所有命令，或显示某个命令的用法：ascope help memory",
  },
  details = {
    en = "'ascope help COMMAND', 'ascope COMMAND --help' and 'ascope COMMAND -h' print the same text.",
    zh = "'ascope help COMMAND'、'ascope COMMAND --help' 与 'ascope COMMAND -h' 输出相同。",
  },
  options = {},
  text = true, -- help is for people: --json does not change it
  examples = { "ascope help", "ascope help timeline" },
}

--- The list of every command with its summary, and the global options.
function M.overview()
  local main = require "ascope.main"
  local lines = {
    "ascope " .. require("ascope.version") .. " - analysis toolkit for Ascend NPU profiling and failure data",
    "",
    i18n.t("cli.usage") .. " ascope [global options] <command> [options]",
    "",
    i18n.t("cli.commands"),
  }
  for _, name in ipairs(main.command_names()) do
    local spec = main.spec(name)
    lines[#lines + 1] = ("  %-10s %s"):format(name, i18n.pick(spec.summary))
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = i18n.t("cli.global_options")
  for _, o in ipairs(cli.globals) do
    lines[#lines + 1] = ("  %-20s %s"):format(cli.flag_text(o), i18n.pick(o.help))
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = i18n.t("cli.environment")
  for _, e in ipairs(main.environment) do lines[#lines + 1] = ("  %-20s %s"):format(e[1], i18n.pick(e[2])) end
  return table.concat(lines, "\n") .. "\n"
end

function M.main(_, words)
  local topic = words[1]
  if not topic then
    io.write(M.overview())
    return 0
  end
  if #words > 1 then errors.usage("unexpected argument %q", words[2]) end
  local main = require "ascope.main"
  if not main.commands[topic] then main.unknown_command(topic) end
  io.write(cli.help(main.spec(topic)))
  return 0
end

return M
