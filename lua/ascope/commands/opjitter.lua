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
  summary = {
    en = "operators whose duration jitters across cards (kernel_details.csv / op_summary_*.csv), and aiv outliers",
    zh = "按卡对比算子耗时抖动（kernel_details.csv / op_summary_*.csv），并检查 aiv 指标异常",
  },
  details = {
    en = [[Finds every card's kernel_details.csv or op_summary_*.csv under PROFILING_PATH (the card from
Device_id, the rank of its *_ascend_pt folder, or a folder name), lines up the n-th call of each
operator type across cards with card 0 as the reference, and writes OUT/profiling_all_data.csv
(max, min, jitter = max - min, one column per card, NA for missing values or cards),
OUT/profiling_avg_data.csv (calls, valid calls - call 0 and calls with fewer than two values
left out - and the average jitter in us) OUT/opjitter_summary.json and OUT/opjitter_report.html. The aiv columns of the
dispatch/combine families are checked against the mean of the card's calls (rules/opjitter.lua).
A missing card is reported and shown as NA; exit code 1 when a file could not be read.]],
    zh = [[在 PROFILING_PATH 下查找每张卡的 kernel_details.csv 或 op_summary_*.csv，以 0 卡为基准按调用次数对齐各卡
同类算子耗时，输出 profiling_all_data.csv、profiling_avg_data.csv、opjitter_summary.json 与 opjitter_report.html，并对 dispatch/combine
算子的 aiv 指标做均值 ±50% 检查。缺失的卡输出 NA 并报告。]],
  },
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "folder for the results" },
    { "profiling-path", arg = "PATH", alias_of = "input" },
    { "cards", arg = "N", type = "int", min = 1, max = 1 << 20, help = "cards expected (default: up to the highest found)" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = cli.MAX_JOBS, help = "files read in parallel (default: CPUs)" },
    { "rules", arg = "FILE", help = "a rule file that adds to or overrides rules/opjitter.lua" },
    { "format", arg = "LIST", default = "csv,json,html", help = "outputs to write: csv,json,html" },
    shard.OPTION,
  },
  keys = { PROFILING_PATH = "profiling-path" },
  outputs = {
    { "profiling_all_data.csv", format = "csv", help = {
      en = "per operator and call: max, min, jitter, one column per card",
      zh = "每个算子每次调用：最大、最小、抖动，每卡一列" } },
    { "profiling_avg_data.csv", format = "csv", help = {
      en = "per operator: calls, valid calls, average jitter (us)",
      zh = "每个算子：调用次数、有效次数、平均抖动（us）" } },
    { "opjitter_summary.json", format = "json", help = { en = "the above, missing cards and aiv outliers", zh = "以上内容、缺失的卡与 aiv 异常" } },
    { "opjitter_report.html", format = "html", help = {
      en = "a heat map of jitter (operator x call) and the worst operators per card",
      zh = "抖动热力图（算子 x 调用）与最不稳定算子的各卡耗时" } },
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
  if not input then errors.usage("ascope opjitter needs PROFILING_PATH; see 'ascope help opjitter'") end
  check_formats(opts.format)
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local plan, err = opjitter.plan(input, { rules = opts.rules, cards = opts.cards, jobs = opts.jobs })
  if not plan then error(err, 0) end
  if #plan.units == 0 then error(input .. ": no kernel_details.csv or op_summary_*.csv found", 0) end
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
