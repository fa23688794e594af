--- `ascope merge PART... -o OUT`: the partial results of `--shard K/N` runs -> the single run's
-- outputs; and run(), the driver every shardable command ends in (a single run or one shard).
local shard = require "ascope.shard"
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"
local log = require "ascope.log"
local t = i18n.t

local M = {}

-- the commands whose runs can be sharded, and their front ends
M.COMMANDS = {
  memory = "ascope.commands.memory",
  moe = "ascope.commands.moe",
  opjitter = "ascope.commands.opjitter",
  timeline = "ascope.commands.timeline",
}

M.spec = {
  name = "merge",
  args = "PART... [-o OUT]",
  summary = "cmd.merge.summary",
  details = "cmd.merge.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.merge.output" },
    { "jobs", "j", arg = "N", type = "int", min = 1, help = "opt.merge.jobs" },
  },
  examples = {
    "ascope merge part-1 part-2 part-3 -o out",
    "ascope merge parts/* -o out",
  },
}

-- A shard's part in opts.output, and what it holds on stdout. Returns the exit code: 0 once the
-- part is written (a rank that could not be read is part of the result, reported by the merge
-- as the single run reports it).
local function write_part(opts, ctx, info, plan, part, picks, described, outcomes)
  info.options = shard.options(opts, ctx)
  local ok, err = shard.save(opts.output, info, plan, part, picks, described, outcomes)
  if not ok then error(err, 0) end
  local bytes, failed = 0, 0
  for _, i in ipairs(picks) do
    bytes = bytes + described[i].bytes
    if outcomes[i].error then failed = failed + 1 end
  end
  local units = t(plan.unit_name or "shard.units.rank")
  print(t("shard.written", part.k, part.n, #picks, #described, units, log.human(bytes), opts.output))
  if failed > 0 then log.warn("%s", t("shard.failed_units", failed, units)) end
  return 0
end

--- Run a shardable command once its plan is made: every unit then front.finish(result, opts)
-- (the single run), or with --shard K/N only the shard's units, saved as a part. front is the
-- command's module: {name, recipe = {plan, work, assemble, rules[, compute]}, finish}.
function M.run(front, plan, opts, ctx)
  local part = opts.shard and shard.parse(opts.shard)
  local recipe = front.recipe
  local picks, described = shard.select(plan, part)
  local outcomes = recipe.compute and recipe.compute(plan, picks) or shard.compute(recipe, plan, picks, opts.jobs)
  if part then
    return write_part(opts, ctx, { command = front.spec.name, input = plan.context.input }, plan, part, picks,
      described, outcomes)
  end
  return front.finish(recipe.assemble(plan.context, outcomes, plan.rules), opts)
end

function M.main(opts, words)
  if #words == 0 then errors.usage(t("merge.needs_parts")) end
  local loaded, err = shard.load(words)
  if not loaded then error(err, 0) end
  local front = M.COMMANDS[loaded.command]
  if not front then error(t("shard.bad_manifest", words[1], t("merge.command", tostring(loaded.command))), 0) end
  -- the parts' options, as the single run would have parsed them; where and how fast from here
  local run_opts = {}
  for k, v in pairs(loaded.options) do run_opts[k] = v end
  i18n.set(run_opts.lang)
  if run_opts.rules_dir then require("ascope.rules").set_dir(run_opts.rules_dir) end
  run_opts.lang, run_opts.rules_dir = nil, nil
  run_opts.output, run_opts.jobs = opts.output, opts.jobs
  log.stage("%s", t("merge.merging", #words, loaded.command, loaded.input))
  local command = require(front)
  local rules, rerr = command.recipe.rules(run_opts.rules)
  if not rules then error(rerr, 0) end
  return command.finish(command.recipe.assemble(loaded.context, loaded.outcomes, rules), run_opts)
end

return M
