--- The graph job: the operator order of every card's compiled graph against the order most
-- cards have.
-- A recipe (see README "Lua API"): spec, run, write, anomalies, rules.
--     local graph = require "ascope.graph"
--     local r = assert(graph.run({ input = "graphs/" }))
--     for _, p in ipairs(r.pairs) do print(p.a, p.b, p.verdict, p.first_divergence) end
--     assert(graph.write(r, "out"))          -- graph_summary.json
-- Reading: ascope.ascend.graph; analysis: ascope.analysis.graph; outputs: ascope.report.graph.
-- @module ascope.graph
local reader = require "ascope.ascend.graph"
local analysis = require "ascope.analysis.graph"
local report = require "ascope.report.graph"
local rules_mod = require "ascope.rules"
local moe_kernels = require "ascope.ascend.moe_kernels"
local recipe = require "ascope.recipe"
local ranks = require "ascope.ranks"
local i18n = require "ascope.i18n"

local M = {}

--- The option spec of the job (the command line, help, the man page and the docs read it).
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

function M.rules(user_file)
  local rules, err = rules_mod.load("graph", user_file) -- checked against its schema (ascope.rule_schemas)
  if rules then rules.filter = moe_kernels.or_default(rules.filter) end
  return rules, err
end

-- the pieces, as the job offered them before the split
M.nodes, M.compare = reader.nodes, analysis.compare

--- Compare the graph files of every card under opts.input with the order most cards have.
-- @tparam table|string opts `input` (the folder of the graph files), `rules` (a user rule file),
-- `filter` (node name patterns, `|` between alternatives), `output` (the run's output folder:
-- files inside it are not read). The form run(path, opts) works too.
-- @tparam[opt] table more the options, in the form run(path, opts)
-- @treturn table `{input, cards, graphs, reference, pairs, missing, failed, unreadable,
-- skipped_output}`; `missing` = the card numbers between the lowest and the highest with no
-- graph file, as ranges {{a, b}, ...};
-- `reference` = `{card, cards, tie}` (see ascope.analysis.graph.reference); each pair has `a`
-- (the reference card), `b`, `verdict` and, when they differ, `first_divergence` or `counts`
-- @treturn[2] nil when the input cannot be used at all (no such path, no graph file, bad rules)
-- @treturn[2] string why
function M.run(opts, more)
  opts = recipe.options(M.spec, opts, more)
  local path = opts.input
  if not path then return nil, i18n.t("graph.no_input") end
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local files, skipped, unread = reader.files(path, rules, opts.output)
  if not files then return nil, skipped end
  local by_card, failed, seen = {}, {}, {}
  -- a folder that could not be read may hold a card's graph: the run fails, the others are compared
  for _, why in ipairs(unread) do failed[#failed + 1] = { path = path, reason = why } end
  for _, f in ipairs(files) do
    local p = f.path
    local card = reader.card_of(p, rules)
    if not card then
      failed[#failed + 1] = { path = p, reason = i18n.t("graph.no_card", p) }
    else
      local nodes, err = reader.nodes(p, f.kind, opts.filter or rules.filter)
      if not nodes then
        failed[#failed + 1] = { path = p, card = card, reason = err }
      else
        -- several files of one card are read in name order, one after the other
        if by_card[card] then
          table.move(nodes, 1, #nodes, #by_card[card].nodes + 1, by_card[card].nodes)
          table.insert(by_card[card].files, p)
        else -- a card's first file: its nodes as they are, not a copy
          by_card[card] = { files = { p }, nodes = nodes }
        end
        seen[card] = true
      end
    end
  end
  local cards = {}
  for c in pairs(seen) do cards[#cards + 1] = c end
  table.sort(cards)
  if #cards == 0 and #failed == 0 then return nil, i18n.t("graph.no_files", path) end
  local unreadable = recipe.unreadable(failed)
  local ref = analysis.reference(cards, by_card)
  -- a card number between two others with no graph file at all (an unreadable one is named
  -- already): its order is not compared, which the comparison alone would not show
  local numbered = {}
  for _, c in ipairs(cards) do numbered[c] = true end
  for _, f in ipairs(failed) do if f.card then numbered[f.card] = true end end
  local all = {}
  for c in pairs(numbered) do all[#all + 1] = c end
  table.sort(all)
  return { cards = cards, graphs = by_card, failed = failed, unreadable = unreadable, input = path, rules = rules,
           skipped_output = skipped, reference = ref, pairs = analysis.pairs(cards, by_card, ref),
           missing = ranks.gaps(all) }
end

local write = recipe.writer(M.spec, report.write)

--- Write graph_summary.json into outdir.
-- @tparam table res a result of `run`
-- @tparam string outdir the output folder (made when missing)
-- @tparam[opt] table wopts `formats` (a list: "json", the default)
-- @return true, or nil and a message
function M.write(res, outdir, wopts) return write(res, outdir, wopts) end

--- Findings: {severity, card, cards, analysis, message}, one ERROR per card whose nodes differ
-- from the reference card's (in order or in number), a WARNING when no order has a majority.
M.anomalies = analysis.anomalies

return M
