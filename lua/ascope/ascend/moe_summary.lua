--- Reading the moe_summary.json of each machine (START_A2_CLUSTER=1): its cards, checked field by
-- field, as cards the cross-card analysis takes, numbered by their global rank.
-- @module ascope.ascend.moe_summary
local core = require "ascope_core"
local dump = require "ascope.ascend.dump"
local discover = require "ascope.ascend.discover"
local analysis = require "ascope.analysis.moe"
local version_of = require("ascope.analysis.moe_card").version_of
local i18n = require "ascope.i18n"

local function T(key, ...) return i18n.t("moe." .. key, ...) end


local M = {}

-- the cross-card analyses, redone over all machines' cards
local CROSS = { ["6"] = true, ["7"] = true, ["8"] = true }

-- A card as one machine's moe_summary.json holds it, numbered by its global rank, with the
-- inputs the cross checks compare as the columns a dump would give.
function M.card_of_summary(c, rank, path)
  local function value(v) if v ~= core.json.null then return v end end
  local card = { card = rank, rank = rank, machine = path, stuck_in = value(c.stuck_in), op = value(c.op), k = value(c.k),
                 local_experts = c.local_experts, shared_expert_card = c.shared_expert_card, time = value(c.time),
                 dispatch = c.dispatch, combine = c.combine, expert_ids = value(c.expert_ids), anomalies = {}, inputs = {},
                 version = version_of(value(c.op)) }
  card.input_index = { ep_send_counts = "ep_send_counts" }
  if card.version == "V1" then card.input_index.expand_idx = "expand_idx" else card.input_index.assist_info = "assist_info" end
  for _, f in ipairs({ "ep_send_counts", "expand_idx", "assist_info" }) do
    if type(c[f]) == "table" then card.inputs[f] = { core.column.new("integer", c[f]) } end
  end
  for _, side in ipairs({ "dispatch", "combine" }) do
    local s = card[side]
    s.ran = (s.cores or 0) > 0
    s.deviations = s.deviations or {}
    s.waiting_cores = s.waiting_cores or {}
    local missing = {}
    for core_i, list in pairs(s.missing_slots or {}) do missing[math.tointeger(tonumber(core_i))] = list end
    s.missing_slots = missing
  end
  local ran = card.dispatch.ran and card.dispatch or card.combine
  card.ep, card.moe = ran.ep_world_size or 0, ran.moe_expert_num or 0
  return card
end

-- What each field of a card in a moe_summary.json must be: "int" (an integer), "ints" (a list of
-- integers), "by_core" (core -> list of integers), "table", "string" or "boolean"; absent or null
-- is allowed for all of them. A field of another type would fail a check far from the file.
local SUMMARY_SIDE = { cores = "int", flag = "int", run_count = "int", rank_id = "int", hccl_rank_id = "int",
                       ep_world_size = "int", hccl_ep_world_size = "int", moe_expert_num = "int", global_bs = "int",
                       total_status_slots = "int", live_status_buffer = "int", idle_unarrived = "int",
                       slots_per_core = "ints", waiting_cores = "ints", positions = "ints", missing_slots = "by_core",
                       deviations = "table", status_error = "string", ran = "boolean" }
local SUMMARY_CARD = { k = "int", local_experts = "int", time = "int", expert_ids = "ints", ep_send_counts = "ints",
                       expand_idx = "ints", assist_info = "ints", op = "string", stuck_in = "string", stuck_by = "string",
                       op_from = "string", shared_expert_card = "boolean", machine = "string" }

local function ints(v)
  if type(v) ~= "table" then return false end
  for _, x in pairs(v) do if math.type(x) ~= "integer" then return false end end
  return true
end

local function has_type(v, want)
  if v == nil or v == core.json.null then return true end
  if want == "int" then return math.type(v) == "integer" end
  if want == "ints" then return ints(v) end
  if want == "by_core" then
    if type(v) ~= "table" then return false end
    for core_i, list in pairs(v) do if not (math.tointeger(tonumber(core_i)) and ints(list)) then return false end end
    return true
  end
  return type(v) == want
end

local function sorted_keys(t)
  local list = {}
  for k in pairs(t) do list[#list + 1] = k end
  table.sort(list)
  return list
end
local SIDE_FIELDS, CARD_FIELDS = sorted_keys(SUMMARY_SIDE), sorted_keys(SUMMARY_CARD)

-- The first field of a summary card (in name order) that is not of its type: "side.field" or
-- "field"; nil when all are.
local function summary_field_error(c)
  for _, side in ipairs({ "dispatch", "combine" }) do
    for _, f in ipairs(SIDE_FIELDS) do if not has_type(c[side][f], SUMMARY_SIDE[f]) then return side .. "." .. f end end
  end
  for _, f in ipairs(CARD_FIELDS) do if not has_type(c[f], SUMMARY_CARD[f]) then return f end end
end

--- The cards of one machine's moe_summary.json: {list = cards, anomalies = its per-card findings}
-- or nil, message naming the file, the card and the field that is not what a summary holds.
function M.summary_cards(path, layout)
  local doc, err = core.json.load(path)
  if not doc then return nil, err end
  if type(doc) ~= "table" or type(doc.cards) ~= "table" then return nil, T("summary_bad", path, "cards", "?") end
  local out = { list = {}, anomalies = {} }
  local keys = {}
  for key in pairs(doc.cards) do keys[#keys + 1] = tostring(key) end
  table.sort(keys)
  for _, key in ipairs(keys) do
    local c = doc.cards[key] or doc.cards[math.tointeger(tonumber(key))]
    if type(c) ~= "table" or type(c.dispatch) ~= "table" or type(c.combine) ~= "table" then
      return nil, T("summary_bad", path, key, "dispatch/combine")
    end
    local bad_field = summary_field_error(c)
    if bad_field then return nil, T("summary_bad", path, key, bad_field) end
    for _, side in ipairs({ "dispatch", "combine" }) do
      local s = c[side]
      if math.type(s.cores) ~= "integer" or s.cores < 0 then return nil, T("summary_bad", path, key, side .. ".cores") end
      if s.cores > 0 and layout then
        local field, v, lo, hi = analysis.impossible(s, layout)
        if field then
          return nil, T("impossible", path, math.tointeger(tonumber(key)) or -1, side, field, tostring(v), lo, hi)
        end
      end
    end
    local rank = c.dispatch.rank_id
    if math.type(rank) ~= "integer" then return nil, T("summary_bad", path, key, "dispatch.rank_id") end
    if math.type(c.k) == "integer" and c.k <= 0 then return nil, T("summary_bad", path, key, "k") end
    out.list[#out.list + 1] = M.card_of_summary(c, rank, path)
  end
  -- the cross-card findings of one machine are redone over all machines' cards
  for _, a in ipairs(type(doc.anomalies) == "table" and doc.anomalies or {}) do
    if type(a) == "table" and type(a.message) == "string" and type(a.severity) == "string" and not CROSS[a.analysis] then
      out.anomalies[#out.anomalies + 1] = a
    end
  end
  return out
end


--- Every machine's moe_summary.json found under target_dir, read and checked against layout (the
-- window layout of the SOC): {merged = the files, cards = their cards by global rank (a second
-- card of one rank is an ERROR, not merged), failed = {dir, reason} per file that could not be
-- merged, anomalies = the machines' per-card findings and those errors}; nil, message when no
-- file is found. log(level, text) gets the running account.
function M.read_machines(target_dir, layout, log)
  local found = {}
  for i, f in ipairs((discover.files("moe_summary", target_dir)) or {}) do found[i] = f.path end
  if #found == 0 then return nil, T("no_summaries", target_dir) end
  local res = { cards = {}, failed = {}, anomalies = {}, merged = found }
  local seen = {}
  for _, p in ipairs(found) do
    log("INFO", T("merging", p))
    -- a machine whose summary cannot be read or holds impossible cards is reported; the others merge
    local ok, cards, err = pcall(M.summary_cards, p, layout)
    if not ok then cards, err = nil, ("%s: %s"):format(p, tostring(cards)) end
    if not cards then
      err = dump.readable(tostring(err))
      res.failed[#res.failed + 1] = { dir = p, reason = err }
      res.anomalies[#res.anomalies + 1] = { severity = "ERROR", analysis = "merge", message = err }
      log("ERROR", err)
    else
      for _, c in ipairs(cards.list) do
        if seen[c.rank] then
          local msg = T("duplicate_rank", p, c.rank)
          res.anomalies[#res.anomalies + 1] = { severity = "ERROR", analysis = "merge", message = msg }
          log("ERROR", msg)
        else
          seen[c.rank] = true
          res.cards[#res.cards + 1] = c
        end
      end
      for _, a in ipairs(cards.anomalies) do res.anomalies[#res.anomalies + 1] = a end
    end
  end
  table.sort(res.cards, function(a, b) return a.card < b.card end)
  return res
end

return M
