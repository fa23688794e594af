--- The per-card MoE analysis of one card's window dump (the numbering follows the field
-- engineers' script): 1 input checks (per-core fields, the HCCL link, expertIds), 2 execution
-- order (the side the card is in), 3 dispatch and 4 combine status bits (the slots each waiting
-- core misses). Findings go to the card's anomalies, the running account to log(level, text).
-- @module ascope.analysis.moe_card
local analysis = require "ascope.analysis.moe"
local i18n = require "ascope.i18n"

local function T(key, ...) return i18n.t("moe." .. key, ...) end

local M = {}

--- A list as "[a,b,...]", cut after max elements with "...".
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

--- The kernel version of an operator name: V1 kernels carry no version suffix; a dump without
-- an operator name is taken as V2.
local function version_of(op)
  if not op then return "V2" end
  local v = op:match("V(%d)$")
  return v and ("V" .. v) or "V1"
end

M.version_of = version_of

--- "dispatch" or "combine" for an operator name, nil for another.
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
  -- the expert count is the window's: a card where neither side ran has none, and every id
  -- would be "out of range"
  local limit
  if c.dispatch.ran or c.combine.ran then
    limit = (c.moe or 0) + (params.sp_moe_num or 0)
  else
    log("INFO", T("ids_no_range", c.card))
  end
  local bad = 0
  for row = 0, #ids // k - 1 do
    local seen = {}
    for j = 1, k do
      local e = ids[row * k + j]
      if limit and (e < 0 or e >= limit) then
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
    anomaly("ERROR", an, i18n.t("field.card_text", c.card, s.status_error))
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
    c.anomalies[#c.anomalies + 1] = { severity = sev, card = c.card, analysis = an, message = msg }
    log(sev, msg)
  end
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
  local d, cs = c.dispatch, c.combine
  -- the card is its rankId: folder numbers need not be ranks, and the other cards name it by rank
  local ran = d.ran and d or cs
  c.rank = ran.rank_id or entry.card
  c.card = c.rank
  log("INFO", T("sources", c.card, table.concat(entry.data.sources, ", ")))
  local older = entry.data.older or {}
  if #older > 0 then
    anomaly("WARNING", "1", T("several_dumps", c.card, entry.dir, entry.data.window_source or "?", list_text(older, 8)))
  end
  for _, side in ipairs({ "dispatch", "combine" }) do check_side(c, side, c[side], anomaly, log) end
  if d.ran and cs.ran and d.cores ~= cs.cores then anomaly("WARNING", "1", T("core_mismatch", c.card, d.cores, cs.cores)) end
  c.ep, c.moe, c.bs = ran.ep_world_size or 0, ran.moe_expert_num or 0, ran.bs
  local shared_cards = params.share_expert_card_count or 0
  c.shared_expert_card = c.rank < shared_cards
  c.local_experts = c.shared_expert_card and math.max(params.share_expert_num or 0, 1)
    or analysis.experts_per_moe_card(c.ep, c.moe, shared_cards)
  log("INFO", T(c.shared_expert_card and "shared" or "not_shared", c.card, c.local_experts))
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


return M
