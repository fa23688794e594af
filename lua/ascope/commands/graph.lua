--- `ascope graph`: compare the order of the dispatch/combine nodes in every card's graph.
local graph = require "ascope.graph"
local report = require "ascope.report.graph"
local i18n = require "ascope.i18n"
local errors = require "ascope.errors"
local log = require "ascope.log"
local front = require "ascope.commands.front"
local t = i18n.t

local M = { spec = graph.spec }

--- What is told before the outputs are written: the cards, their nodes, each pair's verdict.
function M.show_before(res, opts)
  if res.skipped_output > 0 then log.line("INFO", t("graph.skipped_output", res.skipped_output, opts.output)) end
  local lines, bad = report.lines(res)
  for _, l in ipairs(lines) do print(l) end
  for _, f in ipairs(res.failed) do log.error("%s", f.reason) end
  print("[INFO] " .. t("graph.pairs_differ", bad, #res.pairs))
end

--- What is printed once they are: where the results are.
function M.show_after(_, opts)
  print(t("graph.results", opts.output .. "/graph_summary.json"))
end

function M.main(opts, words)
  local input = opts.input or words[1]
  if not input then errors.usage(t("cli.needs", "graph", "GRAPH_PATH", "graph")) end
  front.formats(graph, opts) -- a usage error before any reading
  -- a rule file that does not hold is the command line's mistake: run loads it once, before any
  -- reading, and its error is a usage error (exit 2)
  local res, err = graph.run({ input = input, rules = opts.rules, filter = opts.filter, output = opts.output })
  if not res then error(err, 0) end
  return front.finish(M, graph, res, opts, report.data(res))
end

return M
