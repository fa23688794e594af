--- `ascope opjitter`: per-operator duration jitter across cards, and aiv checks.
local opjitter = require "ascope.opjitter"
local report = require "ascope.report.opjitter"
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"
local shard = require "ascope.shard"
local merge_command = require "ascope.commands.merge"
local front = require "ascope.commands.front"
local log = require "ascope.log"

local M = { recipe = opjitter, spec = opjitter.spec }

function M.main(opts, words, ctx)
  local input = opts.input or words[1]
  if not input then errors.usage(i18n.t("cli.needs", "opjitter", "PROFILING_PATH", "opjitter")) end
  front.formats(opjitter, opts) -- a usage error before any reading
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local plan, err = opjitter.plan(input, { rules = opts.rules, cards = opts.cards, jobs = opts.jobs })
  if not plan then error(err, 0) end
  if #plan.units == 0 then error(i18n.t("opjitter.no_files", input), 0) end
  return merge_command.run(M, plan, opts, ctx)
end

--- What is told before the outputs are written: the warnings of the files read and the files
-- that could not be read (stderr).
function M.show_before(res)
  for _, w in ipairs(res.warnings) do log.warn("%s", w) end
  for _, f in ipairs(res.failed) do log.error("%s", f.reason) end
end

--- What is printed once they are: the cards, the worst operators, the aiv outliers, where the
-- results are.
function M.show_after(res, opts)
  for _, l in ipairs(report.lines(res)) do print(l) end
  print(i18n.t("opjitter.results", opts.output, opts.format))
end


--- Write the outputs of a result and print its summary; returns the exit code, the findings,
-- the result and its summary data.
function M.finish(res, opts)
  return front.finish(M, opjitter, res, opts, report.data(res))
end

return M
