--- `ascope plog`: classify the errors in Ascend plog and device logs.
local plog = require "ascope.plog"
local report = require "ascope.report.plog"
local errors = require "ascope.errors"
local log = require "ascope.log"
local front = require "ascope.commands.front"
local i18n = require "ascope.i18n"

local M = { spec = plog.spec }

--- Nothing is printed before the outputs are written.
function M.show_before() end

--- What is printed once they are: the categories, the failures, where the results are.
function M.show_after(res, opts)
  for _, l in ipairs(report.lines(res, plog.MAX_FAILURES)) do print(l) end
  for _, f in ipairs(res.failed) do log.error("%s", f.reason) end
  print(i18n.t("plog.results", opts.output, opts.format or "csv,json"))
end

function M.main(opts, words)
  local input = opts.input or words[1]
  if not input then errors.usage(i18n.t("cli.needs", "plog", "PLOG_PATH", "plog")) end
  front.formats(plog, opts) -- a usage error before any reading
  local res, err = plog.run({ input = input, rules = opts.rules, format = opts.format })
  if not res then error(err, 0) end
  return front.finish(M, plog, res, opts, report.data(res))
end

return M
