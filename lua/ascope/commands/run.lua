--- `ascope run SCRIPT.lua [ARG ...]`: a user's script with the ascope API preloaded.
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"

local M = {}

M.spec = {
  name = "run",
  args = "SCRIPT.lua [ARG ...]",
  summary = "cmd.run.summary",
  details = "cmd.run.details",
  options = {},
  script = true, -- the words after the script are its own
  examples = { "ascope run examples/top_allocators.lua prof_dir", "ascope --debug run my_analysis.lua out/" },
}

function M.main(_, words)
  local script = words[1]
  if not script then errors.usage(i18n.t("cli.needs", "run", "SCRIPT.lua", "run")) end
  local chunk, err = loadfile(script)
  if not chunk then error(err, 0) end
  local new_arg = { [0] = script }
  for i = 2, #words do new_arg[i - 1] = words[i] end
  _G.arg = new_arg
  local code = chunk(table.unpack(new_arg))
  return math.tointeger(code) or 0
end

return M
