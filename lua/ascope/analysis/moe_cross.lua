--- The MoE cross-card analysis: 6 run counts, expert counts and globalBs across cards, 7 the
-- epSendCounts and assistInfoForCombine (V1: expandIdx) of the cards in combine against what
-- every card's expertIds give, and 8 who waits for whom and the root cards.
-- @module ascope.analysis.moe_cross
local analysis = require "ascope.analysis.moe"
local wait_for = require "ascope.analysis.moe_wait_for"
local moe_card = require "ascope.analysis.moe_card"
local i18n = require "ascope.i18n"

local function T(key, ...) return i18n.t("moe." .. key, ...) end
local list_text, side_of_op = moe_card.list_text, moe_card.side_of_op

local M = {}

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


return M
