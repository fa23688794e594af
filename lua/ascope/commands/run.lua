--- `ascope run SCRIPT.lua [ARG ...]`: a user's script with the ascope API preloaded.
local errors = require "ascope.errors"

local M = {}

M.spec = {
  name = "run",
  args = "SCRIPT.lua [ARG ...]",
  summary = {
    en = "run a Lua script with the ascope API preloaded",
    zh = "运行 Lua 脚本（已预载 ascope API）",
  },
  details = {
    en = [[Runs SCRIPT.lua in the executable's Lua 5.4, where require "ascope" gives the primitives and the
analyses. The script sees arg[0] = SCRIPT.lua and arg[1..] = its ARGs, as lua5.4 sets them; every
word after SCRIPT.lua goes to the script untouched (global options go before it). A whole number
the script returns is the exit code (default 0); an error ends the run with exit code 1.]],
    zh = [[在可执行文件内置的 Lua 5.4 中运行 SCRIPT.lua，require "ascope" 即得到全部原语与分析。脚本中 arg[0] 为
SCRIPT.lua，arg[1..] 为其参数（与 lua5.4 相同）；SCRIPT.lua 之后的参数原样交给脚本（全局选项写在它之前）。
脚本返回的整数即退出码（默认 0）；脚本出错时退出码为 1。]],
  },
  options = {},
  script = true, -- the words after the script are its own
  examples = { "ascope run examples/top_allocators.lua prof_dir", "ascope --debug run my_analysis.lua out/" },
}

function M.main(_, words)
  local script = words[1]
  if not script then errors.usage("ascope run needs SCRIPT.lua; see 'ascope help run'") end
  local chunk, err = loadfile(script)
  if not chunk then error(err, 0) end
  local new_arg = { [0] = script }
  for i = 2, #words do new_arg[i - 1] = words[i] end
  _G.arg = new_arg
  local code = chunk(table.unpack(new_arg))
  return math.tointeger(code) or 0
end

return M
