-- Builds synthetic MoE window dumps, in every accepted file form, from a description, so the
-- specs can say exactly which cards, cores and slots are wrong. Independent of ascope's reader:
-- protobuf and .npy are encoded here by hand.
local h = require "helper"

local M = {}

local KiB = 1024
local INFO = { dispatch = 768 * KiB, combine = 818 * KiB }
local STATUS = { dispatch = { [0] = 0, [1] = 384 * KiB }, combine = { [0] = 64 * KiB, [1] = 448 * KiB } }
local FIELD = { flag = 0, position = 1, rank_id = 2, moe = 3, ep = 4, global_bs = 5, run = 6, hccl_rank = 8, hccl_ep = 9 }

function M.split(total, n)
  local out = {}
  for c = 1, n do out[c] = total // n + (c <= total % n and 1 or 0) end
  return out
end

-- side = {cores, flag, position, rank_id, moe, ep, global_bs, run, hccl_rank, hccl_ep,
--         deviations = {field = {core = value}}}; slots = per-core counts; missing = {core = {slots}}
local function fill_side(words, name, side, slots, missing)
  for c = 0, side.cores - 1 do
    local base = INFO[name] // 4 + c * 128
    for f, w in pairs(FIELD) do
      local v = side[f] or 0
      if side.deviations and side.deviations[f] and side.deviations[f][c] then v = side.deviations[f][c] end
      words[base + w + 1] = v
    end
  end
  local live = (side.flag or 0) == 0 and 1 or 0
  local at = STATUS[name][live] // 4
  for c, n in ipairs(slots) do
    local miss = {}
    for _, j in ipairs((missing or {})[c - 1] or {}) do miss[j] = true end
    for j = 0, n - 1 do
      if not miss[j] then words[at + 1] = 1 end
      at = at + 8
    end
  end
end

--- The 1 MiB window of one card.
function M.window(card, params)
  local words = {}
  for i = 1, 262144 do words[i] = 0 end
  local d, c = card.dispatch, card.combine
  local shared = (params.share_expert_card_count or 0)
  local is_shared = d.rank_id < shared
  local local_n = is_shared and 1 or d.moe // (d.ep - shared)
  local dtotal = is_shared and d.ep or local_n * d.ep
  fill_side(words, "dispatch", d, M.split(dtotal, d.cores), card.missing and card.missing.dispatch)
  local k = #card.expert_ids[1]
  local bs = c.global_bs // c.ep
  local slots = {}
  for i, t in ipairs(M.split(bs, c.cores)) do slots[i] = t * (k + (params.share_expert_num or 0)) end
  fill_side(words, "combine", c, slots, card.missing and card.missing.combine)
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

-- the operator's inputs: x, expertIds (bs, k), expandIdx, epSendCounts
local function inputs(card)
  local ids, nids = int32s(card.expert_ids)
  local list = { { data = string.rep("\0", 16), shape = { 4 } },
                 { data = ids, shape = { #card.expert_ids, #card.expert_ids[1] }, n = nids } }
  if card.expand_idx then list[3] = { data = (int32s(card.expand_idx)), shape = { #card.expand_idx } } end
  if card.ep_send_counts then
    list[3] = list[3] or { data = "", shape = { 0 } }
    list[4] = { data = (int32s(card.ep_send_counts)), shape = { #card.ep_send_counts } }
  end
  return list
end

--- Write one card folder in the given form: "raw" (910_93), "msaicerr" (910_93), "mc2" (950/910B).
function M.write_card(dir, card, params, form)
  local win = M.window(card, params)
  local op = card.op or "MoeDistributeDispatchV2"
  local ins = inputs(card)
  if form == "mc2" then
    h.write(("%s/mc2_exception_info_%s.5.12.1717000000"):format(dir, op), string.rep("\7", 4096) .. win)
    h.write(("%s/%s_1a2b3c_host.o"):format(dir, op), "")
    for i, inp in ipairs(ins) do
      h.write(("%s/%s.1.2.3.input.%d.0.npy"):format(dir, op, i - 1), npy("<i4", inp.shape, inp.data))
    end
  elseif form == "msaicerr" then
    h.write(("%s/%s.1.2.3.workspace.1.0.npy"):format(dir, op), npy("|u1", { 1024 + #win }, string.rep("\0", 1024) .. win))
    h.write(("%s/%s.1.2.3.workspace.0.0.npy"):format(dir, op), npy("|u1", { 64 }, string.rep("\1", 64)))
    for i, inp in ipairs(ins) do
      h.write(("%s/%s.1.2.3.input.%d.0.npy"):format(dir, op, i - 1), npy("<i4", inp.shape, inp.data))
    end
    h.write(("%s/%s_1a2b3c_host.o"):format(dir, op), "")
  else
    local ws0, ws1 = string.rep("\1", 64), string.rep("\0", 2048) .. win
    local header = { fl(1, "2.0"), fv(2, 1717000000) }
    for _, inp in ipairs(ins) do
      local dims = {}
      for _, d in ipairs(inp.shape) do dims[#dims + 1] = fv(1, d) end
      header[#header + 1] = fl(4, fv(1, 3) .. fv(2, 2) .. fl(3, table.concat(dims)) .. fv(5, #inp.data))
    end
    header[#header + 1] = fl(6, op)
    header[#header + 1] = fl(8, fv(1, 0) .. fv(3, #ws0))
    header[#header + 1] = fl(8, fv(1, 0) .. fv(3, #ws1))
    local hdr = table.concat(header)
    local body = {}
    for _, inp in ipairs(ins) do body[#body + 1] = inp.data end
    h.write(("%s/%s.1.2.3.1717000000"):format(dir, op), string.pack("<I8", #hdr) .. hdr .. table.concat(body) .. ws0 .. ws1)
  end
end

--- A card description with defaults: 24 cores per side, ep 2, moe 16, bs 6 (globalBs 12), k 4.
function M.card(rank, over)
  over = over or {}
  local function side(run)
    return { cores = 24, flag = 0, position = 0, rank_id = rank, moe = 16, ep = 2, global_bs = 12, run = run,
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

return M
