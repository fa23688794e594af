--- `ascope timeline`: front end of the timeline geometry job.
local timeline = require "ascope.timeline"
local report = require "ascope.report.timeline"
local timeline_html = require "ascope.report.timeline_html"
local outputs = require "ascope.report.outputs"
local errors = require "ascope.errors"
local cli = require "ascope.cli"
local log = require "ascope.log"
local shard = require "ascope.shard"
local merge_command = require "ascope.commands.merge"

local M = { recipe = timeline }

M.spec = {
  name = "timeline",
  args = "INPUT [-o OUT] [options]",
  summary = {
    en = "swimlane geometry of Ascend timelines: critical path, overlap, idle lanes, host-bound gaps, bubbles, jitter",
    zh = "Ascend timeline 泳道几何分析：关键路径、重叠率、泳道空挡、Host 下发、bubble、抖动",
  },
  details = {
    en = [[INPUT is a trace_view.json, an msprof_*.json, an ascend_pytorch_profiler_*.db, a
step_trace_time.csv or analysis.db (jitter only), or a profiling tree (every rank found).
step_trace_time.csv (else analysis.db) beside the trace is the profiler's own step split. Writes
OUT/timeline_metrics.json, timeline_report.md and timeline_report.html and prints a summary: the eight dimensions
of the typical (median) step, the expert rules that fire (rules/timeline.lua), and the metrics
dashboard (a key that could not be measured is left out); every finding names its evidence
(step, lane, operator and the view to open). Exit code 1 when a rank could not be read, 2 on a
usage error (an invalid regular expression included).]],
    zh = [[INPUT 可为 trace_view.json、msprof_*.json、ascend_pytorch_profiler_*.db 或 profiling 目录树（所有 rank）。
同目录的 step_trace_time.csv 用于 step 抖动分析。输出 OUT/timeline_metrics.json、timeline_report.md 与 timeline_report.html：
典型（中位）step 的八个维度、命中的专家规则（rules/timeline.lua，每条附举证视图）和指标看板（未测得的键不输出）。
退出码：有 rank 读取失败为 1，用法错误（含无效的正则表达式）为 2。]],
  },
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "folder for the results" },
    { "step-trace", arg = "FILE",
      help = "the profiler's step split: step_trace_time.csv or analysis.db (default: the one beside the trace)" },
    { "rank-list", arg = "LIST", default = "all", help = "ranks to read: all, or 0,2,4-7" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = cli.MAX_JOBS, help = "ranks analysed in parallel (default: CPUs)" },
    { "step", arg = "K", type = "int", help = "analyse step K (default: the step with the median wall time)" },
    { "compare-step", arg = "K", type = "int",
      help = "compare step K with the typical one (default: the worst long-tail step)" },
    { "pp", arg = "P", type = "int", min = 1, help = "pipeline stages, for the theoretical bubble" },
    { "microbatches", arg = "M", type = "int", min = 1, help = "micro-batches, for the theoretical bubble" },
    { "top", arg = "N", type = "int", min = 1, help = "rows in the ranked tables (default from rules: 10)" },
    { "device-regex", arg = "RE", help = "device lanes: a POSIX extended regular expression, case-insensitive (default from rules)" },
    { "comm-regex", arg = "RE", help = "communication lanes: a POSIX extended regular expression (default from rules)" },
    { "rules", arg = "FILE", help = "a rule file that adds to or overrides rules/timeline.lua" },
    { "format", arg = "LIST", default = "json,md,html", help = "outputs to write: json,md,html" },
    { "layout", arg = "FILE", help = "a layout file for the HTML report (see rules/layout_timeline.lua)" },
    shard.OPTION,
  },
  outputs = {
    { "timeline_metrics.json", format = "json", help = {
      en = "every dimension per rank, the dashboard and the findings",
      zh = "各 rank 的全部维度、指标看板与发现" } },
    { "timeline_report.md", format = "md", help = { en = "findings with evidence and the dashboard", zh = "带证据的发现与指标看板" } },
    { "timeline_report.html", format = "html", help = {
      en = "swimlanes, idle ratios, step times and the findings as charts",
      zh = "泳道、空闲率、step 耗时与发现的图表" } },
  },
  examples = {
    "ascope timeline rank0/ASCEND_PROFILER_OUTPUT/trace_view.json",
    "ascope timeline prof_dir -o out --pp 4 --microbatches 8 -j 4",
    "ascope timeline ascend_pytorch_profiler_0.db --step 12 --json",
  },
}

function M.main(opts, words, ctx)
  local input = words[1]
  if not input then errors.usage("ascope timeline needs INPUT (a trace, a .db or a profiling folder)") end
  if #words > 1 then errors.usage("unexpected argument %q", words[2]) end
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
    error(input .. ": no timeline found (trace_view.json, msprof_*.json or ascend_pytorch_profiler_*.db)", 0)
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
    if not w then errors.usage("--format: unknown output %q (json, md, html)", f) end
    todo[#todo + 1] = { path = out .. "/" .. w[1], write = w[2], weight = w[3] }
    names[#names + 1] = f
  end
  local wok, werr = outputs.write(todo, opts.jobs)
  if not wok then error(werr, 0) end
  print(report.text(res))
  print(require("ascope.i18n").t("timeline.results", #res.ranks, out, table.concat(names, ", ")))
  for _, r in ipairs(res.ranks) do
    if r.warning then log.warn("rank %s: %s: %s (left empty)", tostring(r.rank), r.trace, r.warning) end
    for _, w in ipairs(r.warnings or {}) do log.warn("rank %s: %s: %s", tostring(r.rank), r.trace, w) end
  end
  for _, f in ipairs(res.failed) do log.error("rank %s (%s): %s", tostring(f.rank or "?"), f.role or "", f.reason) end
  return #res.failed > 0 and 1 or 0, timeline.anomalies(res), res, report.data(res)
end

return M
