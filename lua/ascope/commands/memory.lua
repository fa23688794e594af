--- `ascope memory`: front end of the memory attribution job.
local memory = require "ascope.memory"
local report = require "ascope.report.memory"
local memory_html = require "ascope.report.memory_html"
local outputs = require "ascope.report.outputs"
local errors = require "ascope.errors"
local cli = require "ascope.cli"
local fmt = require "ascope.fmt"
local log = require "ascope.log"
local t = require("ascope.i18n").t
local fs = require("ascope_core").fs
local shard = require "ascope.shard"
local merge_command = require "ascope.commands.merge"

local M = { recipe = memory }

M.spec = {
  name = "memory",
  args = "INPUT [-o OUT] [options]",
  summary = {
    en = "attribute every NPU allocation (operator_memory.csv) to its Python call stack (trace_view.json)",
    zh = "将每次 NPU 内存申请（operator_memory.csv）关联到 Python 调用栈（trace_view.json）",
  },
  details = {
    en = [[INPUT is a profiling tree <in>/<role>/<..>_ascend_pt/ (any depth), one *_ascend_pt folder,
or an ASCEND_PROFILER_OUTPUT folder (memory_record.csv is read when present). Writes
OUT/memory_events.csv (one row per allocation or release, all ranks, in time order),
memory_summary.json, memory_report.md (per pool PTA / GE: peak, live at peak by call site, bytes
without a call stack; process memory per component; top call sites, never-released allocations),
memory_report.html (the same with charts) and memory_trace.json (open it in Perfetto UI or
chrome://tracing). Exit code 1 when a rank could not be read or was read in part, e.g. a trace
cut short (the rows are still written), 2 on a usage error.

--match latest: the latest same-name cpu_op with ts <= Allocation Time (the reference rule);
within: also Allocation Time <= ts + dur; within-or-latest: within, else latest.]],
    zh = [[INPUT 可为 profiling 目录树 <in>/<role>/<..>_ascend_pt/（任意深度）、单个 *_ascend_pt 目录或
ASCEND_PROFILER_OUTPUT 目录（如有 memory_record.csv 也会读取）。输出 OUT/memory_events.csv（所有 rank、
按时间排序）、memory_summary.json、memory_report.md（按内存池 PTA / GE：峰值、峰值时存活的调用点、无调用栈的
内存；各组件的进程内存；申请最多的调用点、未释放的申请）、memory_report.html（含图表）和 memory_trace.json（可在 Perfetto UI 或
chrome://tracing 打开）。有 rank 无法读取或只读到一部分（如 trace 被截断）时退出码为 1（记录照常写出），
参数错误为 2。]],
  },
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "folder for the results" },
    { "output-path", arg = "DIR", alias_of = "output" },
    { "input-path", arg = "PATH", alias_of = "input" },
    { "input-type", arg = "TYPE", choices = { "ascend_memory" }, help = "accepted for the reference tool's command line" },
    { "profiler-type", arg = "TYPE", choices = { "memory" }, help = "accepted for the reference tool's command line" },
    { "rank-list", arg = "LIST", default = "all", help = "ranks to read: all, or 0,2,4-7" },
    { "role", arg = "NAME", many = true, help = "only this role (repeatable)" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = cli.MAX_JOBS, help = "ranks read in parallel (default: CPUs)" },
    { "match", arg = "MODE", choices = { "latest", "within", "within-or-latest" },
      help = "how an allocation is matched to an operator (default from rules: latest)" },
    { "rules", arg = "FILE", help = "a rule file that adds to or overrides rules/memory.lua" },
    { "format", arg = "LIST", default = "csv,json,md,html,trace", help = "outputs to write: csv,json,md,html,trace" },
    { "layout", arg = "FILE", help = "a layout file for the HTML report (see rules/layout_memory.lua)" },
    shard.OPTION,
  },
  outputs = {
    { "memory_events.csv", format = "csv", help = {
      en = "one row per allocation or release, all ranks, in time order",
      zh = "每次申请或释放一行，所有 rank，按时间排序" } },
    { "memory_summary.json", format = "json", help = {
      en = "per rank: peak, live at peak, top call sites, never released; failed ranks",
      zh = "每个 rank 的峰值、峰值时存活、主要调用点、未释放；读取失败的 rank" } },
    { "memory_report.md", format = "md", help = { en = "the summary for people", zh = "供人阅读的摘要" } },
    { "memory_report.html", format = "html", help = {
      en = "charts: memory over time per rank, live at peak, top call sites",
      zh = "图表：各 rank 内存曲线、峰值时存活、主要调用点" } },
    { "memory_trace.json", format = "trace", help = {
      en = "Chrome trace for Perfetto UI or chrome://tracing",
      zh = "Chrome trace，可在 Perfetto UI 或 chrome://tracing 打开" } },
  },
  examples = {
    "ascope memory prof_data -o out",
    "ascope memory prof_data --rank-list 0-3 --role actor_update -j 4 --match within-or-latest",
    "ascope memory --input-path prof_data --input-type ascend_memory --profiler-type memory --output-path out",
  },
}

-- file, writer, weight (the relative cost of writing it: the events CSV and the trace carry a
-- row per event, the others a summary)
local WRITERS = {
  csv = { "memory_events.csv", report.events_csv, 4 },
  json = { "memory_summary.json", report.summary_json, 0.1 },
  md = { "memory_report.md", report.report_md, 0.1 },
  trace = { "memory_trace.json", report.trace_json, 3 },
  html = { "memory_report.html", function(res, path) return memory_html.write(res, path, res.layout_file) end, 1 },
}
local ORDER = { "csv", "trace", "json", "md", "html" }

local function check_formats(text)
  local formats = {}
  for f in text:gmatch("[^,%s]+") do
    if not WRITERS[f] then errors.usage("--format: unknown output %q (csv, json, md, html, trace)", f) end
    formats[f] = true
  end
  return formats
end

function M.main(opts, words, ctx)
  local input = opts.input or words[1]
  if not input then errors.usage("ascope memory needs INPUT (a profiling folder); see 'ascope help memory'") end
  if #words > (opts.input and 0 or 1) then errors.usage("unexpected argument %q", words[opts.input and 1 or 2]) end
  check_formats(opts.format)
  require("ascope.report.layout").check("memory", opts.layout)
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local st = fs.stat(input)
  if not st then error(input .. ": no such file or folder", 0) end

  local plan, err = memory.plan(input, {
    match = opts.match, rank_list = opts.rank_list, roles = opts.role, jobs = opts.jobs, rules = opts.rules,
  })
  if not plan then error(err, 0) end
  if #plan.units == 0 and #plan.context.unknown == 0 and #plan.context.unreadable == 0 then
    error(t("memory.no_ranks", input), 0)
  end
  return merge_command.run(M, plan, opts, ctx)
end

--- Write the outputs of a result and print its summary; returns the exit code.
function M.finish(result, opts)
  local formats = check_formats(opts.format)
  for _, d in ipairs(result.duplicates) do log.warn("%s", d) end
  for _, r in ipairs(result.ranks) do
    for _, w in ipairs(r.warnings) do log.warn("%s", w) end
    local s = r.summary
    -- only worth saying when the other mode would change a row
    if s.changed_by_fallback > 0 and s.match_mode == "latest" then
      log.warn("%s", t("memory.fallback", r.rank, s.suspect_latest_matches, s.latest_matches, s.changed_by_fallback))
    end
  end
  result.problems = memory.check_output(result)
  result.layout_file = opts.layout
  -- the outputs are written by worker processes that share the results through fork
  local out = opts.output
  local todo, written = {}, {}
  for _, f in ipairs(ORDER) do
    if formats[f] then
      local w = WRITERS[f]
      todo[#todo + 1] = { path = out .. "/" .. w[1], weight = w[3], write = function(path) return w[2](result, path) end }
      written[#written + 1] = out .. "/" .. w[1]
    end
  end
  local wok, werr = outputs.write(todo, opts.jobs)
  if not wok then error(werr, 0) end

  -- the short summary on stdout
  local total = 0
  for _, r in ipairs(result.ranks) do
    total = total + r.n
    local s = r.summary
    local peaks = {}
    for _, c in ipairs(s.components) do
      if c.peak then peaks[#peaks + 1] = t("memory.peak_item", c.component, c.peak.allocated_mb, fmt.ms(c.peak.time_ns)) end
    end
    print(t("memory.rank_line", r.rank, r.role, s.events, s.allocations, fmt.pct(s.match_rate), s.match_mode,
      #peaks > 0 and t("memory.peak_list", table.concat(peaks, ", ")) or ""))
  end
  print(t("memory.summary", #result.ranks, total, out))
  print(t("memory.outputs", table.concat(written, ", ")))
  -- every anomaly is said on stderr; the output checks are the findings of --fail-on and --json
  -- (an unread or partial rank already makes the exit code 1)
  local failed, partial, found, partial_ranks = false, 0, {}, {}
  for _, a in ipairs(memory.anomalies(result)) do
    if a.analysis == "memory check" then found[#found + 1] = a end
    if a.analysis == "memory partial" and not partial_ranks[a.rank] then
      partial_ranks[a.rank] = true
      partial = partial + 1
    end
    if tostring(a.severity):upper() == "ERROR" then
      log.error("%s", a.message)
      failed = true
    else
      log.warn("%s", a.message)
    end
  end
  if partial > 0 then log.error("%s", t("memory.partial_ranks", partial)) end
  if #result.failed > 0 then log.error("%s", t("memory.failed_ranks", #result.failed)) end
  return failed and 1 or 0, found, result, report.summary_data(result)
end

return M
