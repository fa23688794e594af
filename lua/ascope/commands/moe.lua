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
  summary = {
    en = "diagnose MoeDistributeDispatch/Combine hangs from the window dumps of every card",
    zh = "根据各卡 win 区 dump 数据诊断 MoeDistributeDispatch/Combine 卡死",
  },
  details = {
    en = [[Cards are TARGET_DIR/<n>/ in numeric order. Each card folder holds a raw Ascend exception dump,
files split by msaicerr (*.workspace.<i>.*.npy, *.input.<i>.*.npy|bin), or an mc2_exception_info_*
window dump; the window is the last 1 MiB of workspace 1 (910_93) or of the mc2 file (950, 910B),
laid out as rules/win_layout.lua says. Per card: 1 input checks, 2 execution order, 3 dispatch
and 4 combine status bits, 5 CSV archive; across cards: 6 run counts, expert counts and globalBs,
7 epSendCounts and assistInfoForCombine (V1: expandIdx) of the cards in combine, 8 who waits for
whom and the root cards (the run ends with this verdict). Writes OUT/win_data.csv,
win_data_list.csv, win_status_list.csv, win_analysis_error.csv, win_all_card_data.csv,
win_all_card_expandidx.csv (UTF-8 with BOM, --encoding gbk for the old consumers),
moe_summary.json and moe_report.html. The step-by-step lines of each card go to stderr, the
summary, the anomalies and the verdict to stdout. Exit code 1 when a card's dump could not
be read, holds window fields no window can hold (a shifted or damaged window) or an expertIds
input that does not fit its shape, or a machine's moe_summary.json cannot be merged: the card or
machine is named, the others are still analysed and written. With --shard K/N only the K-th of N
slices of the cards is read and analysed (checks 1-4) into a partial result; 'ascope merge' of all
N parts runs 6, 7 and 8 over every card and writes the outputs of the single run.]],
    zh = [[按数字顺序读取 TARGET_DIR/<n>/ 各卡目录中的原始 dump、msaicerr 拆分文件或 mc2_exception_info 窗口 dump，
解析 win 区（布局见 rules/win_layout.lua），依次进行 1 输入异常分析、2 执行序分析、3 dispatch 与 4 combine 状态位
分析、5 数据归档、6 多卡对比、7 epSendCounts/assistInfoForCombine 校验、8 各卡等待关系与起始卡（结论），
输出 win_*.csv、moe_summary.json 与 moe_report.html。使用 --shard K/N 时只读取并分析第 K 个（共 N 个）卡分片
（1-4 项）并写出部分结果；'ascope merge' 合并全部 N 个部分后对所有卡进行 6、7、8 项分析，输出与单次运行相同。]],
  },
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "folder for the results" },
    { "target-dir", arg = "DIR", help = "folder of the card folders <n>/" },
    { "soc-version", arg = "SOC", choices = { "910_93", "950", "910B" }, help = "the SoC the dumps come from" },
    { "share-expert-card-count", arg = "N", type = "int", min = 0, default = 0, help = "shared-expert cards" },
    { "sp-moe-num", arg = "N", type = "int", min = 0, default = 0, help = "special experts" },
    { "tp-worldsize", arg = "N", type = "int", min = 1, default = 1, help = "TP world size" },
    { "share-expert-num", arg = "N", type = "int", min = 0, default = 0, help = "shared experts" },
    { "start-a2-cluster", arg = "0|1", choices = { "0", "1" }, default = "0", help = "merge per-machine results (A2)" },
    { "tool-path", arg = "DIR", help = "accepted for the reference script; not needed" },
    { "k", arg = "K", type = "int", min = 1, help = "top-k when no expertIds input is in the dumps" },
    { "encoding", arg = "ENC", choices = { "utf8", "gbk" }, default = "utf8", help = "CSV encoding" },
    { "rules", arg = "FILE", help = "a rule file that adds to or overrides rules/win_layout.lua" },
    { "format", arg = "LIST", default = "csv,json,html", help = "outputs to write: csv,json,html" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = cli.MAX_JOBS, help = "cards read in parallel (default: CPUs)" },
    shard.OPTION,
  },
  keys = { TARGET_DIR = "target-dir", SOC_VERSION = "soc-version", SHARE_EXPERT_CARD_COUNT = "share-expert-card-count",
           SP_MOE_NUM = "sp-moe-num", TP_WORLDSIZE = "tp-worldsize", SHARE_EXPERT_NUM = "share-expert-num",
           START_A2_CLUSTER = "start-a2-cluster", TOOL_PATH = "tool-path" },
  outputs = {
    { "win_data.csv", format = "csv", help = {
      en = "per card and side: cores, flag, run count, ranks, sizes, stuck_in",
      zh = "每卡每侧：核数、flag、运行次数、rank、规模、卡住位置" } },
    { "win_data_list.csv", format = "csv", help = { en = "per core, with its slots and missing slots", zh = "每个核的状态位及缺失状态位" } },
    { "win_status_list.csv", format = "csv", help = { en = "every slot word of the live status buffers", zh = "有效状态缓冲区的每个状态字" } },
    { "win_analysis_error.csv", format = "csv", help = { en = "every anomaly: severity, card, analysis, message", zh = "所有异常：级别、卡、分析项、信息" } },
    { "win_all_card_data.csv", format = "csv", help = { en = "the cross-card comparison", zh = "多卡对比" } },
    { "win_all_card_expandidx.csv", format = "csv", help = {
      en = "expected and found epSendCounts / expandIdx",
      zh = "epSendCounts / expandIdx 的期望值与实际值" } },
    { "moe_summary.json", format = "json", help = {
      en = "everything above per card, cross-card results and anomalies",
      zh = "以上全部内容（按卡）、多卡结果与异常" } },
    { "moe_report.html", format = "html", help = { en = "card x core grids of missing status slots, run counts", zh = "卡 x 核的缺失状态位网格、运行次数" } },
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
  if #words > 0 then errors.usage("unexpected argument %q (parameters are KEY=VALUE)", words[1]) end
  if not opts.target_dir then errors.usage("ascope moe needs TARGET_DIR=...; see 'ascope help moe'") end
  if not opts.soc_version then errors.usage("ascope moe needs SOC_VERSION=910_93|950|910B") end
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
  if #plan.units == 0 then error(opts.target_dir .. ": no card folders <n>/", 0) end
  local front = { spec = M.spec, recipe = M.recipe, finish = function(res, o) return M.finish(res, o, ctx) end }
  return merge_command.run(front, plan, opts, ctx)
end

--- Write the outputs of a result and print its summary; returns the exit code, the findings,
-- the result and its summary data.
function M.finish(res, opts, ctx)
  if #res.cards == 0 and #res.failed == 0 then error(opts.target_dir .. ": no card folders <n>/", 0) end
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
