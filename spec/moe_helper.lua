-- A generator of MoE dispatch/combine exception dumps whose true state is known.
--
-- Two levels:
--   M.cluster(opts)   simulates a cluster (healthy, dispatch stuck, combine stuck, only dispatch
--                     ran) and returns the card descriptions and the truth: which side each card
--                     is in, which cores wait for which cards, which card started it.
--   M.write_card(dir, card, params, form)
--                     writes one card folder in one of the three file forms (raw dump, msaicerr
--                     split files, mc2 window file) with the real V2 window layout: per-core
--                     info blocks, run positions 0/1/2, flag and the live status buffer (the one
--                     the flag does not name), status slots, the operator's inputs (expertIds,
--                     assistInfoForCombine triples, epSendCounts) and the *_host.o name.
-- Independent of ascope's reader and analysis: protobuf, .npy, the slot numbering, the expected
-- triples and counts are all computed here from the description.
local h = require "helper"

local M = {}

local KiB = 1024
local INFO = { dispatch = 768 * KiB, combine = 818 * KiB }
local STATUS = { dispatch = { [0] = 0, [1] = 384 * KiB }, combine = { [0] = 64 * KiB, [1] = 448 * KiB } }
local FIELD = { flag = 0, position = 1, rank_id = 2, moe = 3, ep = 4, global_bs = 5, run = 6, hccl_rank = 8, hccl_ep = 9 }
M.SENDING, M.WAITING, M.RECEIVED = 0, 1, 2

function M.split(total, n)
  local out = {}
  for c = 1, n do out[c] = total // n + (c <= total % n and 1 or 0) end
  return out
end

-- The status slots of one side, per core: dispatch local expert x epWorldSize + source rank
-- (a shared-expert card: epWorldSize), combine token x (k + shared experts) + k.
function M.slots_per_core(card, side, params)
  local s = card[side]
  if side == "dispatch" then
    local shared = params.share_expert_card_count or 0
    local total = s.rank_id < shared and s.ep or (s.moe // (s.ep - shared)) * s.ep
    return M.split(total, s.cores)
  end
  local k = #card.expert_ids[1]
  local out = {}
  for i, t in ipairs(M.split(s.global_bs // s.ep, s.cores)) do out[i] = t * (k + (params.share_expert_num or 0)) end
  return out
end

-- side = {cores, flag, position | positions (per core, 0-based list), rank_id, moe, ep, global_bs,
-- run, hccl_rank, hccl_ep, deviations = {field = {core = value}}, ran = false (info area empty)};
-- missing = {core = {local slots}}: the slots of the live buffer that did not arrive.
local function fill_side(words, name, card, params)
  local side = card[name]
  if side.ran == false then return end
  for c = 0, side.cores - 1 do
    local base = INFO[name] // 4 + c * 128
    for f, w in pairs(FIELD) do
      local v = side[f] or 0
      if f == "position" and side.positions then v = side.positions[c + 1] or side.position or 0 end
      if side.deviations and side.deviations[f] and side.deviations[f][c] then v = side.deviations[f][c] end
      words[base + w + 1] = v
    end
  end
  local live = (side.flag or 0) == 0 and 1 or 0
  local missing = card.missing and card.missing[name] or {}
  local at, stale = STATUS[name][live] // 4, STATUS[name][1 - live] // 4
  for c, n in ipairs(M.slots_per_core(card, name, params)) do
    local miss = {}
    for _, j in ipairs(missing[c - 1] or {}) do miss[j] = true end
    for j = 0, n - 1 do
      if not miss[j] then words[at + 1] = 1 end
      words[stale + 1] = 3 -- the other buffer holds the previous run's slots, all arrived
      at, stale = at + 8, stale + 8
    end
  end
end

--- The 1 MiB window of one card.
function M.window(card, params)
  local words = {}
  for i = 1, 262144 do words[i] = 0 end
  fill_side(words, "dispatch", card, params)
  fill_side(words, "combine", card, params)
  local parts = {}
  for i = 1, #words, 4096 do
    parts[#parts + 1] = string.pack("<" .. ("i4"):rep(4096), table.unpack(words, i, i + 4095))
  end
  return table.concat(parts)
end

local fv, fl = h.pb_int, h.pb_bytes

local function int32s(list)
  local flat = {}
  for _, v in ipairs(list) do
    if type(v) == "table" then for _, x in ipairs(v) do flat[#flat + 1] = x end else flat[#flat + 1] = v end
  end
  return string.pack("<" .. ("i4"):rep(#flat), table.unpack(flat)), #flat
end

local function npy(descr, shape, data)
  local dims = {}
  for i, d in ipairs(shape) do dims[i] = tostring(d) end
  local header = ("{'descr': '%s', 'fortran_order': False, 'shape': (%s%s), }"):format(descr, table.concat(dims, ", "),
    #dims == 1 and "," or "")
  local total = 10 + #header + 1
  header = header .. (" "):rep((64 - total % 64) % 64) .. "\n"
  return "\147NUMPY\1\0" .. string.pack("<I2", #header) .. header .. data
end

-- The operator's inputs. Combine (V2): expandX, expertIds (bs, k), assistInfoForCombine (A x 128),
-- epSendCounts; V1 combine: expandIdx in place of assistInfoForCombine. Dispatch: x, expertIds,
-- scales (not a combine input: a dispatch dump must not be checked as one).
local function inputs(card)
  local ids, nids = int32s(card.expert_ids)
  local list = { { data = string.rep("\0", 16), shape = { 4 } },
                 { data = ids, shape = { #card.expert_ids, #card.expert_ids[1] }, n = nids } }
  local third = card.assist_info or card.expand_idx
  if third then list[3] = { data = (int32s(third)), shape = { #third } } end
  if card.ep_send_counts then
    list[3] = list[3] or { data = "", shape = { 0 } }
    list[4] = { data = (int32s(card.ep_send_counts)), shape = { #card.ep_send_counts } }
  end
  if not third and not card.ep_send_counts and (card.op or ""):find("Dispatch") then
    list[3] = { data = string.rep("\255", 64), shape = { 16 } }
  end
  -- damaged dumps: card.cut_inputs = {[i] = bytes kept} (the shape stays), card.input_sizes =
  -- {[i] = size written in a raw dump's header} (the data stays)
  for i, n in pairs(card.cut_inputs or {}) do list[i].data = list[i].data:sub(1, n) end
  for i, n in pairs(card.input_sizes or {}) do list[i].size = n end
  return list
end

--- Write one card folder in the given form: "raw" (910_93), "msaicerr" (910_93), "mc2" (950/910B).
-- card.op: the operator that raised the exception; card.op_in_header = false leaves the raw dump
-- header's op_name empty (the *_host.o names it then); card.time: the dump time stamp.
function M.write_card(dir, card, params, form)
  local win = M.window(card, params)
  local op = card.op or "MoeDistributeDispatchV2"
  local time = card.time or 1717000000
  local ins = inputs(card)
  if form == "mc2" then
    h.write(("%s/mc2_exception_info_%s.5.12.%d"):format(dir, op, time), string.rep("\7", 4096) .. win)
    h.write(("%s/%s_1a2b3c_host.o"):format(dir, op), "")
    for i, inp in ipairs(ins) do
      h.write(("%s/%s.1.2.%d.input.%d.0.npy"):format(dir, op, time, i - 1), npy("<i4", inp.shape, inp.data))
    end
  elseif form == "msaicerr" then
    h.write(("%s/%s.1.2.%d.workspace.1.0.npy"):format(dir, op, time), npy("|u1", { 1024 + #win },
      string.rep("\0", 1024) .. win))
    h.write(("%s/%s.1.2.%d.workspace.0.0.npy"):format(dir, op, time), npy("|u1", { 64 }, string.rep("\1", 64)))
    for i, inp in ipairs(ins) do
      h.write(("%s/%s.1.2.%d.input.%d.0.npy"):format(dir, op, time, i - 1), npy("<i4", inp.shape, inp.data))
    end
    h.write(("%s/%s_1a2b3c_host.o"):format(dir, op), "")
  else
    local ws0, ws1 = string.rep("\1", 64), string.rep("\0", 2048) .. win
    local header = { fl(1, "2.0"), fv(2, time) }
    for _, inp in ipairs(ins) do
      local dims = {}
      for _, d in ipairs(inp.shape) do dims[#dims + 1] = fv(1, d) end
      header[#header + 1] = fl(4, fv(1, 3) .. fv(2, 2) .. fl(3, table.concat(dims)) .. fv(5, inp.size or #inp.data))
    end
    if card.op_in_header ~= false then header[#header + 1] = fl(6, op) end
    header[#header + 1] = fl(8, fv(1, 0) .. fv(3, #ws0))
    header[#header + 1] = fl(8, fv(1, 0) .. fv(3, #ws1))
    local hdr = table.concat(header)
    local body = {}
    for _, inp in ipairs(ins) do body[#body + 1] = inp.data end
    local name = card.op_in_header == false and "dump" or op
    h.write(("%s/%s.1.2.3.%d"):format(dir, name, time), string.pack("<I8", #hdr) .. hdr .. table.concat(body) .. ws0 .. ws1)
    if card.op_in_header == false then h.write(("%s/%s_1a2b3c_host.o"):format(dir, op), "") end
  end
end

--- A card description with defaults: 24 cores per side, ep 2, moe 16, bs 6 (globalBs 12), k 4,
-- every core done (run position 2), every slot arrived.
function M.card(rank, over)
  over = over or {}
  local function side(run)
    return { cores = 24, flag = 0, position = M.RECEIVED, rank_id = rank, moe = 16, ep = 2, global_bs = 12, run = run,
             hccl_rank = rank, hccl_ep = 2 }
  end
  local card = { dispatch = side(7), combine = side(7), expert_ids = {}, op = "MoeDistributeCombineV2" }
  for t = 0, 5 do card.expert_ids[t + 1] = { (t * 4 + rank) % 16, (t * 4 + rank + 1) % 16, (t * 4 + rank + 2) % 16,
                                              (t * 4 + rank + 3) % 16 } end
  for k, v in pairs(over) do
    if k == "dispatch" or k == "combine" then
      for f, x in pairs(v) do card[k][f] = x end
    else
      card[k] = v
    end
  end
  return card
end

--- The V2 combine inputs of every card from all cards' expertIds (no shared-expert cards):
-- assistInfoForCombine = triples (source rank, token, k) by local expert, then source rank,
-- token, k, zero-padded to A x 128 words (A = globalBs x min(local experts, k)); epSendCounts =
-- the running count over (local expert, source rank).
function M.combine_inputs(cards, moe)
  local ep = 0
  for _ in pairs(cards) do ep = ep + 1 end
  local local_n = moe // ep
  for r = 0, ep - 1 do
    local card = cards[r]
    local k = #card.expert_ids[1]
    local triples, counts, acc = {}, {}, 0
    for le = 0, local_n - 1 do
      local e = r * local_n + le
      for src = 0, ep - 1 do
        for t, row in ipairs(cards[src].expert_ids) do
          for j, x in ipairs(row) do
            if x == e then
              triples[#triples + 1] = src
              triples[#triples + 1] = t - 1
              triples[#triples + 1] = j - 1
              acc = acc + 1
            end
          end
        end
        counts[#counts + 1] = acc
      end
    end
    local a = card.combine.global_bs * math.min(local_n, k)
    for _ = #triples + 1, a * 128 do triples[#triples + 1] = 0 end
    card.assist_info, card.ep_send_counts = triples, counts
  end
end

--- A simulated cluster. opts: cards (epWorldSize, default 2), moe (16), bs (tokens per card, 6),
-- k (4), cores (24), runs (completed runs before, 6), state = "healthy" | "dispatch_stuck" |
-- "combine_stuck" | "only_dispatch", fault (the rank that raised the exception and sent nothing
-- in the stuck run, or a list of such ranks: their dumps come first, in list order). Returns cards
-- (rank -> description) and truth = {stuck_in = {card -> side}, waits = {card -> {side, cores
-- (0-based), waits_for (cards), slots}}, roots (the faulting ranks, first to fail first)}.
function M.cluster(opts)
  local ep, moe, bs, k = opts.cards or 2, opts.moe or 16, opts.bs or 6, opts.k or 4
  local cores, runs, state, fault = opts.cores or 24, opts.runs or 6, opts.state or "healthy", opts.fault
  local local_n = moe // ep
  local faults = type(fault) == "table" and fault or { fault }
  local is_fault = {}
  for _, f in ipairs(faults) do is_fault[f] = true end
  local cards, truth = {}, { stuck_in = {}, waits = {}, roots = faults }
  local step = moe // k
  for r = 0, ep - 1 do
    local function side(run)
      return { cores = cores, flag = run % 2, position = M.RECEIVED, rank_id = r, moe = moe, ep = ep, global_bs = bs * ep,
               run = run, hccl_rank = r, hccl_ep = ep }
    end
    local d, c = runs, runs
    if state == "dispatch_stuck" then d = runs + 1
    elseif state == "combine_stuck" then d, c = runs + 1, runs + 1
    elseif state == "only_dispatch" then d = 1 end
    local card = { dispatch = side(d), combine = side(c), expert_ids = {}, missing = { dispatch = {}, combine = {} },
                   time = 1717000100 + r }
    if state == "only_dispatch" then card.combine.ran = false end
    for t = 0, bs - 1 do
      local row, base = {}, (7 * t + 3 * r) % moe
      for j = 0, k - 1 do row[j + 1] = (base + j * step) % moe end
      card.expert_ids[t + 1] = row
    end
    local in_side = (state == "dispatch_stuck" or state == "only_dispatch") and "dispatch" or "combine"
    card.op = in_side == "dispatch" and "MoeDistributeDispatchV2" or "MoeDistributeCombineV2"
    truth.stuck_in[r] = in_side
    cards[r] = card
  end
  if state == "healthy" or not fault then
    if cards[0].op:find("Combine") then M.combine_inputs(cards, moe) end
    return cards, truth
  end
  -- the faulting cards' dumps come first; the others time out later
  for i, f in ipairs(faults) do cards[f].time = 1717000000 + i - 1 end
  local side = (state == "combine_stuck") and "combine" or "dispatch"
  for r = 0, ep - 1 do
    local card = cards[r]
    local s = card[side]
    local per_core = M.slots_per_core(card, side, {})
    local positions, waiting, at, missing_slots, waited = {}, {}, 0, 0, {}
    for core = 0, s.cores - 1 do
      local miss = {}
      for j = 0, per_core[core + 1] - 1 do
        local g = at + j
        local from
        if side == "dispatch" then
          from = g % ep                                    -- local expert x ep + source rank
        else
          local e = card.expert_ids[g // k + 1][g % k + 1] -- token x k + k
          from = e // local_n
        end
        if is_fault[from] then
          miss[#miss + 1] = j
          if not is_fault[r] then waited[from] = true end
        end
      end
      at = at + per_core[core + 1]
      if #miss > 0 then card.missing[side][core] = miss end
      if is_fault[r] then
        positions[core + 1] = M.SENDING
      elseif #miss > 0 then
        positions[core + 1] = M.WAITING
        waiting[#waiting + 1] = core
        missing_slots = missing_slots + #miss
      else
        positions[core + 1] = M.RECEIVED
      end
    end
    s.positions = positions
    if not is_fault[r] and #waiting > 0 then
      local waits_for = {}
      for f in pairs(waited) do waits_for[#waits_for + 1] = f end
      table.sort(waits_for)
      truth.waits[r] = { side = side, cores = waiting, waits_for = waits_for, slots = missing_slots }
    end
  end
  if side == "combine" then M.combine_inputs(cards, moe) end
  return cards, truth
end

--- Write a simulated cluster under dir/<rank>/ in one form (or form(rank)).
function M.write_cluster(dir, cards, form, params)
  for r, card in pairs(cards) do
    M.write_card(dir .. "/" .. r, card, params or {}, type(form) == "function" and form(r) or form or "mc2")
  end
end

--- A cluster as machines of two cards (dir/m<k>/dumps/<local card>, mc2 dumps, 910B), each
-- analysed by `ascope moe` into dir/results/m<k>: the input of a START_A2_CLUSTER=1 merge.
-- Returns the exit code of each machine's run.
function M.machine_results(dir, cards)
  local machines = 0
  for rank, card in pairs(cards) do
    M.write_card(("%s/m%d/dumps/%d"):format(dir, rank // 2, rank % 2), card, {}, "mc2")
    machines = math.max(machines, rank // 2 + 1)
  end
  local codes = {}
  for m = 0, machines - 1 do
    codes[m + 1] = h.run("moe", ("TARGET_DIR=%s/m%d/dumps"):format(dir, m), "SOC_VERSION=910B", "-o",
      ("%s/results/m%d"):format(dir, m), "-q")
  end
  return codes
end

return M
