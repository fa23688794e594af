--- `ascope moe`: MoE dispatch/combine hang diagnosis from window dumps.
local moe = require "ascope.moe"
local report = require "ascope.report.moe"
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"
local shard = require "ascope.shard"
local merge_command = require "ascope.commands.merge"
local front = require "ascope.commands.front"

local M = {}

M.spec = moe.spec


-- the steps as they run, on stderr; the findings are printed once, in the recap at the end
local step_log = moe.step_log

-- what a sharded run computes per card and across cards (see ascope.shard)
M.recipe = {
  plan = moe.plan, work = moe.work, rules = moe.rules,
  assemble = function(context, outcomes, rules) return moe.assemble(context, outcomes, rules, step_log) end,
}

function M.main(opts, words, ctx)
  if #words > 0 then errors.usage(i18n.t("cli.unexpected_parameter", words[1])) end
  if not opts.target_dir then errors.usage(i18n.t("cli.needs", "moe", "TARGET_DIR=...", "moe")) end
  if not opts.soc_version then errors.usage(i18n.t("cli.needs", "moe", "SOC_VERSION=910_93|950|910B", "moe")) end
  front.formats(moe, opts) -- a usage error before any reading
  -- a rule file that does not hold is the command line's mistake: plan and merge load it once,
  -- before any reading, and their error is a usage error (exit 2), told once (not once per card)
  local params = {
    target_dir = opts.target_dir, soc_version = opts.soc_version, rules = opts.rules,
    share_expert_card_count = opts.share_expert_card_count, sp_moe_num = opts.sp_moe_num,
    tp_worldsize = opts.tp_worldsize, share_expert_num = opts.share_expert_num, k = opts.k, log = step_log,
  }
  if opts.start_a2_cluster == "1" then
    -- the machines' summaries are already the per-card work: nothing left to shard
    if opts.shard then errors.usage("%s", i18n.t("moe.shard_a2")) end
    local res, err = moe.merge(params)
    if not res then error(err, 0) end
    return M.finish(res, opts)
  end
  if opts.shard then shard.parse(opts.shard) end -- a usage error before any reading
  local plan, err = moe.plan(params)
  if not plan then error(err, 0) end
  if #plan.units == 0 then error(i18n.t("moe.no_cards", opts.target_dir), 0) end
  return merge_command.run(M, plan, opts, ctx)
end

--- What is printed before the outputs are written (the machines merged, where the archive goes).
function M.show_before(res, opts)
  for _, l in ipairs(report.head_lines(res, opts.output)) do print(l) end
end

--- What is printed once they are: the counts, and unless composed (diagnose, which lists every
-- analysis' findings and the verdict once) the findings and the verdict.
function M.show_after(res, _, composed)
  for _, l in ipairs(report.summary_lines(res, not composed)) do print(l) end
end


--- Write the outputs of a result and print its summary; returns the exit code, the findings,
-- the result and its summary data.
function M.finish(res, opts)
  if #res.cards == 0 and #res.failed == 0 then error(i18n.t("moe.no_cards", opts.target_dir), 0) end
  moe.unreadable(res)
  return front.finish(M, moe, res, opts, report.summary_data(res))
end

return M
