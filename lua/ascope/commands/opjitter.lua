--- `ascope opjitter`: per-operator duration jitter across cards, and aiv checks.
local opjitter = require "ascope.opjitter"
local report = require "ascope.report.opjitter"
local field_html = require "ascope.report.field_html"
local errors = require "ascope.errors"
local outputs = require "ascope.report.outputs"
local i18n = require "ascope.i18n"
local shard = require "ascope.shard"
local merge_command = require "ascope.commands.merge"
local cli = require "ascope.cli"
local log = require "ascope.log"

local M = { recipe = opjitter }

M.spec = {
  name = "opjitter",
  args = "PROFILING_PATH [-o OUT] [options]",
  summary = "cmd.opjitter.summary",
  details = "cmd.opjitter.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.opjitter.output" },
    { "profiling-path", arg = "PATH", alias_of = "input" },
    { "cards", arg = "N", type = "int", min = 1, max = 1 << 20, help = "opt.opjitter.cards" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = cli.MAX_JOBS, help = "opt.opjitter.jobs" },
    { "rules", arg = "FILE", help = "opt.opjitter.rules" },
    { "format", arg = "LIST", default = "csv,json,html", help = "opt.opjitter.format" },
    shard.OPTION,
  },
  keys = { PROFILING_PATH = "profiling-path" },
  outputs = {
    { "profiling_all_data.csv", format = "csv", help = "out.profiling_all_data.csv" },
    { "profiling_avg_data.csv", format = "csv", help = "out.profiling_avg_data.csv" },
    { "opjitter_summary.json", format = "json", help = "out.opjitter_summary.json" },
    { "opjitter_report.html", format = "html", help = "out.opjitter_report.html" },
  },
  examples = { "ascope opjitter prof_dir -o out", "ascope opjitter PROFILING_PATH=prof_dir --cards 16" },
}

local OUTPUTS = { { "csv", "profiling_all_data.csv", report.all_csv }, { "csv", "profiling_avg_data.csv", report.avg_csv },
                  { "json", "opjitter_summary.json", report.summary_json },
                  { "html", "opjitter_report.html", function(r, p)
                    return field_html.write(p, i18n.t("report.title.opjitter"), field_html.opjitter_sections(r)) end } }

local function check_formats(text) return outputs.formats(text, { "csv", "json", "html" }) end

function M.main(opts, words, ctx)
  local input = opts.input or words[1]
  if not input then errors.usage(i18n.t("cli.needs", "opjitter", "PROFILING_PATH", "opjitter")) end
  check_formats(opts.format)
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local plan, err = opjitter.plan(input, { rules = opts.rules, cards = opts.cards, jobs = opts.jobs })
  if not plan then error(err, 0) end
  if #plan.units == 0 then error(i18n.t("opjitter.no_files", input), 0) end
  return merge_command.run(M, plan, opts, ctx)
end

--- Write the outputs of a result and print its summary; returns the exit code.
function M.finish(res, opts)
  local out = opts.output
  local formats = check_formats(opts.format)
  for _, w in ipairs(res.warnings) do log.warn("%s", w) end
  local werrs = {} -- every output is tried: one that cannot be written does not stop the others
  for _, w in ipairs(OUTPUTS) do
    if formats[w[1]] then
      local ok, werr = w[3](res, out .. "/" .. w[2])
      if not ok then werrs[#werrs + 1] = tostring(werr) end
    end
  end
  for _, f in ipairs(res.failed) do log.error("%s", f.reason) end
  if #werrs > 0 then error(table.concat(werrs, "; "), 0) end
  for _, l in ipairs(report.lines(res)) do print(l) end
  print(i18n.t("opjitter.results", out, opts.format))
  return #res.failed > 0 and 1 or 0, opjitter.anomalies(res), res, report.data(res)
end

return M
