--- `ascope help [COMMAND]`: the list of commands, or one command's usage.
local cli = require "ascope.cli"
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"

local M = {}

M.spec = {
  name = "help",
  args = "[COMMAND]",
  summary = "cmd.help.summary",
  details = "cmd.help.details",
  options = {},
  text = true, -- help is for people: --json does not change it
  examples = { "ascope help", "ascope help timeline" },
}

--- The list of every command with its summary, and the global options.
function M.overview()
  local main = require "ascope.main"
  local lines = {
    "ascope " .. require("ascope.version") .. " - " .. i18n.t("help.tagline"),
    "",
    i18n.t("cli.usage") .. " " .. i18n.t("help.synopsis"),
    "",
    i18n.t("cli.commands"),
  }
  for _, name in ipairs(main.command_names()) do
    local spec = main.spec(name)
    lines[#lines + 1] = ("  %-10s %s"):format(name, i18n.t(spec.summary))
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = i18n.t("cli.global_options")
  for _, o in ipairs(cli.globals) do
    lines[#lines + 1] = ("  %-20s %s"):format(cli.flag_text(o), i18n.t(o.help))
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = i18n.t("cli.environment")
  for _, e in ipairs(main.environment) do lines[#lines + 1] = ("  %-20s %s"):format(e[1], i18n.t(e[2])) end
  return table.concat(lines, "\n") .. "\n"
end

function M.main(_, words)
  local topic = words[1]
  if not topic then
    io.write(M.overview())
    return 0
  end
  if #words > 1 then errors.usage(i18n.t("cli.unexpected_argument", words[2])) end
  local main = require "ascope.main"
  if not main.commands[topic] then main.unknown_command(topic) end
  io.write(cli.help(main.spec(topic)))
  return 0
end

return M
