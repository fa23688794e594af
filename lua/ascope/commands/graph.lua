--- `ascope graph`: compare the order of the dispatch/combine nodes in every card's graph.
local graph = require "ascope.graph"
local i18n = require "ascope.i18n"
local errors = require "ascope.errors"
local log = require "ascope.log"
local t = i18n.t
local writer = require "ascope.report.writer"
local core = require "ascope_core"

local M = {}

M.spec = {
  name = "graph",
  args = "GRAPH_PATH [-o OUT] [options]",
  summary = "cmd.graph.summary",
  details = "cmd.graph.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.graph.output" },
    { "graph-path", arg = "PATH", alias_of = "input" },
    { "filter", arg = "PATTERN", help = "opt.graph.filter" },
    { "rules", arg = "FILE", help = "opt.graph.rules" },
    { "format", arg = "LIST", default = "json", help = "opt.graph.format" },
  },
  keys = { GRAPH_PATH = "graph-path" },
  outputs = {
    { "graph_summary.json", format = "json", help = "out.graph_summary.json" },
  },
  examples = { "ascope graph graphs/ -o out", "ascope graph GRAPH_PATH=graphs --filter 'MoeDistribute|AllToAll'" },
}

local function array(list) return setmetatable(list or {}, { __jsontype = "array" }) end

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
  return { input = res.input, cards = cards, pairs = pairs_, failed = failed }
end

function M.main(opts, words)
  local input = opts.input or words[1]
  if not input then errors.usage(t("cli.needs", "graph", "GRAPH_PATH", "graph")) end
  for f in (opts.format or "json"):gmatch("[^,%s]+") do
    if f ~= "json" then errors.usage(t("cli.unknown_format", f, "json")) end
  end
  -- a rule file that does not hold is the command line's mistake (exit 2), told once
  local rules_ok, rules_err = graph.rules(opts.rules)
  if not rules_ok then errors.usage("%s", rules_err) end
  local res, err = graph.run(input, { rules = opts.rules, filter = opts.filter, output = opts.output })
  if not res then error(err, 0) end
  if #res.cards == 0 and #res.failed == 0 then error(t("graph.no_files", input), 0) end
  if res.skipped_output > 0 then log.line("INFO", t("graph.skipped_output", res.skipped_output, opts.output)) end
  print("[INFO] " .. t("graph.files", #res.cards, table.concat(res.cards, ", ")))
  for _, c in ipairs(res.cards) do
    print("[INFO] " .. t("graph.card_nodes", c, #res.graphs[c].nodes, table.concat(res.graphs[c].files, ", ")))
  end
  local bad = 0
  for _, p in ipairs(res.pairs) do
    if p.verdict == "identical" then
      print("[INFO] " .. t("graph.identical", p.a, p.b))
    elseif p.verdict == "order" then
      bad = bad + 1
      print("[ERROR] " .. t("graph.order_at", p.a, p.b, p.first_divergence, tostring(p.at[1]), tostring(p.at[2])))
    else
      bad = bad + 1
      local list = {}
      for n, c in pairs(p.counts) do list[#list + 1] = ("%s %d vs %d"):format(n, c[1], c[2]) end
      table.sort(list)
      print("[ERROR] " .. t("graph.counts_differ", p.a, p.b, table.concat(list, "; ")))
    end
  end
  for _, f in ipairs(res.failed) do log.error("%s", f.reason) end
  print("[INFO] " .. t("graph.pairs_differ", bad, #res.pairs))
  local w, werr = writer.open(opts.output .. "/graph_summary.json")
  if not w then error(werr, 0) end
  w:write(core.json.encode(M.data(res), { indent = 2 }), "\n")
  local ok, cerr = w:close()
  if not ok then error(cerr, 0) end
  print(t("graph.results", opts.output .. "/graph_summary.json"))
  return #res.failed > 0 and 1 or 0, graph.anomalies(res), res, M.data(res)
end

return M
