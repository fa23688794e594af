--- `ascope moe`: MoE dispatch/combine hang diagnosis from window dumps.
local core = require "ascope_core"
local moe = require "ascope.moe"
local report = require "ascope.report.moe"
local field_html = require "ascope.report.field_html"
local errors = require "ascope.errors"
local outputs = require "ascope.report.outputs"
local cli = require "ascope.cli"
local log = require "ascope.log"
local i18n = require "ascope.i18n"
local shard = require "ascope.shard"
local merge_command = require "ascope.commands.merge"

local M = {}

M.spec = {
  name = "moe",
  args = "TARGET_DIR=... SOC_VERSION=950|910_93|910B [KEY=VALUE ...] [-o OUT]",
  summary = "cmd.moe.summary",
  details = "cmd.moe.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.moe.output" },
    { "target-dir", arg = "DIR", help = "opt.moe.target_dir" },
    { "soc-version", arg = "SOC", choices = { "910_93", "950", "910B" }, help = "opt.moe.soc_version" },
    { "share-expert-card-count", arg = "N", type = "int", min = 0, default = 0, help = "opt.moe.share_expert_card_count" },
    { "sp-moe-num", arg = "N", type = "int", min = 0, default = 0, help = "opt.moe.sp_moe_num" },
    { "tp-worldsize", arg = "N", type = "int", min = 1, default = 1, help = "opt.moe.tp_worldsize" },
    { "share-expert-num", arg = "N", type = "int", min = 0, default = 0, help = "opt.moe.share_expert_num" },
    { "start-a2-cluster", arg = "0|1", choices = { "0", "1" }, default = "0", help = "opt.moe.start_a2_cluster" },
    { "tool-path", arg = "DIR", help = "opt.moe.tool_path" },
    { "k", arg = "K", type = "int", min = 1, help = "opt.moe.k" },
    { "encoding", arg = "ENC", choices = { "utf8", "gbk" }, default = "utf8", help = "opt.moe.encoding" },
    { "rules", arg = "FILE", help = "opt.moe.rules" },
    { "format", arg = "LIST", default = "csv,json,html", help = "opt.moe.format" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = cli.MAX_JOBS, help = "opt.moe.jobs" },
    shard.OPTION,
  },
  keys = { TARGET_DIR = "target-dir", SOC_VERSION = "soc-version", SHARE_EXPERT_CARD_COUNT = "share-expert-card-count",
           SP_MOE_NUM = "sp-moe-num", TP_WORLDSIZE = "tp-worldsize", SHARE_EXPERT_NUM = "share-expert-num",
           START_A2_CLUSTER = "start-a2-cluster", TOOL_PATH = "tool-path" },
  outputs = {
    { "win_data.csv", format = "csv", help = "out.win_data.csv" },
    { "win_data_list.csv", format = "csv", help = "out.win_data_list.csv" },
    { "win_status_list.csv", format = "csv", help = "out.win_status_list.csv" },
    { "win_analysis_error.csv", format = "csv", help = "out.win_analysis_error.csv" },
    { "win_all_card_data.csv", format = "csv", help = "out.win_all_card_data.csv" },
    { "win_all_card_expandidx.csv", format = "csv", help = "out.win_all_card_expandidx.csv" },
    { "moe_summary.json", format = "json", help = "out.moe_summary.json" },
    { "moe_report.html", format = "html", help = "out.moe_report.html" },
  },
  examples = { "ascope moe TARGET_DIR=dumps SOC_VERSION=950 SHARE_EXPERT_CARD_COUNT=1 SHARE_EXPERT_NUM=1 -o out" },
}

-- A CSV written as UTF-8 rewritten as GBK in place (atomically); a file not written is skipped.
local function to_gbk(path)
  local f = io.open(path, "rb")
  if not f then return true end
  local text = f:read("a")
  f:close()
  local gbk, err = core.iconv.convert(text, "UTF-8", "GBK", path)
  if not gbk then return nil, i18n.t("moe.gbk_failed", err) end
  return core.fs.write(path, gbk)
end

local TAG = { INFO = "[INFO]", WARNING = "[WARNING]", ERROR = "[ERROR]" }

local function check_formats(text) return outputs.formats(text, { "csv", "json", "html" }) end

-- the steps as they run, on stderr; the findings are printed once, in the recap at the end
local function step_log(level, text) if level == "INFO" then log.line(level, text) end end

-- what a sharded run computes per card and across cards (see ascope.shard)
M.recipe = {
  plan = moe.plan, work = moe.work, rules = moe.rules,
  assemble = function(context, outcomes, rules) return moe.assemble(context, outcomes, rules, step_log) end,
}

function M.main(opts, words, ctx)
  if #words > 0 then errors.usage(i18n.t("cli.unexpected_parameter", words[1])) end
  if not opts.target_dir then errors.usage(i18n.t("cli.needs", "moe", "TARGET_DIR=...", "moe")) end
  if not opts.soc_version then errors.usage(i18n.t("cli.needs", "moe", "SOC_VERSION=910_93|950|910B", "moe")) end
  check_formats(opts.format)
  -- a rule file that does not hold is the command line's mistake, told once (not once per card)
  local rules_ok, rules_err = moe.rules(opts.rules)
  if not rules_ok then errors.usage("%s", rules_err) end
  local params = {
    target_dir = opts.target_dir, soc_version = opts.soc_version, rules = opts.rules,
    share_expert_card_count = opts.share_expert_card_count, sp_moe_num = opts.sp_moe_num,
    tp_worldsize = opts.tp_worldsize, share_expert_num = opts.share_expert_num, k = opts.k, log = step_log,
  }
  if opts.start_a2_cluster == "1" then
    -- the machines' summaries are already the per-card work: nothing left to shard
    if opts.shard then errors.usage("%s", i18n.t("moe.shard_a2")) end
    local res, err = moe.merge(params)
    if not res then error(err, 0) end
    return M.finish(res, opts, ctx)
  end
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local plan, err = moe.plan(params)
  if not plan then error(err, 0) end
  if #plan.units == 0 then error(i18n.t("moe.no_cards", opts.target_dir), 0) end
  local front = { spec = M.spec, recipe = M.recipe, finish = function(res, o) return M.finish(res, o, ctx) end }
  return merge_command.run(front, plan, opts, ctx)
end

--- Write the outputs of a result and print its summary; returns the exit code, the findings,
-- the result and its summary data.
function M.finish(res, opts, ctx)
  if #res.cards == 0 and #res.failed == 0 then error(i18n.t("moe.no_cards", opts.target_dir), 0) end
  if res.merged then print("[INFO] " .. i18n.t("moe.merged", #res.merged - #res.failed, #res.cards)) end
  local out = opts.output
  print("[INFO] " .. i18n.t("moe.archive", out))
  local formats = check_formats(opts.format)
  if formats.csv then report.csvs(res, out, opts.encoding ~= "gbk") end
  if formats.json then report.summary(res, out .. "/moe_summary.json") end
  if formats.html then
    local parts = field_html.moe_sections(res)
    table.insert(parts, 1, field_html.anomalies_section(report.sorted_anomalies(res)))
    local ok, werr = field_html.write(out .. "/moe_report.html", i18n.t("report.title.moe"), parts)
    if not ok then error(werr, 0) end
  end
  if opts.encoding == "gbk" then
    for _, f in ipairs(report.CSV_FILES) do
      local ok, gerr = to_gbk(out .. "/" .. f .. ".csv")
      if not ok then error(gerr, 0) end
    end
  end
  -- the slot-by-slot DETAIL lines are in win_analysis_error.csv; the verdict states the root cards (8)
  local shown = {}
  for _, a in ipairs(report.sorted_anomalies(res)) do
    if a.severity ~= "DETAIL" and a.analysis ~= "8" then shown[#shown + 1] = a end
  end
  print("[INFO] " .. i18n.t("moe.summary", #res.cards, #res.failed, #shown))
  if not (ctx and ctx.composed) then -- diagnose lists the findings and the verdict once, for all analyses
    for _, a in ipairs(shown) do print(("  %s %s"):format(TAG[a.severity] or a.severity, a.message)) end
    for _, l in ipairs(report.verdict(res)) do print(("%s %s"):format(TAG[l[1]] or l[1], l[2])) end
  end
  return (#res.failed > 0 or #(res.damaged or {}) > 0) and 1 or 0, moe.anomalies(res), res, report.summary_data(res)
end

return M
