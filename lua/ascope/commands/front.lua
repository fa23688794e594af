--- The end every field command (moe, opjitter, plog, graph) shares, and that diagnose runs for
-- each analysis it composes: what the command prints before its outputs are written, the job's
-- write into OUT, what it prints after. A command module gives show_before(res, opts),
-- show_after(res, opts, composed).
local errors = require "ascope.errors"
local recipe = require "ascope.recipe"

local M = {}

--- The formats opts.format asks of job (its spec's default when not given), as the list write
-- takes; one the job does not write is a usage error, raised before any reading.
function M.formats(job, opts)
  local list, err = recipe.formats(job.spec, opts.format)
  if not list then errors.usage("%s", err) end
  return list
end

--- Print, write, print; a write that fails raises its message.
function M.present(command, job, res, opts, composed)
  command.show_before(res, opts)
  local ok, err = job.write(res, opts.output, { formats = M.formats(job, opts), encoding = opts.encoding })
  if not ok then error(err, 0) end
  command.show_after(res, opts, composed)
end

--- present, then what a command's main returns: the exit code (1 when an input could not be
-- read), the findings, the result and its summary data.
function M.finish(command, job, res, opts, data)
  M.present(command, job, res, opts)
  return #res.unreadable > 0 and 1 or 0, job.anomalies(res), res, data
end

return M
