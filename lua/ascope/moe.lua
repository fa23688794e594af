--- MoE dispatch/combine hang diagnosis across all cards of TARGET_DIR/<n>/.
--     local r = assert(require("ascope.moe").run({ target_dir = "dumps", soc_version = "950" }))
--     for _, c in ipairs(r.cards) do print(c.card, c.stuck_in) end
-- @module ascope.moe
local core = require "ascope_core"
local dump = require "ascope.ascend.dump"
local analysis = require "ascope.analysis.moe"
local wait_for = require "ascope.analysis.moe_wait_for"
local rules_mod = require "ascope.rules"
local fs = core.fs
local i18n = require "ascope.i18n"

local function T(key, ...) return i18n.t("moe." .. key, ...) end

local M = {}

function M.rules(user_file)
  return rules_mod.load("win_layout", user_file) -- checked against its schema (ascope.rule_schemas)
end

--- Card folders TARGET_DIR/<n>/ in numeric order.
function M.card_dirs(target)
  target = target:gsub("(.)/+$", "%1")
  local names, err = fs.list(target)
  if not names then return nil, err end
  local out = {}
  for _, n in ipairs(names) do
    if n:match("^%d+$") then
      local st = fs.stat(target .. "/" .. n)
      if st and st.type == "dir" then out[#out + 1] = { card = math.tointeger(tonumber(n)), dir = target .. "/" .. n } end
    end
  end
  table.sort(out, function(a, b) return a.card < b.card end)
  return out
end

local readable = dump.readable

local function list_text(t, max)
  local parts = {}
  for i, v in ipairs(t) do
    if max and i > max then
      parts[#parts + 1] = "..."
      break
    end
    parts[#parts + 1] = tostring(v)
  end
  return "[" .. table.concat(parts, ",") .. "]"
end
M.list_text = list_text

-- V1 kernels carry no version suffix; a dump without an operator name is taken as V2.
local function version_of(op)
  if not op then return "V2" end
  local v = op:match("V(%d)$")
  return v and ("V" .. v) or "V1"
end

local function side_of_op(op)
  if not op then return nil end
  local l = op:lower()
  if l:find("dispatch", 1, true) then return "dispatch" end
  if l:find("combine", 1, true) then return "combine" end
end
M.side_of_op = side_of_op

local function count_text(n) return n == nil and T("never") or tostring(n) end

local function count_positions(list)
  local n = { [0] = 0, 0, 0 }
  for _, p in ipairs(list or {}) do if n[p] then n[p] = n[p] + 1 end end
  return n
end

-- 1: the per-core fields of one side, the HCCL link's values, the cores that differ.
local function check_side(c, side, s, anomaly, log)
  log("INFO", T("cores", side, s.cores))
  if not s.ran then
    log("INFO", T("never_ran", c.card, side))
    return
  end
  for _, f in ipairs({ "rank_id", "ep_world_size", "hccl_rank_id", "hccl_ep_world_size", "moe_expert_num", "global_bs",
                       "run_count", "flag" }) do
    log("INFO", T("per_core", side, f, list_text(s.per_core[f], 16)))
    if s.deviations[f] then
      local cores = {}
      for core_i, v in pairs(s.deviations[f]) do cores[#cores + 1] = ("%d=%d"):format(core_i, v) end
      table.sort(cores)
      anomaly("WARNING", "1", T("differs", c.card, side, f, table.concat(cores, ","), s[f]))
    end
  end
  if s.rank_id ~= s.hccl_rank_id then anomaly("ERROR", "1", T("rank_hccl", c.card, side, s.rank_id, s.hccl_rank_id)) end
  if s.ep_world_size ~= s.hccl_ep_world_size then
    anomaly("ERROR", "1", T("ep_hccl", c.card, side, s.ep_world_size, s.hccl_ep_world_size))
  end
  s.bs = s.ep_world_size ~= 0 and s.global_bs // s.ep_world_size or nil
end

-- 1.3: expertIds in range and without repeats in a row; sets c.k and c.expert_ids.
local function check_ids(c, ids_in, params, anomaly, log)
  if not ids_in then
    anomaly("WARNING", "1", T("no_ids", c.card))
    c.k = params.k
    return
  end
  local values, shape = ids_in[1], ids_in[2]
  local n = #values
  local rows, k = shape and shape[1], shape and shape[2]
  if not k and c.bs and c.bs > 0 then rows, k = c.bs, n // c.bs end
  -- a shape that does not match the values (a cut file, a damaged header) gives no k to trust
  if not (math.type(k) == "integer" and k > 0 and math.type(rows) == "integer" and rows >= 0 and rows * k == n) then
    anomaly("ERROR", "1", T("ids_shape", c.card, n, tostring(rows), tostring(k)))
    c.k, c.damaged_input = params.k, true
    return
  end
  local ids = values:totable()
  c.k, c.expert_ids = k, ids
  local limit = (c.moe or 0) + (params.sp_moe_num or 0)
  local bad = 0
  for row = 0, #ids // k - 1 do
    local seen = {}
    for j = 1, k do
      local e = ids[row * k + j]
      if e < 0 or e >= limit then
        bad = bad + 1
        anomaly("ERROR", "1", T("ids_range", c.card, row, j - 1, e, limit))
      elseif seen[e] then
        bad = bad + 1
        anomaly("ERROR", "1", T("ids_repeat", c.card, row, e))
      end
      seen[e] = true
    end
  end
  if bad == 0 then log("INFO", T("ids_ok", c.card, list_text(ids, 16), k)) end
end

-- 2: the side the card is in. Run counts when both sides ran (dispatch = combine + 1: dispatch;
-- equal: combine); when one side never ran or the counts do not fit, the operator that raised the
-- exception (the dump header's op name, else the *_host.o name), else the only side that ran.
local function execution_order(c, anomaly, log)
  local d, cs = c.dispatch, c.combine
  local dr, cr = d.ran and d.run_count or nil, cs.ran and cs.run_count or nil
  local how
  if dr and cr and dr == cr + 1 then
    c.stuck_in, how = "dispatch", "run_count"
  elseif dr and cr and dr == cr then
    c.stuck_in, how = "combine", "run_count"
  else
    if dr and cr then anomaly("ERROR", "2", T("order_bad", c.card, dr, cr)) end
    if c.stuck_op then
      c.stuck_in, how = c.stuck_op, c.op_from or "file_name"
    elseif d.ran ~= cs.ran then
      c.stuck_in, how = d.ran and "dispatch" or "combine", "only_side"
    end
  end
  c.stuck_by = how
  if not c.stuck_in then
    log("INFO", T("order_none", c.card))
    return
  end
  if how == "run_count" then
    log("INFO", T("order_runs", c.card, dr, cr, c.stuck_in))
  elseif how == "only_side" then
    log("INFO", T("order_only_side", c.card, count_text(dr), count_text(cr), c.stuck_in))
  else
    log("INFO", T("order_op", c.card, count_text(dr), count_text(cr), c.stuck_in, T("from_" .. how), c.op))
  end
  local s = c[c.stuck_in]
  if #s.waiting_cores > 0 then
    anomaly("WARNING", "2", T("stuck", c.card, c.stuck_in, #s.waiting_cores))
  else
    local n = count_positions(s.per_core.position)
    log("INFO", T("not_waiting", c.card, c.stuck_in, n[0], n[2]))
  end
  if how == "run_count" and c.stuck_op and c.stuck_op ~= c.stuck_in then
    anomaly("WARNING", "2", T("op_mismatch", c.card, c.stuck_in, c.op))
  end
end

-- 3 and 4: the status slots of one side; only waiting cores miss anything.
local function status_bits(c, side, win, layout, params, anomaly, log)
  local s = c[side]
  local an = side == "dispatch" and "3" or "4"
  if not s.ran then
    log("INFO", T("never_ran", c.card, side))
    return
  end
  log("INFO", T("positions", an .. ".1", side, list_text(s.per_core.position, 32)))
  if side == "dispatch" then
    local total = c.shared_expert_card and (c.ep or 0) or c.local_experts * (c.ep or 0)
    analysis.status(win, layout, "dispatch", s, analysis.split(total, s.cores))
  elseif c.k and c.bs then
    local slots = {}
    for i, t in ipairs(analysis.split(c.bs, s.cores)) do slots[i] = t * (c.k + (params.share_expert_num or 0)) end
    analysis.status(win, layout, "combine", s, slots)
  else
    s.status_error = T("no_k")
  end
  if s.status_error then
    anomaly("ERROR", an, T("status_error", c.card, s.status_error))
    return
  end
  log("INFO", T("slots", an .. ".2", side, s.total_status_slots, list_text(s.slots_per_core, 24), s.live_status_buffer))
  local cores = {}
  for core_i in pairs(s.missing_slots) do cores[#cores + 1] = core_i end
  table.sort(cores)
  if #cores > 0 then
    anomaly("ERROR", an, T("missing", an .. ".2", c.card, #cores, side, list_text(cores)))
    for _, core_i in ipairs(cores) do
      c.anomalies[#c.anomalies + 1] = { severity = "DETAIL", card = c.card, analysis = an,
        message = T("missing_detail", c.card, side, core_i, list_text(s.missing_slots[core_i]), s.live_status_buffer) }
    end
  end
  if #s.waiting_cores > #cores then
    local full = {}
    for _, core_i in ipairs(s.waiting_cores) do if not s.missing_slots[core_i] then full[#full + 1] = core_i end end
    log("INFO", T("waiting_full", c.card, side, list_text(full, 32)))
  end
  if s.idle_unarrived > 0 then log("INFO", T("idle_unarrived", an .. ".2", c.card, s.idle_unarrived, side)) end
end

--- Analyse one card. params: the KEY=VALUE parameters as numbers; win_rules: rules/win_layout.lua.
-- Returns the card result; problems go to c.anomalies, lines to log(level, text).
function M.card(entry, layout, win_rules, params, log)
  local c = { card = entry.card, dir = entry.dir, anomalies = {}, time = entry.data.time }
  local function anomaly(sev, an, msg)
    c.anomalies[#c.anomalies + 1] = { severity = sev, card = entry.card, analysis = an, message = msg }
    log(sev, msg)
  end
  log("INFO", T("sources", entry.card, table.concat(entry.data.sources, ", ")))
  local win = entry.data.window
  c.op, c.op_source, c.op_from = entry.data.op, entry.data.op_source, entry.data.op_from
  -- 1 input checks
  log("INFO", T("inputs"))
  for _, side in ipairs({ "dispatch", "combine" }) do
    c[side] = analysis.read_side(win, layout, side)
    if c[side].ran then
      local field, v, lo, hi = analysis.impossible(c[side], layout)
      if field then return nil, T("impossible", entry.data.window_source or entry.dir, entry.card, side, field, tostring(v), lo, hi) end
    end
  end
  for _, side in ipairs({ "dispatch", "combine" }) do check_side(c, side, c[side], anomaly, log) end
  local d, cs = c.dispatch, c.combine
  if d.ran and cs.ran and d.cores ~= cs.cores then anomaly("WARNING", "1", T("core_mismatch", c.card, d.cores, cs.cores)) end
  local ran = d.ran and d or cs
  c.rank = ran.rank_id or entry.card
  c.ep, c.moe, c.bs = ran.ep_world_size or 0, ran.moe_expert_num or 0, ran.bs
  local shared_cards = params.share_expert_card_count or 0
  c.shared_expert_card = c.rank < shared_cards
  c.local_experts = c.shared_expert_card and math.max(params.share_expert_num or 0, 1)
    or ((c.ep - shared_cards) > 0 and c.moe // (c.ep - shared_cards) or 0)
  log("INFO", T(c.shared_expert_card and "shared" or "not_shared", entry.card, c.local_experts))
  c.stuck_op = side_of_op(c.op)
  if c.op then log("INFO", T("raised", c.op, c.op_source or "?")) end
  c.version = version_of(c.op)
  c.input_index = win_rules.inputs[c.version] or win_rules.inputs.V2
  check_ids(c, entry.data.inputs[c.input_index.expert_ids], params, anomaly, log)
  -- 2 execution order
  log("INFO", T("order"))
  execution_order(c, anomaly, log)
  -- 3 dispatch and 4 combine status bits
  log("INFO", T("dstatus"))
  status_bits(c, "dispatch", win, layout, params, anomaly, log)
  log("INFO", T("cstatus"))
  status_bits(c, "combine", win, layout, params, anomaly, log)
  c.inputs = entry.data.inputs
  return c
end

-- The first index where got and want differ, and how many differ (lengths compared too).
local function compare(got, want)
  local first, n = nil, 0
  for i = 1, #want do
    if got[i] ~= want[i] then
      n = n + 1
      first = first or i
    end
  end
  return first, n
end

local function triple_text(list, i)
  return ("(%s,%s,%s)"):format(list[i] or "-", list[i + 1] or "-", list[i + 2] or "-")
end

-- 7 for one card in combine: epSendCounts, and the third input (V1 expandIdx, V2/V3
-- assistInfoForCombine) against what every card's expertIds give.
local function check_combine_inputs(c, ctx, anomaly, log)
  local rank = c.rank
  local send = c.inputs[c.input_index.ep_send_counts]
  local expected = ctx.counts[rank]
  if send and expected then
    local got = send[1]:totable()
    c.ep_send_counts = got
    if #got < #expected then
      anomaly("ERROR", "7", T("send_len", c.card, #got, #expected))
    else
      local first, n = compare(got, expected)
      if first then
        anomaly("ERROR", "7", T("send_bad", c.card, first - 1, got[first], expected[first], n, #expected))
      else
        log("INFO", T("send_ok", c.card))
      end
    end
  end
  if c.input_index.expand_idx then
    local ex = c.inputs[c.input_index.expand_idx]
    if ex and c.expert_ids then
      local got = ex[1]:totable()
      c.expand_idx = got
      local want = analysis.expected_expand_idx(c.expert_ids)
      local first = compare(got, want)
      if first then anomaly("ERROR", "7", T("expand_bad", c.card, first - 1, got[first] or T("missing_value"), want[first])) end
    end
    return
  end
  local ai = c.inputs[c.input_index.assist_info]
  if not (ai and expected) then return end
  local got = ai[1]:totable()
  local want = analysis.expected_assist_info(ctx.triples, ctx.shared, ctx.local_n, rank)
  c.assist_info = table.move(got, 1, math.min(#got, #want + 3 * 4), 1, {})
  if ctx.assist_layout ~= "rank_token_k" then
    log("INFO", T("assist_unknown", c.card, tostring(ctx.soc), list_text(c.assist_info, 24), list_text(want, 24)))
    return
  end
  local first, n = compare(got, want)
  if first then
    local t = (first - 1) // 3 * 3 + 1
    anomaly("ERROR", "7", T("assist_bad", c.card, (t - 1) // 3, triple_text(got, t), triple_text(want, t),
      (n + 2) // 3, #want // 3))
  else
    log("INFO", T("assist_ok", c.card, #want // 3))
  end
end

--- Cross-card checks (6), the epSendCounts / assistInfoForCombine check (7) and the wait-for
-- graph (8). opts: the parameters, soc_version, soc (the socs entry), first_fail (card -> time).
function M.cross(cards, params, log)
  local out = { anomalies = {} }
  local function anomaly(sev, an, msg, card)
    out.anomalies[#out.anomalies + 1] = { severity = sev, card = card, analysis = an, message = msg }
    log(sev, msg)
  end
  log("INFO", T("cross"))
  for _, spec in ipairs({ { "dispatch", "run_count", "WARNING" }, { "combine", "run_count", "WARNING" },
                          { "dispatch", "moe_expert_num", "ERROR" }, { "combine", "moe_expert_num", "ERROR" },
                          { "dispatch", "global_bs", "WARNING" }, { "combine", "global_bs", "WARNING" } }) do
    local side, field, sev = spec[1], spec[2], spec[3]
    -- a side that never ran on a card is no difference between cards
    local values = {}
    for _, c in ipairs(cards) do if c[side].ran ~= false then values[#values + 1] = c[side][field] end end
    local common = analysis.most_common(values)
    local odd = {}
    for _, c in ipairs(cards) do
      if c[side].ran ~= false and c[side][field] ~= common then
        odd[#odd + 1] = ("%d=%s"):format(c.card, tostring(c[side][field]))
      end
    end
    out[side .. "_" .. field] = { value = common, odd = odd }
    log("INFO", T("cross_values", side, field, list_text(values, 32)))
    if #odd > 0 then anomaly(sev, "6", T("cross_odd", side, field, tostring(common), table.concat(odd, ", "))) end
  end
  -- 7: expected epSendCounts and assistInfoForCombine vs the inputs of the cards in combine
  log("INFO", T("seven"))
  local ctx = { by_rank = {}, shared = params.share_expert_card_count or 0, soc = params.soc_version,
                assist_layout = params.soc and params.soc.assist_info }
  for _, c in ipairs(cards) do
    ctx.ep = ctx.ep or c.ep
    if not c.shared_expert_card then ctx.local_n = ctx.local_n or c.local_experts end
    if c.rank and c.expert_ids and c.k then ctx.by_rank[c.rank] = { ids = c.expert_ids, k = c.k } end
  end
  out.checked = {}
  local without = {}
  for _, c in ipairs(cards) do if not c.expert_ids then without[#without + 1] = c.card end end
  -- a rank of the cluster with no analysed card (a dump that could not be read, a missing folder)
  -- has no expertIds either
  local absent, eps = {}, {}
  for r = 0, (ctx.ep or 0) - 1 do if not ctx.by_rank[r] and #without == 0 then absent[#absent + 1] = r end end
  -- cards that disagree on epWorldSize give no one expected layout (and no bound on its size)
  for _, c in ipairs(cards) do if c.ep ~= ctx.ep then eps[#eps + 1] = ("%d=%s"):format(c.card, tostring(c.ep)) end end
  if #eps > 0 then
    log("INFO", T("seven_ep", tostring(ctx.ep), table.concat(eps, ", ")))
  elseif #absent > 0 then
    log("INFO", T("seven_absent", list_text(absent, 32)))
  elseif #without > 0 then
    -- the expected values need the expertIds of every card
    log("INFO", T("seven_skipped", list_text(without)))
  elseif ctx.ep and ctx.local_n then
    ctx.counts, ctx.triples = analysis.expected_send_counts(ctx.by_rank, ctx.ep, ctx.shared, ctx.local_n)
    out.expert_triples = ctx.triples
    out.expected_ep_send_counts = ctx.counts
    for _, c in ipairs(cards) do
      local function card_anomaly(sev, an, msg)
        out.anomalies[#out.anomalies + 1] = { severity = sev, card = c.card, analysis = an, message = msg }
        log(sev, msg)
      end
      if c.stuck_in ~= "combine" then
        log("INFO", T("not_in_combine", c.card))
      elseif c.inputs and side_of_op(c.op) ~= "combine" then
        log("INFO", T("not_combine_dump", c.card, c.op or "?"))
      elseif c.inputs then
        check_combine_inputs(c, ctx, card_anomaly, log)
        out.checked[#out.checked + 1] = c.card
      end
    end
  end
  -- 8: who waits for whom, and the card that started it
  log("INFO", T("eight"))
  out.wait_for = wait_for.graph(cards, params)
  out.first_fail, out.first_fail_from = wait_for.first_fail(cards, params.plog_first)
  out.root_cards = wait_for.roots(out.wait_for, out.first_fail)
  for _, e in ipairs(out.wait_for) do
    log("INFO", T("waits", e.card, e.side, list_text(e.cores, 16), list_text(e.waits_for), e.slots))
  end
  if #out.wait_for == 0 then
    log("INFO", T("no_wait"))
  elseif #out.root_cards == 0 then
    local waited = {}
    for _, e in ipairs(out.wait_for) do waited[#waited + 1] = e.card end
    anomaly("WARNING", "8", T("cycle", list_text(waited)))
  else
    for i, r in ipairs(out.root_cards) do
      local t = out.first_fail[r]
      anomaly(i == 1 and "ERROR" or "WARNING", "8", T(i == 1 and "root_first" or "root_other", r,
        t and tostring(t) or T("unknown_time"), T("time_" .. out.first_fail_from)), r)
    end
  end
  return out
end

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
  local found = {}
  for _, p in ipairs(fs.walk(opts.target_dir)) do
    if p:match("/moe_summary%.json$") then found[#found + 1] = p end
  end
  if #found == 0 then return nil, i18n.t("moe.no_summaries", opts.target_dir) end
  local res = { cards = {}, failed = {}, damaged = {}, anomalies = {}, soc = opts.soc_version, target_dir = opts.target_dir,
                merged = found }
  local soc = rules.socs[opts.soc_version]
  local layout = soc and rules.layouts[soc.layout]
  local seen = {}
  for _, p in ipairs(found) do
    log("INFO", T("merging", p))
    -- a machine whose summary cannot be read or holds impossible cards is reported; the others merge
    local ok, cards, err = pcall(M.summary_cards, p, layout)
    if not ok then cards, err = nil, ("%s: %s"):format(p, tostring(cards)) end
    if not cards then
      err = readable(tostring(err))
      res.failed[#res.failed + 1] = { dir = p, reason = err }
      res.anomalies[#res.anomalies + 1] = { severity = "ERROR", analysis = "merge", message = err }
      log("ERROR", err)
    else
      for _, c in ipairs(cards.list) do
        if seen[c.rank] then
          local msg = i18n.t("moe.duplicate_rank", p, c.rank)
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
  if #res.cards > 0 then
    res.cross = M.cross(res.cards, M.params(opts, rules), log)
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
    local cok, card, cerr = pcall(M.card, e, layout, rules, params, log)
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
    res.cross = M.cross(res.cards, M.params(params, rules), log)
    for _, a in ipairs(res.cross.anomalies) do res.anomalies[#res.anomalies + 1] = a end
  end
  res.layout = layout
  return res
end

--- The whole run over the cards of `TARGET_DIR/<n>/`: every unit of the plan, then assemble.
-- @tparam table opts `target_dir`, `soc_version` ("910_93", "950", "910B"),
-- `share_expert_card_count`, `sp_moe_num`, `tp_worldsize`, `share_expert_num`, `k`, `rules`, and
-- `log` (`function(level, text)`, called for every line of the analysis)
-- @treturn table `{cards, failed, ...}`; each card has `card`, `stuck_in` and `anomalies`;
-- `wait_for` and `root_cards` give who waits for whom and the cards that started it
-- @treturn[2] nil when the input cannot be used at all
-- @treturn[2] string why
function M.run(opts)
  local plan, err = M.plan(opts)
  if not plan then return nil, err end
  local outcomes = {}
  for i = 1, #plan.units do outcomes[i] = { ok = M.work(plan, i) } end
  return M.assemble(plan.context, outcomes, plan.rules, opts.log)
end

return M
