--- Operator jitter across cards for scripts: find each card's kernel_details.csv or
-- op_summary_*.csv, compare the n-th call of every operator type across cards, and check the
-- aiv columns of the dispatch/combine families.
--     local r = assert(require("ascope.opjitter").run("prof_dir"))
--     for _, a in ipairs(r.avg) do print(a.type, a.avg_jitter) end
-- @module ascope.opjitter
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local kernel_csv = require "ascope.ascend.kernel_csv"
local analysis = require "ascope.analysis.opjitter"
local rules_mod = require "ascope.rules"
local shard = require "ascope.shard"
local fs = core.fs
local t = require("ascope.i18n").t

local i18n = require "ascope.i18n"

local M = {}

function M.rules(user_file)
  return rules_mod.load("opjitter", user_file) -- checked against its schema (ascope.rule_schemas)
end

-- The card of a kernel file: its Device_id column, else the rank of its *_ascend_pt folder,
-- else a number in a folder name (card_3, device3, rank_3, or a folder named 3).
local function card_of(path, data)
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

--- Kernel files under path: {{card, path}} sorted by card, plus problems.
function M.find(path)
  local st = fs.stat(path)
  if not st then return nil, t("input.no_such", path) end
  local files, unreadable = { path }, nil
  if st.type ~= "file" then files, unreadable = fs.walk(path) end
  local found, problems = {}, unreadable or {}
  for _, p in ipairs(files) do
    local base = discover.basename(p)
    if base == "kernel_details.csv" or base:match("^op_summary.*%.csv$") then found[#found + 1] = p end
  end
  return found, problems
end

-- Gaps in the card numbers filled in as missing cards at most: beyond, the numbering is sparse.
local MAX_CARD_GAPS = 4096

--- The work of a run as a plan (see ascope.shard): one unit per kernel file. Returns the plan
-- or nil, message.
function M.plan(path, opts)
  opts = opts or {}
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local files, ferr = M.find(path)
  if not files then return nil, ferr end
  local units = {}
  for i, p in ipairs(files) do units[i] = { key = p, files = { p } } end
  return { units = units, rules = rules, opts = opts, unit_name = "shard.units.file",
           context = { input = path, files = files, cards = opts.cards } }
end

--- One kernel file: {card, data} or {card, error} (the card read from the folders when the
-- file cannot be read).
function M.work(plan, i)
  local p = plan.context.files[i]
  local data, err = kernel_csv.read(p, plan.rules.aiv_columns)
  if not data then return { card = card_of(p), error = err } end
  return { card = card_of(p, data), data = data }
end

--- The cross-card step: the context and the files' outcomes -> the result run returns.
function M.assemble(context, outcomes, rules)
  local files = context.files
  local by_card, failed, warnings = {}, {}, {}
  for i, p in ipairs(files) do
    local o = outcomes[i]
    local got = o.ok or {}
    local data, card = got.data, got.card
    if data and data.bad_cells > 0 then
      warnings[#warnings + 1] = t("input.bad_cells", p, data.bad_cells, data.first_bad)
    end
    if data and data.cut then warnings[#warnings + 1] = data.cut end
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
  -- are too sparse to be a card range (a card numbered 99999999 is one card, not 10^8 columns)
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
  if max_card < #numbers + MAX_CARD_GAPS then
    for c = 0, max_card do see(c) end
  end
  table.sort(numbers)
  local cards, found, missing = {}, {}, {}
  for _, c in ipairs(numbers) do
    cards[#cards + 1] = { card = c, data = by_card[c] }
    if by_card[c] then found[#found + 1] = c else missing[#missing + 1] = c end
  end
  local res = analysis.jitter(cards, rules)
  res.cards, res.found, res.missing, res.failed, res.warnings = cards, found, missing, failed, warnings
  res.aiv = analysis.aiv_checks(cards, rules)
  res.rules = rules
  res.input = context.input
  return res
end

--- Jitter of every operator type across the cards under path.
-- @tparam string path the profiling folder
-- @tparam[opt] table opts `rules` (a user rule file), `cards` (expected count), `jobs` (files read
-- at once; default: CPUs)
-- @treturn table `{cards, found, missing, rows, avg, aiv, failed}`
-- @treturn[2] nil when the input cannot be used at all
-- @treturn[2] string why
function M.run(path, opts)
  local plan, err = M.plan(path, opts)
  if not plan then return nil, err end
  -- one file per card, read in parallel worker processes
  return M.assemble(plan.context, shard.compute(M, plan, shard.select(plan), plan.opts.jobs), plan.rules)
end

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
  return out
end

return M
