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
local analysis = require "ascope.analysis.moe"
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
    { "jobs", "j", arg = "N", type = "int", min = 1, max = workers.MAX_JOBS, help = "opt.moe.jobs" },
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
  -- the machines together hold every rank: one missing is a card not analysed
  M.missing_cards(res, opts, nil, function(f)
    res.failed[#res.failed + 1] = f
    res.anomalies[#res.anomalies + 1] = { severity = "ERROR", card = f.card, analysis = "merge", message = f.reason }
    log("ERROR", f.reason)
  end, log)
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
    return nil, i18n.t("moe.bad_soc", tostring(opts.soc_version), table.concat(list, ", "))
  end
  local entries, err = M.card_dirs(opts.target_dir)
  if not entries then return nil, err end
  local params = {}
  for _, k in ipairs(PARAM_KEYS) do params[k] = opts[k] end
  local units, cards = {}, {}
  for i, e in ipairs(entries) do
    cards[i] = { card = e.card, dir = e.dir }
    local walked = fs.walk(e.dir) -- once: work reads the card from this list
    local files = table.move(walked, 1, #walked, 1, {})
    table.sort(files)
    units[i] = { key = "card/" .. e.card, files = files, walked = walked, card = e.card, dir = e.dir }
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
  log("INFO", T("analysing", e.dir))
  -- the card's files as the plan walked them: a card folder is walked once
  local ok, data, why = pcall(dump.read_card, e.dir, soc, layout.window_bytes, u.walked)
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

-- SOCs whose clusters are analysed machine by machine (START_A2_CLUSTER=1 merges them): one
-- run holds a slice of the ranks, so ranks beyond those found are another machine's.
local SLICED_BY_MACHINE = { ["910B"] = true }

--- The cards of the cluster that were not analysed: every rank below epWorldSize (the most common
-- value of the cards where a side ran) needs a dump; a rank missing is an ERROR and a card not
-- analysed, given to fail({card, dir, reason}). folders: the card folder numbers (nil in a merge);
-- a failed folder of a rank's number is that rank, said already. With no epWorldSize known,
-- a folder number missing between those found is such a card (numbers sparser than the folders
-- found, as 0 and 99999999 alone, tell no missing card: a WARNING).
function M.missing_cards(res, params, folders, fail, log)
  local eps, have = {}, {}
  for _, c in ipairs(res.cards) do
    if c.dispatch.ran or c.combine.ran then eps[#eps + 1] = c.ep end
    have[c.card] = true
  end
  for _, f in ipairs(res.failed) do if f.card then have[f.card] = true end end
  local ep = analysis.most_common(eps)
  local dir = params.target_dir
  local numbers = {}
  for n in pairs(folders or {}) do numbers[#numbers + 1] = n end
  table.sort(numbers)
  if ep then
    local low, high = 0, ep - 1
    if folders and SLICED_BY_MACHINE[params.soc_version] and #res.cards > 0 then
      low, high = res.cards[1].card, res.cards[#res.cards].card
    end
    for r = low, high do
      if not have[r] then
        local between = folders and not folders[r] and r > numbers[1] and r < numbers[#numbers]
        fail({ card = r, dir = dir, reason = between and i18n.t("moe.card_missing", r, dir, r)
               or i18n.t("moe.rank_missing", r, dir, ep) })
      end
    end
    return
  end
  if not folders then return end
  local gaps = {}
  for i = 2, #numbers do
    for c = numbers[i - 1] + 1, numbers[i] - 1 do
      gaps[#gaps + 1] = c
      if #gaps > #numbers then break end
    end
    if #gaps > #numbers then break end
  end
  if #gaps > #numbers then
    local why = i18n.t("moe.cards_sparse", dir, numbers[1], numbers[#numbers], #numbers)
    res.anomalies[#res.anomalies + 1] = { severity = "WARNING", analysis = "input", message = why }
    log("WARNING", why)
  else
    for _, c in ipairs(gaps) do fail({ card = c, dir = dir, reason = i18n.t("moe.card_missing", c, dir, c) }) end
  end
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
  local function fail(f) -- a card not analysed
    res.failed[#res.failed + 1] = f
    res.anomalies[#res.anomalies + 1] = { severity = "ERROR", card = f.card, analysis = "input", message = f.reason }
    log("ERROR", f.reason)
  end
  local dir_of = {} -- card (its rankId) -> the folder that holds it
  for i = 1, #context.cards do
    local o = outcomes[i]
    local e = context.cards[i]
    local r = o.ok or { failed = { card = e.card, dir = e.dir, reason = readable(o.error) }, lines = {} }
    for _, l in ipairs(r.lines) do log(l[1], l[2]) end
    local c = r.card
    if c and dir_of[c.card] then
      -- two folders holding one rank: the second would hide the first in every table by card
      fail({ card = c.card, dir = e.dir, reason = i18n.t("moe.card_twice", e.dir, c.card, dir_of[c.card]) })
    elseif c then
      dir_of[c.card] = e.dir
      res.cards[#res.cards + 1] = c
      if c.damaged_input then res.damaged[#res.damaged + 1] = c.card end
      for _, a in ipairs(c.anomalies) do res.anomalies[#res.anomalies + 1] = a end
    else
      fail(r.failed)
    end
  end
  table.sort(res.cards, function(a, b) return a.card < b.card end)
  local folders = {}
  for _, e in ipairs(context.cards) do folders[e.card] = true end
  M.missing_cards(res, params, folders, fail, log)
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

local write = recipe.writer(M.spec, function(res, outdir, formats, wopts)
  return report.write(res, outdir, formats, wopts and wopts.encoding or "utf8")
end)

--- Write the outputs: win_*.csv (UTF-8 with BOM, or GBK), moe_summary.json and moe_report.html.
-- @tparam table res a result of `run`
-- @tparam string outdir the output folder (made when missing)
-- @tparam[opt] table wopts `formats` (a list of "csv", "json", "html"; default all), `encoding`
-- ("utf8" or "gbk", for the CSV files)
-- @return true, or nil and a message
function M.write(res, outdir, wopts) return write(res, outdir, wopts) end

return M
