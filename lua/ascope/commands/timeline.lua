--- `ascope timeline`: front end of the timeline geometry job (ascope.timeline): the
-- arguments, the plan (or a shard of it), the outputs, the summary and the exit code.
local timeline = require "ascope.timeline"
local report = require "ascope.report.timeline"
local recipe = require "ascope.recipe"
local errors = require "ascope.errors"
local log = require "ascope.log"
local t = require("ascope.i18n").t
local shard = require "ascope.shard"
local merge_command = require "ascope.commands.merge"

local M = { recipe = timeline }

M.spec = timeline.spec

function M.main(opts, words, ctx)
  local input = words[1]
  if not input then errors.usage(t("cli.needs", "timeline", "INPUT", "timeline")) end
  if #words > 1 then errors.usage(t("cli.unexpected_argument", words[2])) end
  local _, ferr = recipe.formats(timeline.spec, opts.format)
  if ferr then errors.usage("%s", ferr) end
  require("ascope.report.layout").check("timeline", opts.layout)
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local plan, err, kind = timeline.plan({
    input = input, rank_list = opts.rank_list, jobs = opts.jobs, rules = opts.rules, step = opts.step, pp = opts.pp,
    microbatches = opts.microbatches, top = opts.top, device_regex = opts.device_regex,
    comm_regex = opts.comm_regex, step_trace = opts.step_trace, compare_step = opts.compare_step,
  })
  if not plan and kind == "usage" then errors.usage("%s", err) end
  if not plan then error(err, 0) end
  return merge_command.run(M, plan, opts, ctx)
end

--- Write the outputs of a result and print its summary; returns the exit code.
function M.finish(res, opts)
  local wok, werr = timeline.write(res, opts.output, { formats = opts.format, layout = opts.layout, jobs = opts.jobs })
  if not wok then error(werr, 0) end
  print(report.text(res))
  print(t("timeline.results", #res.ranks, opts.output, table.concat(recipe.formats(timeline.spec, opts.format), ", ")))
  for _, r in ipairs(res.ranks) do
    if r.warning then log.warn("%s", t("timeline.trace_warning", tostring(r.rank), r.trace, r.warning)) end
    for _, w in ipairs(r.warnings or {}) do
      -- a rank with its step split alone has no trace: its warnings name the split themselves
      log.warn("%s", r.trace and t("timeline.rank_warning", tostring(r.rank), r.trace, w)
        or t("timeline.split_warning", tostring(r.rank), w))
    end
  end
  local unread = 0
  for _, r in ipairs(res.ranks) do
    if r.split_unread then
      log.error("%s", t("timeline.split_unread", tostring(r.rank), r.split_unread))
      unread = unread + 1
    end
  end
  for _, f in ipairs(res.failed) do
    log.error("%s", f.unmatched and f.reason or t("input.rank_failed", tostring(f.rank or "?"), f.role or "", f.reason))
  end
  return (#res.unreadable > 0 or unread > 0) and 1 or 0, timeline.anomalies(res), res, report.data(res)
end

return M
