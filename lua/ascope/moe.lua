--- The moe job: MoE dispatch/combine hang diagnosis across all cards of TARGET_DIR/<n>/. A recipe
-- (see README "Lua API"): spec, run, write, anomalies, rules, and plan/work/assemble for --shard.
--     local moe = require "ascope.moe"
--     local r = assert(moe.run({ target_dir = "dumps", soc_version = "950" }))
--     for _, c in ipairs(r.cards) do print(c.card, c.stuck_in) end
--     assert(moe.write(r, "out"))             -- win_*.csv, moe_summary.json, moe_report.html
-- Reading: ascope.ascend.dump (window dumps), ascope.ascend.moe_summary (machines' summaries);
-- analysis: ascope.analysis.moe_card (1-4 per card), ascope.analysis.moe_cross (6-8 across
-- cards); outputs: ascope.report.moe.
-- @module ascope.moe
local core = require "ascope_core"
local dump = require "ascope.ascend.dump"
local summary = require "ascope.ascend.moe_summary"
local moe_card = require "ascope.analysis.moe_card"
local moe_cross = require "ascope.analysis.moe_cross"
local report = require "ascope.report.moe"
local rules_mod = require "ascope.rules"
local shard = require "ascope.shard"
local workers = require "ascope.workers"
local recipe = require "ascope.recipe"
local ascope_log = require "ascope.log"
local fs = core.fs
local i18n = require "ascope.i18n"

local function T(key, ...) return i18n.t("moe." .. key, ...) end

local M = {}

--- The option spec of the job (the command line, help, the man page and the docs read it).
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
    { "jobs", "j", arg = "N", type = "int", min = 1, max = workers.MAX_JOBS, help = "cards read in parallel (default: CPUs)" },
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

-- the pieces, as the job offered them before the split
M.list_text, M.side_of_op, M.card, M.cross = moe_card.list_text, moe_card.side_of_op, moe_card.card, moe_cross.cross
M.card_of_summary, M.summary_cards = summary.card_of_summary, summary.summary_cards

function M.rules(user_file)
  return rules_mod.load("win_layout", user_file) -- checked against its schema (ascope.rule_schemas)
end

M.card_dirs = dump.card_dirs

local readable = dump.readable

--- The parameters of the cross checks: the options and the SOC's entry of rules/win_layout.lua.
function M.params(opts, rules)
  local p = {}
  for k, v in pairs(opts) do p[k] = v end
  p.soc = rules.socs[opts.soc_version]
  return p
end

--- START_A2_CLUSTER=1: merge the moe_summary.json of every machine (found anywhere under
-- TARGET_DIR, from runs with START_A2_CLUSTER=0) and run the cross-card checks (6, 7) over all
-- cards, numbered by their global rank (the window's rankId).
function M.merge(opts)
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local log = opts.log or function() end
  local soc = rules.socs[opts.soc_version]
  local res, err = summary.read_machines(opts.target_dir, soc and rules.layouts[soc.layout], log)
  if not res then return nil, err end
  res.soc, res.target_dir, res.damaged = opts.soc_version, opts.target_dir, {}
  if #res.cards > 0 then
    res.cross = moe_cross.cross(res.cards, M.params(opts, rules), log)
    for _, a in ipairs(res.cross.anomalies) do res.anomalies[#res.anomalies + 1] = a end
  end
  return res
end

--- Findings of a run: `{severity, card, analysis, message}` (DETAIL lines name the slots).
-- @tparam table res a result of `run`
-- @treturn table the list of findings
function M.anomalies(res) return res.anomalies end

-- The options of a run as plain data (the context of a plan, the same in every shard).
local PARAM_KEYS = { "target_dir", "soc_version", "rules", "share_expert_card_count", "sp_moe_num", "tp_worldsize",
                     "share_expert_num", "k", "plog_first" }

--- The work of a run as a plan (see ascope.shard): one unit per card folder TARGET_DIR/<n>/
-- with its files; opts as for `run`. Returns the plan or nil, message.
function M.plan(opts)
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local soc = rules.socs[opts.soc_version]
  if not soc then
    local list = {}
    for k in pairs(rules.socs) do list[#list + 1] = k end
    table.sort(list)
    return nil, ("SOC_VERSION %q is not one of %s"):format(tostring(opts.soc_version), table.concat(list, ", "))
  end
  local entries, err = M.card_dirs(opts.target_dir)
  if not entries then return nil, err end
  local params = {}
  for _, k in ipairs(PARAM_KEYS) do params[k] = opts[k] end
  local units, cards = {}, {}
  for i, e in ipairs(entries) do
    cards[i] = { card = e.card, dir = e.dir }
    local files = fs.walk(e.dir)
    table.sort(files)
    units[i] = { key = "card/" .. e.card, files = files, card = e.card, dir = e.dir }
  end
  return { units = units, rules = rules, unit_name = "shard.units.card",
           context = { input = opts.target_dir, params = params, cards = cards } }
end

--- One unit of a plan: {card = the card's result | failed = {card, dir, reason}, lines = the
-- {level, text} of its analysis, to be told in card order by assemble}. A card whose bytes make
-- a reader or a check raise is that card's failure, not the run's.
function M.work(plan, i)
  local u, rules, params = plan.units[i], plan.rules, plan.context.params
  local lines = {}
  local function log(level, text) lines[#lines + 1] = { level, text } end
  local soc = rules.socs[params.soc_version]
  local layout = rules.layouts[soc.layout]
  local e = { card = u.card, dir = u.dir }
  log("INFO", T("analysing", e.card))
  local ok, data, why = pcall(dump.read_card, e.dir, soc, layout.window_bytes)
  if not ok then data, why = nil, ("%s: %s"):format(e.dir, tostring(data)) end
  local c
  if data then
    e.data = data
    local cok, card, cerr = pcall(moe_card.card, e, layout, rules, params, log)
    if cok then c, why = card, cerr else why = ("%s: %s"):format(e.dir, tostring(card)) end
  end
  if c then return { card = c, lines = lines } end
  return { failed = { card = e.card, dir = e.dir, reason = readable(tostring(why)) }, lines = lines }
end

--- The cross-card step: a plan's context and its units' outcomes ({ok = work's result} or
-- {error = message}) in card order -> the run's result (see `run`). log as for `run`.
function M.assemble(context, outcomes, rules, log)
  log = log or function() end
  local params = context.params
  local layout = rules.layouts[rules.socs[params.soc_version].layout]
  -- failed: cards not analysed; damaged: cards analysed without an input that did not hold
  local res = { cards = {}, failed = {}, damaged = {}, anomalies = {}, soc = params.soc_version,
                target_dir = params.target_dir }
  for i = 1, #context.cards do
    local o = outcomes[i]
    local e = context.cards[i]
    local r = o.ok or { failed = { card = e.card, dir = e.dir, reason = readable(o.error) }, lines = {} }
    for _, l in ipairs(r.lines) do log(l[1], l[2]) end
    local c = r.card
    if c then
      res.cards[#res.cards + 1] = c
      if c.damaged_input then res.damaged[#res.damaged + 1] = c.card end
      for _, a in ipairs(c.anomalies) do res.anomalies[#res.anomalies + 1] = a end
    else
      local f = r.failed
      res.failed[#res.failed + 1] = f
      res.anomalies[#res.anomalies + 1] = { severity = "ERROR", card = f.card, analysis = "input", message = f.reason }
      log("ERROR", f.reason)
    end
  end
  if #res.cards > 0 then
    res.cross = moe_cross.cross(res.cards, M.params(params, rules), log)
    for _, a in ipairs(res.cross.anomalies) do res.anomalies[#res.anomalies + 1] = a end
  end
  res.layout = layout
  return res
end

-- The running account of an analysis (the per-card steps): its INFO lines to ascope.log; the
-- findings among the other lines are in the result's anomalies.
local function step_log(level, text) if level == "INFO" then ascope_log.line(level, text) end end
M.step_log = step_log

--- The whole run over the cards of `TARGET_DIR/<n>/`: every unit of the plan, then assemble; with
-- START_A2_CLUSTER=1 the merge of the machines' moe_summary.json files (see `merge`).
-- @tparam table|string opts `target_dir` (or `input`), `soc_version` ("910_93", "950", "910B"),
-- `share_expert_card_count`, `sp_moe_num`, `tp_worldsize`, `share_expert_num`, `k`, `rules`,
-- `start_a2_cluster` ("0" or "1"), `jobs` (cards read at once in worker processes; default:
-- ascope.workers), `plog_first` (card -> time of its first plog error, orders the root cards) and
-- `log` (`function(level, text)`, called for every line of the analysis; default: the INFO lines
-- to ascope.log). The form run(target_dir, opts) works too.
-- @tparam[opt] table more the options, in the form run(path, opts)
-- @treturn table `{cards, failed, damaged, anomalies, cross, unreadable, ...}`; each card has
-- `card`, `stuck_in` and `anomalies`; `cross.wait_for` and `cross.root_cards` give who waits for
-- whom and the cards that started it
-- @treturn[2] nil when the input cannot be used at all (no card folder, unknown SOC, bad rules)
-- @treturn[2] string why
function M.run(opts, more)
  opts = recipe.options(M.spec, opts, more)
  opts.target_dir = opts.target_dir or opts.input
  if not opts.target_dir then return nil, T("no_target") end
  opts.log = opts.log or step_log
  local res, err
  if opts.start_a2_cluster == "1" then
    res, err = M.merge(opts)
  else
    local plan, perr = M.plan(opts)
    if not plan then return nil, perr end
    if #plan.units == 0 then return nil, T("no_cards", opts.target_dir) end
    res = M.assemble(plan.context, shard.compute(M, plan, shard.select(plan), opts.jobs), plan.rules, opts.log)
  end
  if not res then return nil, err end
  return M.unreadable(res)
end

--- Fill res.unreadable: the cards whose dump could not be read and the machines that could not
-- be merged ({path, message}), and the cards analysed without an input that did not hold.
function M.unreadable(res)
  local list = {}
  for _, f in ipairs(res.failed) do list[#list + 1] = { path = f.dir, card = f.card, message = f.reason } end
  for _, card in ipairs(res.damaged or {}) do
    list[#list + 1] = { card = card, message = T("damaged_input", card) }
  end
  res.unreadable = list
  return res
end

--- Write the outputs: win_*.csv (UTF-8 with BOM, or GBK), moe_summary.json and moe_report.html.
-- @tparam table res a result of `run`
-- @tparam string outdir the output folder (made when missing)
-- @tparam[opt] table wopts `formats` (a list of "csv", "json", "html"; default all), `encoding`
-- ("utf8" or "gbk", for the CSV files)
-- @return true, or nil and a message
function M.write(res, outdir, wopts)
  local formats, ferr = recipe.format_set(M.spec, wopts and wopts.formats)
  if not formats then return nil, ferr end
  return report.write(res, outdir, formats, wopts and wopts.encoding or "utf8")
end

return M
