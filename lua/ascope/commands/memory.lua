--- `ascope memory`: front end of the memory attribution job (ascope.memory): the arguments,
-- the plan (or a shard of it), the warnings, the outputs, the summary and the exit code.
local memory = require "ascope.memory"
local report = require "ascope.report.memory"
local recipe = require "ascope.recipe"
local errors = require "ascope.errors"
local fmt = require "ascope.fmt"
local log = require "ascope.log"
local t = require("ascope.i18n").t
local shard = require "ascope.shard"
local merge_command = require "ascope.commands.merge"

local M = { recipe = memory }

M.spec = memory.spec

function M.main(opts, words, ctx)
  local input = opts.input or words[1]
  if not input then errors.usage(t("cli.needs", "memory", "INPUT", "memory")) end
  if #words > (opts.input and 0 or 1) then errors.usage(t("cli.unexpected_argument", words[opts.input and 1 or 2])) end
  local _, ferr = recipe.formats(memory.spec, opts.format)
  if ferr then errors.usage("%s", ferr) end
  require("ascope.report.layout").check("memory", opts.layout)
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local plan, err, kind = memory.plan({
    input = input, match = opts.match, rank_list = opts.rank_list, role = opts.role, jobs = opts.jobs, rules = opts.rules,
  })
  if not plan and kind == "usage" then errors.usage("%s", err) end
  if not plan then error(err, 0) end
  return merge_command.run(M, plan, opts, ctx)
end

--- Write the outputs of a result and print its summary; returns the exit code.
function M.finish(result, opts)
  for _, d in ipairs(result.duplicates) do log.warn("%s", d) end
  for _, u in ipairs(result.unprofiled) do log.warn("%s", u) end
  for _, r in ipairs(result.ranks) do
    for _, w in ipairs(r.warnings) do log.warn("%s", w) end
    local s = r.summary
    -- only worth saying when the other mode would change a row
    if s.changed_by_fallback > 0 and s.match_mode == "latest" then
      log.warn("%s", t("memory.fallback", r.rank, s.suspect_latest_matches, s.latest_matches, s.changed_by_fallback))
    end
  end
  local wok, written = memory.write(result, opts.output, { formats = opts.format, layout = opts.layout, jobs = opts.jobs })
  if not wok then error(written, 0) end

  -- the short summary on stdout
  local total = 0
  for _, r in ipairs(result.ranks) do
    total = total + r.n
    local s = r.summary
    local peaks = {}
    for _, c in ipairs(s.components) do
      if c.peak then peaks[#peaks + 1] = t("memory.peak_item", c.component, c.peak.allocated_mb, fmt.ms(c.peak.time_ns)) end
    end
    print(t("memory.rank_line", r.rank, r.role, s.events, s.allocations, fmt.pct(s.match_rate), s.match_mode,
      #peaks > 0 and t("memory.peak_list", table.concat(peaks, ", ")) or ""))
  end
  print(t("memory.summary", #result.ranks, total, opts.output))
  print(t("memory.outputs", table.concat(written, ", ")))
  -- every anomaly is said on stderr; the output checks are the findings of --fail-on and --json
  -- (an unread or partial rank already makes the exit code 1)
  local failed, partial, found, partial_ranks = false, 0, {}, {}
  for _, a in ipairs(memory.anomalies(result)) do
    if a.analysis == "memory check" then found[#found + 1] = a end
    if a.analysis == "memory partial" and not partial_ranks[a.rank] then
      partial_ranks[a.rank] = true
      partial = partial + 1
    end
    if tostring(a.severity):upper() == "ERROR" then
      log.error("%s", a.message)
      failed = true
    else
      log.warn("%s", a.message)
    end
  end
  if partial > 0 then log.error("%s", t("memory.partial_ranks", partial)) end
  local unread = 0 -- a rank asked for and absent was not read: its own message says so
  for _, f in ipairs(result.failed) do unread = unread + (f.unmatched and 0 or 1) end
  if unread > 0 then log.error("%s", t("memory.failed_ranks", unread)) end
  return (failed or #result.unreadable > 0) and 1 or 0, found, result, report.summary_data(result)
end

return M
