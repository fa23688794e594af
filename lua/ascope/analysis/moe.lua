--- MoE dispatch/combine hang analysis of window dumps. Pure functions of views, layouts and
-- parameters; the numbering follows the field engineers' script (1 input checks, 2 execution
-- order, 3 dispatch status bits, 4 combine status bits, 6 cross-card, 7 epSendCounts/expandIdx).
local M = {}

local function most_common(values)
  local count, best, best_n = {}, nil, -1
  for _, v in ipairs(values) do
    count[v] = (count[v] or 0) + 1
    if count[v] > best_n or (count[v] == best_n and v < best) then best, best_n = v, count[v] end
  end
  return best
end
M.most_common = most_common

--- Split total over n cores: base each, the remainder one each to the first cores.
function M.split(total, n)
  local out = {}
  if n <= 0 then return out end
  local base, rem = total // n, total % n
  for c = 1, n do out[c] = base + (c <= rem and 1 or 0) end
  return out
end

--- The routed experts each moe card holds: moe / (epWorldSize - shared cards), 0 when no card
-- is left for them. A shared-expert card holds none of them, but its combine slots still name them.
function M.experts_per_moe_card(ep, moe, shared_cards)
  local n = (ep or 0) - (shared_cards or 0)
  return n > 0 and (moe or 0) // n or 0
end

--- What a window of this layout can hold, per field of a per-core block: {low, high}. The
-- dispatch status buffer has a slot per (local expert, source rank), so epWorldSize and the
-- expert count are at most its slots; a card's tokens (globalBs / epWorldSize) at most the
-- combine buffer's slots; the flag names one of the two buffers. A value outside is no state of
-- the kernel but a shifted or damaged window, and loops sized by it would not end.
function M.field_limits(layout)
  local function slots(side)
    local b = layout[side].status
    return math.min((b[0][2] - b[0][1]) // layout.slot_bytes, (b[1][2] - b[1][1]) // layout.slot_bytes)
  end
  local nd, nc = slots("dispatch"), slots("combine")
  return { flag = { 0, 1 }, ep_world_size = { 1, nd }, hccl_ep_world_size = { 1, nd }, moe_expert_num = { 0, nd },
           rank_id = { 0, nd - 1 }, hccl_rank_id = { 0, nd - 1 }, global_bs = { 0, nc * nd },
           run_count = { 0, math.maxinteger }, tokens = { 0, nc } }
end

--- The first field of a side (its most common value over the cores) that the window cannot hold:
-- field, value, low, high; nil when every one fits. rank_id must be below epWorldSize and the
-- card's tokens (globalBs // epWorldSize) fit the combine buffer.
function M.impossible(s, layout)
  local limits = M.field_limits(layout)
  local names = {}
  for name in pairs(layout.fields) do if limits[name] then names[#names + 1] = name end end
  table.sort(names)
  for _, name in ipairs(names) do
    local v, l = s[name], limits[name]
    if math.type(v) ~= "integer" or v < l[1] or v > l[2] then return name, v, l[1], l[2] end
  end
  if s.rank_id and s.ep_world_size and s.rank_id >= s.ep_world_size then
    return "rank_id", s.rank_id, 0, s.ep_world_size - 1
  end
  if s.global_bs and s.ep_world_size and s.global_bs // s.ep_world_size > limits.tokens[2] then
    return "global_bs", s.global_bs, 0, limits.tokens[2] * s.ep_world_size
  end
end

--- Per-core blocks of one side (dispatch or combine): {cores, values = field -> list, ...}
function M.read_side(win, layout, side)
  local area = layout[side].info
  local nblocks = (area[2] - area[1]) // layout.block_bytes
  local fields = { head = { 0, "i32", layout.in_use_words } }
  for name, word in pairs(layout.fields) do fields[name] = { word * 4, "i32" } end
  local blocks = win:structs(area[1], nblocks, { size = layout.block_bytes, fields = fields })
  local cores = nblocks
  for i, b in ipairs(blocks) do
    local zero = true
    for _, w in ipairs(b.head) do if w ~= 0 then zero = false break end end
    if zero then
      cores = i - 1
      break
    end
  end
  local s = { cores = cores, ran = cores > 0, per_core = {}, deviations = {} }
  for name in pairs(layout.fields) do
    local list = {}
    for c = 1, cores do list[c] = blocks[c][name] end
    s.per_core[name] = list
    local common = most_common(list)
    s[name] = common
    for c, v in ipairs(list) do
      -- the run position is each core's own state: cores at different places are no anomaly
      if v ~= common and name ~= "position" then
        s.deviations[name] = s.deviations[name] or {}
        s.deviations[name][c - 1] = v
      end
    end
  end
  s.waiting_cores = {}
  for c, pos in ipairs(s.per_core.position or {}) do
    if pos == layout.waiting_position then s.waiting_cores[#s.waiting_cores + 1] = c - 1 end
  end
  return s
end

--- Status bits of one side: which slots of each core arrived in the live buffer.
-- per_core_slots: slots per core (list over cores in use). Fills s.missing_slots (waiting core ->
-- local slots not arrived: only a waiting core is missing anything) and s.idle_unarrived (slots
-- not arrived on cores that are not waiting: still sending, or done with this buffer).
function M.status(win, layout, side, s, per_core_slots)
  local flag = s.flag or 0
  local live = layout.live_buffer == "other" and (flag == 0 and 1 or 0) or flag
  local region = layout[side].status[live]
  local nslots = (region[2] - region[1]) // layout.slot_bytes
  s.live_status_buffer = live
  s.slots_per_core = per_core_slots
  local total = 0
  for _, n in ipairs(per_core_slots) do total = total + n end
  s.total_status_slots = total
  s.missing_slots = {}
  if total > nslots then
    s.status_error = require("ascope.i18n").t("moe.status_slots", total, side, live, nslots)
    return s
  end
  local words = win:array("i32", region[1] + layout.slot_word * 4, nslots, layout.slot_bytes)
  s.status_words = words
  local waiting = {}
  for _, c in ipairs(s.waiting_cores) do waiting[c] = true end
  local at = 0
  s.idle_unarrived = 0
  for c, n in ipairs(per_core_slots) do
    local miss = {}
    for j = 0, n - 1 do
      if words[at + j + 1] == layout.not_arrived then miss[#miss + 1] = j end
    end
    if #miss > 0 then
      if waiting[c - 1] then s.missing_slots[c - 1] = miss else s.idle_unarrived = s.idle_unarrived + #miss end
    end
    at = at + n
  end
  return s
end

--- Expected assistInfoForCombine prefix of the card of `rank` (V2 layout "rank_token_k"): for each
-- of its local experts, the triples (source rank, token, k) routed there in source rank, token, k
-- order, flattened. triples: expert -> list of {rank, token, k}, as expected_send_counts gives them.
function M.expected_assist_info(triples, shared, local_n, rank)
  local out = {}
  for le = 0, local_n - 1 do
    for _, t in ipairs(triples[(rank - shared) * local_n + le] or {}) do table.move(t, 1, 3, #out + 1, out) end
  end
  return out
end

--- Expected expandIdx of one card, V1 kernels (expertIds flattened row by row): for each (token, k) in order, how many of this card's
-- earlier (token, k) went to the same expert.
function M.expected_expand_idx(ids)
  local seen, out = {}, {}
  for i = 1, #ids do
    local e = ids[i]
    out[i] = seen[e] or 0
    seen[e] = (seen[e] or 0) + 1
  end
  return out
end

--- Expected epSendCounts of every card: for each local expert and each source rank, the
-- number of (token, k) routed there, accumulated in (expert, rank) order.
-- cards: rank -> {ids (list), k}; layout of experts: the first `shared` ranks hold no routed
-- experts, the others hold `local_n` consecutive experts each.
function M.expected_send_counts(cards, ep, shared, local_n)
  local per_expert = {} -- expert -> rank -> count
  local triples = {}    -- expert -> list of {rank, token, k}
  for rank = 0, ep - 1 do
    local c = cards[rank]
    if c and c.ids then
      for i = 1, #c.ids do
        local e = c.ids[i]
        per_expert[e] = per_expert[e] or {}
        per_expert[e][rank] = (per_expert[e][rank] or 0) + 1
        triples[e] = triples[e] or {}
        table.insert(triples[e], { rank, (i - 1) // c.k, (i - 1) % c.k })
      end
    end
  end
  local counts = {}
  for rank = shared, ep - 1 do
    local list, acc = {}, 0
    for le = 0, local_n - 1 do
      local e = (rank - shared) * local_n + le
      for src = 0, ep - 1 do
        acc = acc + ((per_expert[e] or {})[src] or 0)
        list[#list + 1] = acc
      end
    end
    counts[rank] = list
  end
  return counts, triples
end

return M
