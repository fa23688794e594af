--- `ascope version`: the versions of ascope and of the libraries it was built with.
local M = {}

M.spec = {
  name = "version",
  args = "",
  summary = "cmd.version.summary",
  details = "cmd.version.details",
  options = {},
  examples = { "ascope version" },
}

function M.main(_, words, ctx)
  if #words > 0 then require("ascope.errors").usage(require("ascope.i18n").t("cli.unexpected_argument", words[1])) end
  local v = require("ascope_core").versions()
  local ok, lpeg = pcall(require, "lpeg")
  local lv = ok and lpeg.version or "?"
  if type(lv) == "function" then lv = lv() end -- LPeg 1.0 has version(), 1.1 a string
  local data = { ascope = require "ascope.version", lua = v.lua, lpeg = tostring(lv), yajl = v.yajl, libcsv = v.libcsv,
                 sqlite = v.sqlite }
  if not (ctx and ctx.json) then
    io.write(("ascope %s\n"):format(data.ascope))
    io.write(("  %s, LPeg %s, yajl %s, libcsv %s, SQLite %s\n"):format(v.lua, lv, v.yajl, v.libcsv, v.sqlite))
  end
  return 0, nil, nil, data
end

return M
