--- The opjitter job: find each card's kernel_details.csv or op_summary_*.csv, compare the n-th
-- call of every operator type across cards, and check the aiv columns of the dispatch/combine
-- families. A recipe (see README "Lua API"): spec, run, write, anomalies, rules, and
-- plan/work/assemble for --shard.
--     local opjitter = require "ascope.opjitter"
--     local r = assert(opjitter.run({ input = "prof_dir" }))
--     for _, a in ipairs(r.avg) do print(a.type, a.avg_jitter) end
--     assert(opjitter.write(r, "out", { formats = { "csv" } }))
-- Reading: ascope.ascend.kernel_csv; analysis: ascope.analysis.opjitter; outputs:
-- ascope.report.opjitter.
-- @module ascope.opjitter
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local kernel_csv = require "ascope.ascend.kernel_csv"
local kernel_db = require "ascope.ascend.kernel_db"
local profdb = require "ascope.ascend.profdb"
local csv_notes = require "ascope.ascend.csv_notes"
local analysis = require "ascope.analysis.opjitter"
local rules_mod = require "ascope.rules"
local moe_kernels = require "ascope.ascend.moe_kernels"
local shard = require "ascope.shard"
local report = require "ascope.report.opjitter"
local recipe = require "ascope.recipe"
local MAX_JOBS = require("ascope.workers").MAX_JOBS
local fs = core.fs
local t = require("ascope.i18n").t

local i18n = require "ascope.i18n"

local M = {}

--- The option spec of the job (the command line, help, the man page and the docs read it).
M.spec = {
  name = "opjitter",
  args = "PROFILING_PATH [-o OUT] [options]",
  summary = "cmd.opjitter.summary",
  details = "cmd.opjitter.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.opjitter.output" },
    { "profiling-path", arg = "PATH", alias_of = "input" },
    { "cards", arg = "N", type = "int", min = 1, max = 1 << 20, help = "opt.opjitter.cards" },
    { "jobs", "j", arg = "N", type = "int", min = 1, max = MAX_JOBS, help = "opt.opjitter.jobs" },
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

function M.rules(user_file)
  local rules, err = rules_mod.load("opjitter", user_file) -- checked against its schema (ascope.rule_schemas)
  if rules then rules.aiv_types = moe_kernels.or_default(rules.aiv_types) end
  return rules, err
end

-- The card of a kernel file: the rank its profiler gave its *_ascend_pt folder (the N of
-- profiler_info_N.json, else its rank_id: as discovery reads a rank), else its Device_id column,
-- else a number in a folder name (card_3, device3, rank_3, or a folder named 3). The rank comes
-- first: on a job of several nodes Device_id is the card's number on its node (0-7 on each),
-- the same on every node.
local function card_of(path, data)
  local home = discover.rank_of_file(path)
  if home and (home.rank_source == "profiler_info" or home.rank_source == "rank_id") then
    return home.rank, home.rank_source
  end
  local d = data and data.device and data.device[1]
  if d and tonumber(d) then return math.tointeger(tonumber(d)), "Device_id" end
  local dir = discover.dirname(path)
  while dir and dir ~= "/" and dir ~= "." do
    local base = discover.basename(dir)
    if base:match("_ascend_pt$") then
      for _, n in ipairs(fs.list(dir) or {}) do
        local r = n:match("^profiler_info_(%d+)%.json$")
        if r then return math.tointeger(tonumber(r)), "profiler_info" end
      end
    end
    local n = base:match("^(%d+)$") or base:match("[Cc]ard_?(%d+)") or base:match("[Dd]evice_?(%d+)")
      or base:match("[Rr]ank_?(%d+)")
    if n then return math.tointeger(tonumber(n)), "folder" end
    dir = discover.dirname(dir)
  end
  return nil
end

--- Kernel files under path, in path order, and the messages of the folders that could not be
-- read; or nil, message.
function M.find(path)
  local list, problems = discover.files("kernel_details", path)
  if not list then return nil, problems end
  -- a rank exported both ways has its kernels twice: its database is read only where its folder
  -- holds no kernel CSV
  local csv_in = {}
  for _, f in ipairs(list) do
    if not profdb.is_db(f.path) then csv_in[discover.dirname(f.path)] = true end
  end
  local found = {}
  for _, f in ipairs(list) do
    if not (profdb.is_db(f.path) and csv_in[discover.dirname(f.path)]) then found[#found + 1] = f.path end
  end
  return found, problems
end

-- Gaps in the card numbers are filled in as missing cards while there are no more of them than
-- cards seen plus MIN_CARD_GAPS: a job's cards with some missing. Sparser numbers (cards 0 and
-- 4095 alone: 4094 gaps) are listed as they are, with a warning: every missing card is a column
-- of every row, and 4094 of them made 2 MB of input 247 MB of NA in 15 s. --cards N still
-- names all of a job's cards.
local MIN_CARD_GAPS = 64

--- The work of a run as a plan (see ascope.shard): one unit per kernel file. opts.files (and
-- opts.unread): what M.find(path) returned, when the caller has looked already, so that the
-- folders are walked once. Returns the plan or nil, message.
function M.plan(path, opts)
  opts = opts or {}
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local files, ferr = opts.files, opts.unread or {}
  if not files then files, ferr = M.find(path) end
  if not files then return nil, ferr end
  local units = {}
  for i, p in ipairs(files) do units[i] = { key = p, files = { p } } end
  return { units = units, rules = rules, opts = opts, unit_name = "shard.units.file",
           context = { input = path, files = files, cards = opts.cards, unread = ferr } }
end

--- One kernel file: {card, data} or {card, error} (the card read from the folders when the
-- file cannot be read).
function M.work(plan, i)
  local p = plan.context.files[i]
  local data, err = (profdb.is_db(p) and kernel_db or kernel_csv).read(p, plan.rules.aiv_columns)
  if not data then return { card = card_of(p), error = err } end
  return { card = card_of(p, data), data = data }
end

--- The cross-card step: the context and the files' outcomes -> the result run returns.
function M.assemble(context, outcomes, rules)
  local files = context.files
  local by_card, failed, warnings = {}, {}, {}
  -- a folder that could not be read may hold a card's kernels: the run fails, the others are kept
  for _, why in ipairs(context.unread or {}) do failed[#failed + 1] = { path = context.input, reason = why } end
  for i, p in ipairs(files) do
    local o = outcomes[i]
    local got = o.ok or {}
    local data, card = got.data, got.card
    if data then csv_notes(p, data, warnings) end
    if data and data.cut then warnings[#warnings + 1] = data.cut end
    for _, note in ipairs(data and data.notes or {}) do warnings[#warnings + 1] = p .. ": " .. note end
    if not data then
      failed[#failed + 1] = { path = p, reason = tostring(got.error or o.error), card = card }
    else
      if card == nil and #files == 1 then card = 0 end -- a single file is card 0
      if card == nil then
        failed[#failed + 1] = { path = p, reason = t("opjitter.unknown_card", p) }
      elseif by_card[card] then
        failed[#failed + 1] = { path = p, card = card,
                                reason = t("opjitter.card_taken", p, card, by_card[card].path) }
      else
        by_card[card] = data
      end
    end
  end
  -- the card numbers seen; the gaps below the highest are missing cards, unless the numbers
  -- are too sparse to be a card range (MIN_CARD_GAPS)
  local seen, numbers, max_card = {}, {}, -1
  local function see(c)
    if c and not seen[c] then
      seen[c] = true
      numbers[#numbers + 1] = c
      if c > max_card then max_card = c end
    end
  end
  for c in pairs(by_card) do see(c) end
  for _, f in ipairs(failed) do see(f.card) end
  for c = 0, (context.cards or 0) - 1 do see(c) end
  -- one card alone (a rank's folder given on its own) is that card: nothing says the job had
  -- the cards below it, and with two or more (or --cards) the gaps are cards missing
  local gaps = max_card + 1 - #numbers
  if #numbers == 1 and not context.cards then -- luacheck: ignore 542 (one card: no gaps)
  elseif gaps <= #numbers + MIN_CARD_GAPS then
    for c = 0, max_card do see(c) end
  else
    warnings[#warnings + 1] = t("opjitter.sparse_cards", max_card, #numbers, gaps)
  end
  table.sort(numbers)
  local cards, found, missing = {}, {}, {}
  for _, c in ipairs(numbers) do
    cards[#cards + 1] = { card = c, data = by_card[c] }
    if by_card[c] then found[#found + 1] = c else missing[#missing + 1] = c end
  end
  local res = analysis.jitter(cards, rules)
  if res.left_out then -- the reference's calls are the rows: say what other cards had beyond them
    local lo, names, ntypes = res.left_out, {}, 0
    for _, c in ipairs(cards) do
      for _, d in ipairs(lo.cards) do
        if c.data == d and #names < 5 then names[#names + 1] = tostring(c.card) end
      end
    end
    for _ in pairs(lo.types) do ntypes = ntypes + 1 end
    warnings[#warnings + 1] = t("opjitter.left_out", #lo.cards,
      table.concat(names, ", ") .. (#lo.cards > #names and ", ..." or ""), res.reference_card, lo.other, ntypes, lo.extra)
  end
  res.cards, res.found, res.missing, res.failed, res.warnings = cards, found, missing, failed, warnings
  res.aiv, res.aiv_unlisted = analysis.aiv_checks(cards, rules)
  res.rules = rules
  res.input = context.input
  res.unreadable = recipe.unreadable(failed)
  return res
end

--- Jitter of every operator type across the cards under opts.input.
-- @tparam table|string opts `input` (the profiling folder), `rules` (a user rule file), `cards`
-- (expected count), `jobs` (files read at once in worker processes; default: ascope.workers),
-- `files` and `unread` (what opjitter.find(input) returned, when the caller has looked already:
-- the folders are not walked again). The form run(path, opts) works too.
-- @tparam[opt] table more the options, in the form run(path, opts)
-- @treturn table `{cards, found, missing, rows, avg, aiv, failed, unreadable, warnings}`
-- @treturn[2] nil when the input cannot be used at all (no such path, no kernel file, bad rules)
-- @treturn[2] string why
function M.run(opts, more)
  opts = recipe.options(M.spec, opts, more)
  if not opts.input then return nil, t("opjitter.no_input") end
  local plan, err = M.plan(opts.input, { rules = opts.rules, cards = opts.cards, jobs = opts.jobs, files = opts.files,
                                         unread = opts.unread })
  if not plan then return nil, err end
  if #plan.units == 0 then return nil, t("opjitter.no_files", opts.input) end
  -- one file per card, read in parallel worker processes
  return M.assemble(plan.context, shard.compute(M, plan, shard.select(plan), plan.opts.jobs), plan.rules)
end

local write = recipe.writer(M.spec, report.write)

--- Write profiling_all_data.csv, profiling_avg_data.csv, opjitter_summary.json and
-- opjitter_report.html into outdir (every output is tried; one that fails does not stop the others).
-- @tparam table res a result of `run`
-- @tparam string outdir the output folder (made when missing)
-- @tparam[opt] table wopts `formats` (a list of "csv", "json", "html"; default all)
-- @return true, or nil and the messages
function M.write(res, outdir, wopts) return write(res, outdir, wopts) end

--- Findings: {severity, card, analysis, message}: each card missing between 0 and the highest,
-- each aiv value of a dispatch/combine call that is not numeric, not positive or off the mean.
function M.anomalies(res)
  local out = {}
  for _, c in ipairs(res.missing) do
    out[#out + 1] = { severity = "ERROR", card = c, analysis = "opjitter", message = i18n.t("opjitter.missing_card", c) }
  end
  for _, v in ipairs(res.aiv) do
    out[#out + 1] = { severity = "ERROR", card = v.card, analysis = "opjitter aiv", message = i18n.t("opjitter.aiv", v.card,
      v.type, v.call, v.column, v.value == nil and "NA" or tostring(v.value), v.kind) }
  end
  for _, g in ipairs(res.aiv_unlisted or {}) do
    out[#out + 1] = { severity = "ERROR", card = g.card, analysis = "opjitter aiv",
                      message = analysis.unlisted_text(g) }
  end
  return out
end

return M
