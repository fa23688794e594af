--- The graph comparison: every card's node sequence against the lowest card's. Verdicts:
-- "identical" (same nodes in the same order), "order" (the same multiset of nodes in another
-- order; first_divergence is the first 0-based index where they part), "count" (some node
-- occurs a different number of times; counts = node -> {count on a, count on b}).
-- @module ascope.analysis.graph
local i18n = require "ascope.i18n"

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

--- Each card (in cards, sorted) against the first: {a, b, verdict, ...} per pair.
function M.pairs(cards, by_card)
  local out = {}
  local ref = cards[1]
  for k = 2, #cards do
    local c = cards[k]
    local cmp = M.compare(by_card[ref].nodes, by_card[c].nodes)
    cmp.a, cmp.b = ref, c
    out[#out + 1] = cmp
  end
  return out
end

--- Findings: {severity, card, cards, analysis, message}, one ERROR per card whose nodes differ
-- from the reference card's (in order or in number).
function M.anomalies(res)
  local out = {}
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
