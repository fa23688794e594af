--- trace_view.json readers (Chrome trace format as the Ascend PyTorch profiler writes it).
local json = require("ascope_core").json

local M = {}

--- The cpu_op events that carry a Python call stack, as columns:
--   {n, name, ts (ns), dur (ns), stack, cut}
-- or nil, message (file, byte offset, line and column of a parse error). With partial, a file
-- that breaks off still gives the events read before the break, and cut holds the message.
-- threads: json.scan's (default: ascope.workers.scan_threads).
function M.call_stacks(path, progress, partial, threads)
  local r, err = json.scan(path, {
    where = { cat = "cpu_op", ["args.Call stack"] = true },
    fields = { name = "string", ts = "us", dur = "us", ["args.Call stack"] = "string" },
    meta = false,
    partial = partial,
    progress = progress,
    threads = threads or require("ascope.workers").scan_threads,
  })
  if not r then return nil, err end
  local c = r.columns
  return { n = r.n, name = c.name, ts = c.ts, dur = c.dur, stack = c["args.Call stack"],
           warning = r.warning, events = r.events, bytes = r.bytes, cut = r.partial and err or nil }
end

--- First frame of a call stack (frames are separated by ";\r\n", sometimes ";\n").
function M.top_frame(stack)
  if stack == nil or stack == "" then return "" end
  local i = stack:find(";\r\n", 1, true) or stack:find(";\n", 1, true)
  local top = i and stack:sub(1, i - 1) or stack
  return (top:gsub("^%s+", ""):gsub("%s+$", ""))
end

--- Frames of a call stack, first (innermost) to last.
function M.frames(stack)
  local out = {}
  if stack == nil or stack == "" then return out end
  for f in (stack:gsub(";\r\n", "\0"):gsub(";\n", "\0") .. "\0"):gmatch("([^%z]*)%z") do
    f = f:gsub("^%s+", ""):gsub("%s+$", "")
    if f ~= "" then out[#out + 1] = f end
  end
  return out
end

return M
