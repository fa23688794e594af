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

--- The most worker processes a job may be asked for (-j); the runtime also clamps to what the
-- system allows (open files, processes).
M.MAX_JOBS = 1024

--- Threads for one file's scan (json.scan's threads option) in this process, set by a job while
-- it runs several processes at once so that they do not oversubscribe the CPUs; nil: json.scan
-- takes the CPUs idle when it starts.
M.scan_threads = nil

--- The number of workers for a job given jobs (the caller's option, may be nil), capped at the
-- CPUs idle when the work starts (core.fs.workers): on a busy machine more workers than idle
-- CPUs only make the run slower.
function M.count(jobs)
  return core.fs.workers(jobs or M.default)
end

--- The threads each of `procs` scans running at once may use: the CPUs idle now, shared out,
-- at least 1.
function M.share(procs)
  return math.max(1, core.fs.workers() // math.max(1, procs))
end

return M
