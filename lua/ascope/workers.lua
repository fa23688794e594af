--- How many worker processes a job forks. The jobs run per-rank (per-card, per-file) work in
-- worker processes with ascope_core.par, which uses fork(2): each worker is a copy of the
-- calling process. Inside another program that holds threads, sockets or a GUI, forking may be
-- unwelcome, so the library forks only when asked: the default is 1 (all work in the calling
-- process) unless the caller passes `jobs = N` to a job, or sets
--   require("ascope.workers").default = N      -- nil: one worker per CPU
-- The ascope command line sets nil, so -j defaults to the CPUs there.
-- @module ascope.workers
local core = require "ascope_core"

local M = { default = 1 }

--- The most workers a job's -j/--jobs accepts.
M.MAX_JOBS = 1024

--- The number of workers for a job given jobs (the caller's option, may be nil), capped at the
-- CPUs idle when the work starts (core.fs.workers): on a busy machine more workers than idle
-- CPUs only make the run slower.
function M.count(jobs)
  return core.fs.workers(jobs or M.default)
end

return M
