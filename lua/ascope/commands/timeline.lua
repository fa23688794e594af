--- `ascope timeline`: front end of the timeline geometry job.
local timeline = require "ascope.timeline"
local report = require "ascope.report.timeline"
local timeline_html = require "ascope.report.timeline_html"
local outputs = require "ascope.report.outputs"
local errors = require "ascope.errors"
local log = require "ascope.log"
local core = require "ascope_core"

local M = {}

M.spec = {
  name = "timeline",
  args = "INPUT [-o OUT] [options]",
  summary = {
    en = "swimlane geometry of Ascend timelines: critical path, overlap, idle lanes, host-bound gaps, bubbles, jitter",
    zh = "Ascend timeline 泳道几何分析：关键路径、重叠率、泳道空挡、Host 下发、bubble、抖动",
  },
  details = {
    en = [[INPUT is a trace_view.json, an msprof_*.json, an ascend_pytorch_profiler_*.db, or a profiling
tree (every rank found). step_trace_time.csv beside the trace is used for step jitter. Writes
OUT/timeline_metrics.json, timeline_report.md and timeline_report.html and prints a summary: the eight dimensions
of the typical (median) step, the expert rules that fire (rules/timeline.lua), and the metrics
dashboard (a key that could not be measured is left out). Exit code 1 when a rank could not be
read, 2 on a usage error.]],
    zh = [[INPUT 可为 trace_view.json、msprof_*.json、ascend_pytorch_profiler_*.db 或 profiling 目录树（所有 rank）。
同目录的 step_trace_time.csv 用于 step 抖动分析。输出 OUT/timeline_metrics.json、timeline_report.md 与 timeline_report.html：
典型（中位）step 的八个维度、命中的专家规则（rules/timeline.lua）和指标看板（未测得的键不输出）。]],
  },
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "folder for the results" },
    { "step-trace", arg = "CSV", help = "step_trace_time.csv (default: the one beside the trace)" },
    { "rank-list", arg = "LIST", default = "all", help = "ranks to read: all, or 0,2,4-7" },
    { "jobs", "j", arg = "N", type = "int", min = 1, help = "ranks analysed in parallel (default: CPUs)" },
    { "step", arg = "K", type = "int", help = "analyse step K (default: the step with the median duration)" },
    { "pp", arg = "P", type = "int", min = 1, help = "pipeline stages, for the theoretical bubble" },
    { "microbatches", arg = "M", type = "int", min = 1, help = "micro-batches, for the theoretical bubble" },
    { "top", arg = "N", type = "int", min = 1, help = "rows in the ranked tables (default from rules: 10)" },
    { "device-regex", arg = "RE", help = "device lanes, alternatives separated by | (default from rules)" },
    { "comm-regex", arg = "RE", help = "communication lanes (default from rules)" },
    { "rules", arg = "FILE", help = "a rule file that adds to or overrides rules/timeline.lua" },
    { "json", help = "print timeline_metrics.json to stdout instead of the summary" },
    { "format", arg = "LIST", default = "json,md,html", help = "outputs to write: json,md,html" },
    { "layout", arg = "FILE", help = "a layout file for the HTML report (see rules/layout_timeline.lua)" },
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

function M.main(opts, words)
  local input = words[1]
  if not input then errors.usage("ascope timeline needs INPUT (a trace, a .db or a profiling folder)") end
  if #words > 1 then errors.usage("unexpected argument %q", words[2]) end
  require("ascope.report.layout").check("timeline", opts.layout)
  local res, err = timeline.run(input, {
    rank_list = opts.rank_list, jobs = opts.jobs, rules = opts.rules, step = opts.step, pp = opts.pp,
    microbatches = opts.microbatches, top_n = opts.top, device_regex = opts.device_regex,
    comm_regex = opts.comm_regex, step_trace = opts.step_trace,
  })
  if not res then error(err, 0) end
  if #res.ranks == 0 and #res.failed == 0 then
    error(input .. ": no timeline found (trace_view.json, msprof_*.json or ascend_pytorch_profiler_*.db)", 0)
  end
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
  if opts.json then
    io.write(core.json.encode(report.data(res), { indent = 2 }), "\n")
  else
    print(report.text(res))
    print(("timeline: %d rank(s); results in %s: %s"):format(#res.ranks, out, table.concat(names, ", ")))
  end
  for _, f in ipairs(res.failed) do log.error("rank %s (%s): %s", tostring(f.rank or "?"), f.role or "", f.reason) end
  local found = {}
  for _, r in ipairs(res.ranks) do for _, f in ipairs(r.findings or {}) do found[#found + 1] = f end end
  return #res.failed > 0 and 1 or 0, found
end

return M
