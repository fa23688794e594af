--- `ascope timeline`: front end of the timeline geometry job.
local timeline = require "ascope.timeline"
local report = require "ascope.report.timeline"
local timeline_html = require "ascope.report.timeline_html"
local outputs = require "ascope.report.outputs"
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"
local cli = require "ascope.cli"
local log = require "ascope.log"
local shard = require "ascope.shard"
local merge_command = require "ascope.commands.merge"

local M = { recipe = timeline }

M.spec = {
  name = "timeline",
  args = "INPUT [-o OUT] [options]",
  summary = "cmd.timeline.summary",
  details = "cmd.timeline.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.timeline.output" },
    { "step-trace", arg = "FILE",
      help = "opt.timeline.step_trace" },
    { "rank-list", arg = "LIST", default = "all", help = "opt.rank_list" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = cli.MAX_JOBS, help = "opt.timeline.jobs" },
    { "step", arg = "K", type = "int", help = "opt.timeline.step" },
    { "compare-step", arg = "K", type = "int",
      help = "opt.timeline.compare_step" },
    { "pp", arg = "P", type = "int", min = 1, help = "opt.timeline.pp" },
    { "microbatches", arg = "M", type = "int", min = 1, help = "opt.timeline.microbatches" },
    { "top", arg = "N", type = "int", min = 1, help = "opt.timeline.top" },
    { "device-regex", arg = "RE", help = "opt.timeline.device_regex" },
    { "comm-regex", arg = "RE", help = "opt.timeline.comm_regex" },
    { "rules", arg = "FILE", help = "opt.timeline.rules" },
    { "format", arg = "LIST", default = "json,md,html", help = "opt.timeline.format" },
    { "layout", arg = "FILE", help = "opt.timeline.layout" },
    shard.OPTION,
  },
  outputs = {
    { "timeline_metrics.json", format = "json", help = "out.timeline_metrics.json" },
    { "timeline_report.md", format = "md", help = "out.timeline_report.md" },
    { "timeline_report.html", format = "html", help = "out.timeline_report.html" },
  },
  examples = {
    "ascope timeline rank0/ASCEND_PROFILER_OUTPUT/trace_view.json",
    "ascope timeline prof_dir -o out --pp 4 --microbatches 8 -j 4",
    "ascope timeline ascend_pytorch_profiler_0.db --step 12 --json",
  },
}

function M.main(opts, words, ctx)
  local input = words[1]
  if not input then errors.usage(i18n.t("cli.needs", "timeline", "INPUT", "timeline")) end
  if #words > 1 then errors.usage(i18n.t("cli.unexpected_argument", words[2])) end
  require("ascope.report.layout").check("timeline", opts.layout)
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local plan, err, kind = timeline.plan(input, {
    rank_list = opts.rank_list, jobs = opts.jobs, rules = opts.rules, step = opts.step, pp = opts.pp,
    microbatches = opts.microbatches, top_n = opts.top, device_regex = opts.device_regex,
    comm_regex = opts.comm_regex, step_trace = opts.step_trace, compare_step = opts.compare_step,
  })
  if not plan and kind == "usage" then errors.usage("%s", err) end
  if not plan then error(err, 0) end
  if #plan.units == 0 and #plan.context.missing == 0 then
    error(i18n.t("timeline.no_timeline", input), 0)
  end
  return merge_command.run(M, plan, opts, ctx)
end

--- Write the outputs of a result and print its summary; returns the exit code.
function M.finish(res, opts)
  local out = opts.output
  local writers = {
    json = { "timeline_metrics.json", function(path) return report.metrics_json(res, path) end },
    md = { "timeline_report.md", function(path) return report.report_md(res, path) end },
    html = { "timeline_report.html", function(path) return timeline_html.write(res, path, opts.layout) end, 2 },
  }
  local todo, names = {}, {}
  for f in opts.format:gmatch("[^,%s]+") do
    local w = writers[f]
    if not w then errors.usage(i18n.t("cli.unknown_format", f, "json, md, html")) end
    todo[#todo + 1] = { path = out .. "/" .. w[1], write = w[2], weight = w[3] }
    names[#names + 1] = f
  end
  local wok, werr = outputs.write(todo, opts.jobs)
  if not wok then error(werr, 0) end
  print(report.text(res))
  print(require("ascope.i18n").t("timeline.results", #res.ranks, out, table.concat(names, ", ")))
  for _, r in ipairs(res.ranks) do
    if r.warning then log.warn("%s", i18n.t("timeline.trace_warning", tostring(r.rank), r.trace, r.warning)) end
    for _, w in ipairs(r.warnings or {}) do log.warn("%s", i18n.t("timeline.rank_warning", tostring(r.rank), r.trace, w)) end
  end
  for _, f in ipairs(res.failed) do log.error("%s", i18n.t("timeline.rank_failed", tostring(f.rank or "?"), f.role or "", f.reason)) end
  return #res.failed > 0 and 1 or 0, timeline.anomalies(res), res, report.data(res)
end

return M
