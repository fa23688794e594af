--- Writers of `ascope graph`: graph_summary.json and the console summary.
-- @module ascope.report.graph
local core = require "ascope_core"
local writer = require "ascope.report.writer"
local i18n = require "ascope.i18n"
local ranks = require "ascope.ranks"
local t = i18n.t

local M = {}

local array = require("ascope.fmt").array

--- graph_summary.json as plain data.
function M.data(res)
  local cards = {}
  for _, c in ipairs(res.cards) do cards[tostring(c)] = array(res.graphs[c].nodes) end
  local pairs_ = array()
  for i, p in ipairs(res.pairs) do
    pairs_[i] = { a = p.a, b = p.b, verdict = p.verdict, first_divergence = p.first_divergence,
                  at = p.at and array(p.at), counts = p.counts }
  end
  local failed = array()
  for i, f in ipairs(res.failed) do failed[i] = { path = f.path, card = f.card, reason = f.reason } end
  local ref = res.reference
  local missing = array()
  for i, ab in ipairs(res.missing or {}) do missing[i] = array({ ab[1], ab[2] }) end
  return { input = res.input, cards = cards, pairs = pairs_, failed = failed, missing_cards = missing,
           reference = ref and { card = ref.card, cards = array(ref.cards), tie = ref.tie } }
end

--- Write graph_summary.json into out (formats: a set with "json"). Returns true or nil, message.
function M.write(res, out, formats)
  if not formats.json then return true end
  local w, werr = writer.open(out .. "/graph_summary.json")
  if not w then return nil, werr end
  w:write(core.json.encode(M.data(res), { indent = 2 }), "\n")
  return w:close()
end

-- the nodes whose counts differ that a console line names
M.COUNTS_SHOWN = 20

--- The console summary, as lines: the cards, their nodes and files, each pair's verdict. Also
-- returns the number of pairs that differ.
function M.lines(res)
  local out = { "[INFO] " .. t("graph.files", #res.cards, table.concat(res.cards, ", ")) }
  for _, c in ipairs(res.cards) do
    out[#out + 1] = "[INFO] " .. t("graph.card_nodes", c, #res.graphs[c].nodes, table.concat(res.graphs[c].files, ", "))
  end
  if res.missing and #res.missing > 0 then
    out[#out + 1] = "[WARNING] " .. t("graph.missing_cards", ranks.ranges_text(res.missing))
  end
  local ref = res.reference
  if ref and #res.cards > 1 then
    out[#out + 1] = "[INFO] " .. t("graph.reference", ref.card, #ref.cards, #res.cards)
    if ref.tie > 0 then out[#out + 1] = "[WARNING] " .. t("graph.tie", ref.tie + 1, #ref.cards, ref.card) end
  end
  local bad = 0
  for _, p in ipairs(res.pairs) do
    if p.verdict == "identical" then
      out[#out + 1] = "[INFO] " .. t("graph.identical", p.a, p.b)
    elseif p.verdict == "order" then
      bad = bad + 1
      out[#out + 1] = "[ERROR] " .. t("graph.order_at", p.a, p.b, p.first_divergence, tostring(p.at[1]), tostring(p.at[2]))
    else
      bad = bad + 1
      local names = {}
      for n in pairs(p.counts) do names[#names + 1] = n end
      table.sort(names)
      -- the first few on the console (two cards of 2M nodes made one line of 95 MB); the
      -- summary's counts hold them all
      local list = {}
      for i = 1, math.min(#names, M.COUNTS_SHOWN) do
        local c = p.counts[names[i]]
        list[i] = ("%s %d vs %d"):format(names[i], c[1], c[2])
      end
      if #names > M.COUNTS_SHOWN then list[#list + 1] = t("graph.counts_more", #names - M.COUNTS_SHOWN) end
      out[#out + 1] = "[ERROR] " .. t("graph.counts_differ", p.a, p.b, table.concat(list, "; "))
    end
  end
  return out, bad
end

return M
