--- The graph comparison: every card's node sequence against the reference, the sequence most
-- cards have (a card that differs from the majority is the odd one, whichever its number; card
-- 0 is no better a witness than card 5). Verdicts:
-- "identical" (same nodes in the same order), "order" (the same multiset of nodes in another
-- order; first_divergence is the first 0-based index where they part), "count" (some node
-- occurs a different number of times; counts = node -> {count on a, count on b}).
-- @module ascope.analysis.graph
local i18n = require "ascope.i18n"
local ranks = require "ascope.ranks"

local M = {}

local function counts(seq)
  local c = {}
  for _, n in ipairs(seq) do c[n] = (c[n] or 0) + 1 end
  return c
end

--- Compare two sequences.
function M.compare(a, b)
  local same = #a == #b
  local first
  for i = 1, math.max(#a, #b) do
    if a[i] ~= b[i] then
      same = false
      first = i - 1
      break
    end
  end
  if same then return { verdict = "identical" } end
  local ca, cb = counts(a), counts(b)
  local diff = {}
  for n, k in pairs(ca) do if cb[n] ~= k then diff[n] = { k, cb[n] or 0 } end end
  for n, k in pairs(cb) do if not ca[n] then diff[n] = { 0, k } end end
  if next(diff) == nil then
    return { verdict = "order", first_divergence = first, at = { a[first + 1], b[first + 1] } }
  end
  return { verdict = "count", counts = diff, first_divergence = first }
end

-- the factor of the number a sequence is looked up by (a spec sets 0 to make every sequence
-- ending in the same name meet in one bucket)
M.KEY_FACTOR = 1000003

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i] ~= b[i] then return false end
  end
  return true
end

--- The reference of cards (sorted): the cards grouped by identical sequences, the largest group
-- the majority; of groups of the same size the one holding the lowest card, so that the choice
-- does not depend on reading order. Returns {card (its lowest card), cards (the group), tie (the
-- number of other groups as large: no majority then)}, or nil when there is no card.
function M.reference(cards, by_card)
  -- a card joins the group whose first card has the same sequence: looked for among the groups
  -- of the same number, made from the sequence's names (each distinct name numbered once;
  -- integer arithmetic wraps), and confirmed name by name. A text of the whole sequence as the
  -- key cost a string a node: two cards of 2M nodes took 3 s and hundreds of MB for it.
  local groups, by_key, number, names = {}, {}, {}, 0
  for _, c in ipairs(cards) do
    local seq = by_card[c].nodes
    local key = #seq
    for _, n in ipairs(seq) do
      local id = number[n]
      if not id then
        names = names + 1
        id, number[n] = names, names
      end
      key = key * M.KEY_FACTOR + id
    end
    local bucket = by_key[key] or {}
    by_key[key] = bucket
    local g
    for _, other in ipairs(bucket) do
      if same(by_card[other[1]].nodes, seq) then g = other end
    end
    if g then
      g[#g + 1] = c
    else
      g = { c }
      bucket[#bucket + 1], groups[#groups + 1] = g, g
    end
  end
  local best, tie = nil, 0
  for _, g in ipairs(groups) do -- in the order of their lowest card
    if not best or #g > #best then
      best, tie = g, 0
    elseif #g == #best then
      tie = tie + 1
    end
  end
  return best and { card = best[1], cards = best, tie = tie }
end

--- Each card (in cards, sorted) but the reference's (ref, see M.reference) against it:
-- {a = the reference card, b, verdict, ...} per pair.
function M.pairs(cards, by_card, ref)
  local out = {}
  if not ref then return out end
  for _, c in ipairs(cards) do
    if c ~= ref.card then
      local cmp = M.compare(by_card[ref.card].nodes, by_card[c].nodes)
      cmp.a, cmp.b = ref.card, c
      out[#out + 1] = cmp
    end
  end
  return out
end

--- Findings: {severity, card, cards, analysis, message}, one ERROR per card whose nodes differ
-- from the reference card's (in order or in number), a WARNING when no order has a majority
-- (the reference is then the lowest card of the largest groups) and one naming the cards
-- between the lowest and the highest that have no graph file.
function M.anomalies(res)
  local out = {}
  if res.missing and #res.missing > 0 then
    out[#out + 1] = { severity = "WARNING", card = res.missing[1][1], analysis = "graph",
                      message = i18n.t("graph.missing_cards", ranks.ranges_text(res.missing)) }
  end
  local ref = res.reference
  if ref and ref.tie > 0 then
    out[#out + 1] = { severity = "WARNING", card = ref.card, analysis = "graph",
                      message = i18n.t("graph.tie", ref.tie + 1, #ref.cards, ref.card) }
  end
  for _, p in ipairs(res.pairs) do
    if p.verdict ~= "identical" then
      local where = p.first_divergence and i18n.t("graph.from_index", p.first_divergence) or ""
      out[#out + 1] = { severity = "ERROR", card = p.b, cards = { p.a, p.b }, analysis = "graph",
                        message = i18n.t(p.verdict == "order" and "graph.order" or "graph.count", p.a, p.b, where) }
    end
  end
  return out
end

return M
