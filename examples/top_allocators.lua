-- A custom analysis for `ascope run`: the call sites that allocated the most memory on each
-- rank, and the single largest allocation, straight from the memory API.
--   ascope run examples/top_allocators.lua examples/data/msinsight_pytorch_text_level0 [N]
local ascope = require "ascope"

local input, n = arg[1], tonumber(arg[2] or "3")
if not input then
  io.stderr:write("usage: ascope run examples/top_allocators.lua PROFILING_DIR [N]\n")
  return 2
end

local result = assert(ascope.memory.parse(input, { jobs = 2 }))
for _, rank in ipairs(result.ranks) do
  print(("rank %d (%s): %d events"):format(rank.rank, rank.role, rank.n))
  for i, site in ipairs(rank.summary.top_call_sites.sites) do
    if i > n then break end
    print(("  %8.1f MB  %5d x  %s"):format(site.size_kb / 1024, site.count, site.call_site))
  end
  -- columns are C arrays: find the largest allocation without copying them into Lua
  local best, at = 0, nil
  for i = 1, #rank.size_kb do
    local s = rank.size_kb[i]
    if s and s > best then best, at = s, i end
  end
  if at then
    print(("  largest: %.1f MB by %s at %s ms"):format(best / 1024, rank.name[at],
      require("ascope.fmt").ms(rank.start_ns[at])))
  end
end
for _, f in ipairs(result.failed) do print("failed:", f.role, f.rank, f.reason) end
return #result.failed > 0 and 1 or 0
