-- Embedding ascope in other Lua tooling with a stock lua5.4 (no ascope executable):
--   make
--   LUA_CPATH='build/?.so;;' LUA_PATH='lua/?.lua;lua/?/init.lua;;' lua5.4 examples/embed.lua \
--     examples/data/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json
-- Prints the busy time of every device stream lane of a trace and its longest idle gap.
local ascope = require "ascope"

local path = assert(arg[1], "usage: lua5.4 examples/embed.lua trace_view.json")
local r = assert(ascope.json.scan(path, {
  where = { ph = "X" },
  fields = { pid = "string", tid = "string", ts = "us", dur = "us" },
}))

-- group rows by lane (pid, tid) on the device process
local lanes = {}
for i = 1, r.n do
  local pid = r.columns.pid[i]
  if r.meta.processes[pid] == "Ascend Hardware" then
    local key = pid .. "/" .. r.columns.tid[i]
    local lane = lanes[key]
    if not lane then
      lane = { s = {}, e = {}, name = (r.meta.threads[pid] or {})[r.columns.tid[i]] or key }
      lanes[key] = lane
    end
    local ts, dur = r.columns.ts[i], r.columns.dur[i]
    if ts and dur then
      lane.s[#lane.s + 1] = ts
      lane.e[#lane.e + 1] = ts + dur
    end
  end
end

local names = {}
for k in pairs(lanes) do names[#names + 1] = k end
table.sort(names)
for _, k in ipairs(names) do
  local lane = lanes[k]
  local busy = ascope.interval.union(lane.s, lane.e)
  local lo, hi = busy:bounds()
  local gaps = busy:gaps(lo, hi):stats()
  print(("%-12s %6d tasks  busy %9.3f ms of %9.3f ms  max gap %8.3f ms"):format(lane.name, #lane.s,
    busy:total() / 1e6, (hi - lo) / 1e6, gaps.max / 1e6))
end
