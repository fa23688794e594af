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
  summary = "cmd.memory.summary",
  details = "cmd.memory.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.memory.output" },
    { "output-path", arg = "DIR", alias_of = "output" },
    { "input-path", arg = "PATH", alias_of = "input" },
    { "input-type", arg = "TYPE", choices = { "ascend_memory" }, help = "opt.memory.input_type" },
    { "profiler-type", arg = "TYPE", choices = { "memory" }, help = "opt.memory.profiler_type" },
    { "rank-list", arg = "LIST", default = "all", help = "opt.rank_list" },
    { "role", arg = "NAME", many = true, help = "opt.memory.role" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = cli.MAX_JOBS, help = "opt.memory.jobs" },
    { "match", arg = "MODE", choices = { "latest", "within", "within-or-latest" },
      help = "opt.memory.match" },
    { "rules", arg = "FILE", help = "opt.memory.rules" },
    { "format", arg = "LIST", default = "csv,json,md,html,trace", help = "opt.memory.format" },
    { "layout", arg = "FILE", help = "opt.memory.layout" },
    shard.OPTION,
  },
  outputs = {
    { "memory_events.csv", format = "csv", help = "out.memory_events.csv" },
    { "memory_summary.json", format = "json", help = "out.memory_summary.json" },
    { "memory_report.md", format = "md", help = "out.memory_report.md" },
    { "memory_report.html", format = "html", help = "out.memory_report.html" },
    { "memory_trace.json", format = "trace", help = "out.memory_trace.json" },
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
    if not WRITERS[f] then errors.usage(t("cli.unknown_format", f, "csv, json, md, html, trace")) end
    formats[f] = true
  end
  return formats
end

function M.main(opts, words, ctx)
  local input = opts.input or words[1]
  if not input then errors.usage(t("cli.needs", "memory", "INPUT", "memory")) end
  if #words > (opts.input and 0 or 1) then errors.usage(t("cli.unexpected_argument", words[opts.input and 1 or 2])) end
  check_formats(opts.format)
  require("ascope.report.layout").check("memory", opts.layout)
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local st = fs.stat(input)
  if not st then error(t("input.no_such", input), 0) end

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
