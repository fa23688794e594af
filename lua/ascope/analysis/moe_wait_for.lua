--- Who waits for whom across the cards of a MoE dispatch/combine hang, and which card started it.
--   local g = wait_for.graph(cards, params)   -- {{card, side, cores, waits_for, slots, by_card}}
--   local roots = wait_for.roots(g, cards)    -- cards others wait for that wait for nobody
-- A missing dispatch slot is local expert x epWorldSize + source rank: it names the rank that has
-- not sent. A missing combine slot is token x (k + shared experts) + k: through the card's
-- expertIds it names the expert, and so the rank holding it (shared-expert slots: the shared
-- card rank % SHARE_EXPERT_CARD_COUNT). Ranks are turned into cards through each card's rankId.
local experts_per_moe_card = require("ascope.analysis.moe").experts_per_moe_card

local M = {}

-- The global slot numbers of a side's missing slots: core c's local slot j is the sum of the
-- earlier cores' slots plus j.
local function global_slots(s)
  local out, at = {}, 0
  for c, n in ipairs(s.slots_per_core or {}) do
    for _, j in ipairs((s.missing_slots or {})[c - 1] or {}) do out[#out + 1] = at + j end
    at = at + n
  end
  return out
end

--- The rank a missing slot waits for (nil when the slot cannot be resolved).
function M.peer_rank(c, side, slot, params)
  local ep = c.ep
  if not ep or ep <= 0 then return nil end
  if side == "dispatch" then return slot % ep end
  local k, shared_n = c.k, params.share_expert_num or 0
  if not (k and k > 0 and c.expert_ids) then return nil end
  local per_token = k + shared_n
  local token, j = slot // per_token, slot % per_token
  local shared_cards = params.share_expert_card_count or 0
  if j >= k then
    if shared_cards <= 0 or not c.rank then return nil end
    return c.rank % shared_cards
  end
  -- the expert's holder: a moe card, whose count is not the waiting card's own when that one is a
  -- shared-expert card
  local e, per_card = c.expert_ids[token * k + j + 1], experts_per_moe_card(ep, c.moe, shared_cards)
  if not e or per_card <= 0 or e < 0 or e >= (c.moe or 0) then return nil end
  return shared_cards + e // per_card
end

--- The wait-for edges: one per card and side with waiting cores that miss slots.
-- cards: the analysed cards (card, rank, ep, k, expert_ids, local_experts, moe, dispatch, combine).
function M.graph(cards, params)
  local card_of = {}
  for _, c in ipairs(cards) do if c.rank then card_of[c.rank] = c.card end end
  local edges = {}
  for _, c in ipairs(cards) do
    for _, side in ipairs({ "dispatch", "combine" }) do
      local s = c[side]
      local slots = global_slots(s)
      if #slots > 0 then
        local by_card, unresolved = {}, 0
        for _, g in ipairs(slots) do
          local r = M.peer_rank(c, side, g, params)
          if r then
            local peer = card_of[r] or r -- a rank without a dump keeps its number
            by_card[peer] = (by_card[peer] or 0) + 1
          else
            unresolved = unresolved + 1
          end
        end
        local waits_for = {}
        for peer in pairs(by_card) do waits_for[#waits_for + 1] = peer end
        table.sort(waits_for)
        local cores = {}
        for core in pairs(s.missing_slots) do cores[#cores + 1] = core end
        table.sort(cores)
        edges[#edges + 1] = { card = c.card, side = side, cores = cores, waits_for = waits_for, slots = #slots,
                              by_card = by_card, unresolved = unresolved }
      end
    end
  end
  return edges
end

--- Root candidates: cards others wait for that wait for nobody, the first to fail first.
-- first_fail: card -> a comparable time (a plog time text, else the dump time); cards without
-- one come after those with one, then by number. Returns the sorted list of cards.
function M.roots(edges, first_fail)
  first_fail = first_fail or {}
  local waiting, waited = {}, {}
  for _, e in ipairs(edges) do
    waiting[e.card] = true
    for _, p in ipairs(e.waits_for) do if p ~= e.card then waited[p] = true end end
  end
  local roots = {}
  for card in pairs(waited) do if not waiting[card] then roots[#roots + 1] = card end end
  table.sort(roots, function(a, b)
    local ta, tb = first_fail[a], first_fail[b]
    if ta ~= nil and tb ~= nil and ta ~= tb then return ta < tb end
    if (ta ~= nil) ~= (tb ~= nil) then return ta ~= nil end
    return a < b
  end)
  return roots
end

--- The first-fail times to order root cards by: the dump time of each card, replaced by the
-- first plog error of the card when plog times are given (card -> "YYYY-MM-DD-hh:mm:ss.mmm.uuu",
-- under numbers the caller has checked are the cards': diagnose gives none when they may not be).
function M.first_fail(cards, plog_first)
  local out = {}
  if plog_first and next(plog_first) then
    for card, t in pairs(plog_first) do out[card] = t end
    return out, "plog"
  end
  for _, c in ipairs(cards) do out[c.card] = c.time end
  return out, "dump"
end

return M
