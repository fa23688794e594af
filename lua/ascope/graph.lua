--- Operator order of every card's compiled graph against card 0.
--     local r = assert(require("ascope.graph").run("graphs/"))
--     for _, p in ipairs(r.pairs) do print(p.a, p.b, p.verdict, p.first_divergence) end
-- Verdicts: "identical" (same nodes in the same order), "order" (the same multiset of nodes in
-- another order; first_divergence is the first 0-based index where they part), "count" (some
-- node occurs a different number of times; counts = node -> {count on a, count on b}).
-- @module ascope.graph
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local rules_mod = require "ascope.rules"
local model = require "ascope.analysis.timeline.model"
local fs = core.fs

local i18n = require "ascope.i18n"

local M = {}

function M.rules(user_file)
  return rules_mod.load("graph", user_file) -- checked against its schema (ascope.rule_schemas)
end

local function kind_of(name, rules)
  for _, f in ipairs(rules.files) do
    if name:match(f.name) then return f end
  end
end

local function card_of(path, rules)
  local parts = {}
  for p in path:gmatch("[^/]+") do parts[#parts + 1] = p end
  for k = #parts, 1, -1 do
    for _, pat in ipairs(rules.card) do
      local n = parts[k]:lower():match(pat)
      if n then return math.tointeger(tonumber(n)) end
    end
  end
end

--- The filtered node names of one file, in file order.
function M.nodes(path, kind, filter)
  local f, err = io.open(path, "rb")
  if not f then return nil, path .. ": " .. tostring(err) end
  local text = f:read("a")
  f:close()
  local out = {}
  for name in text:gmatch(kind.node) do
    if model.matches(name, filter) then out[#out + 1] = name end
  end
  return out
end

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

--- Compare the graph files of every card under path with the lowest card's.
-- @tparam string path the folder of the graph files
-- @tparam[opt] table opts `rules` (a user rule file), `filter` (node name patterns, `|` between
-- alternatives), `output` (the run's output folder: files inside it are not read)
-- @treturn table `{input, cards, graphs, pairs, failed}`; each pair has `a`, `b`, `verdict` and,
-- when they differ, `first_divergence` or `counts`
-- @treturn[2] nil when the input cannot be used at all
-- @treturn[2] string why
function M.run(path, opts)
  opts = opts or {}
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local st = fs.stat(path)
  if not st then return nil, i18n.t("input.no_such", path) end
  local files = st.type == "file" and { path } or fs.walk(path)
  -- an earlier run's output folder inside the input (its graph_summary.json is no card's graph),
  -- found by real path whatever way either is spelled
  local skip = opts.output and fs.realpath(opts.output)
  local by_card, failed, seen, skipped = {}, {}, {}, 0
  for _, p in ipairs(files) do
    local kind = kind_of(discover.basename(p), rules)
    local real = kind and skip and fs.realpath(p)
    if real and real:sub(1, #skip + 1) == skip .. "/" then
      kind, skipped = nil, skipped + 1
    end
    if kind then
      local card = card_of(p, rules)
      if not card then
        failed[#failed + 1] = { path = p, reason = i18n.t("graph.unknown_card", p) }
      else
        local nodes, err = M.nodes(p, kind, opts.filter or rules.filter)
        if not nodes then
          failed[#failed + 1] = { path = p, card = card, reason = err }
        else
          -- several files of one card are read in name order, one after the other
          by_card[card] = by_card[card] or { files = {}, nodes = {} }
          table.insert(by_card[card].files, p)
          for _, n in ipairs(nodes) do table.insert(by_card[card].nodes, n) end
          seen[card] = true
        end
      end
    end
  end
  local cards = {}
  for c in pairs(seen) do cards[#cards + 1] = c end
  table.sort(cards)
  local res = { cards = cards, graphs = by_card, failed = failed, pairs = {}, input = path, rules = rules,
                skipped_output = skipped }
  local ref = cards[1]
  for k = 2, #cards do
    local c = cards[k]
    local cmp = M.compare(by_card[ref].nodes, by_card[c].nodes)
    cmp.a, cmp.b = ref, c
    res.pairs[#res.pairs + 1] = cmp
  end
  return res
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
