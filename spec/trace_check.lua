--- A checker of Chrome trace-event documents, strict in the ways Perfetto's JSON importer is:
-- on each thread track (pid, tid) the duration slices (X, and B/E pairs) nest perfectly, every B
-- has its E, async slices pair their b and e by (cat, id, name) with the end not before the
-- begin, and counter (C) values are numbers. Returns the list of problems (empty when the trace
-- draws as written) and counts of what it saw.
--
--   local problems, seen = require("trace_check").check(core.json.load("memory_trace.json"))
local M = {}

local function num(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end

-- stable order by ts (file order among equals), as the importer's sorter keeps it
local function by_ts(list)
  for i, e in ipairs(list) do e._k = i end
  table.sort(list, function(a, b)
    if a.ts ~= b.ts then return a.ts < b.ts end
    return a._k < b._k
  end)
end

function M.check(doc)
  local problems, seen = {}, { X = 0, B = 0, E = 0, b = 0, e = 0, C = 0, M = 0, counters = {} }
  local function bad(fmt, ...) problems[#problems + 1] = fmt:format(...) end
  local events = type(doc) == "table" and (doc.traceEvents or doc) or nil
  if type(events) ~= "table" then return { "no traceEvents array" }, seen end
  local threads, asyncs = {}, {}
  for i, e in ipairs(events) do
    local ph = e.ph
    seen[ph] = (seen[ph] or 0) + 1
    if ph ~= "M" and not num(e.ts) then bad("event %d (%s): ts %s is not a number", i, tostring(ph), tostring(e.ts)) end
    if ph ~= "M" and e.pid == nil then bad("event %d (%s): no pid", i, tostring(ph)) end
    if ph == "X" or ph == "B" or ph == "E" then
      if ph == "X" and not (num(e.dur) and e.dur >= 0) then bad("event %d: X without a duration >= 0", i) end
      local key = tostring(e.pid) .. "/" .. tostring(e.tid)
      threads[key] = threads[key] or {}
      table.insert(threads[key], e)
    elseif ph == "b" or ph == "e" then
      if e.id == nil then bad("event %d: async %s without an id", i, ph) end
      asyncs[#asyncs + 1] = e
    elseif ph == "C" then
      if type(e.args) ~= "table" or next(e.args) == nil then bad("event %d: counter without values", i) end
      for k, v in pairs(e.args or {}) do
        if not num(v) then bad("event %d: counter %s %s = %s is not a number", i, tostring(e.name), k, tostring(v)) end
        local track = tostring(e.pid) .. "/" .. tostring(e.name) .. " " .. k
        seen.counters[track] = seen.counters[track] or {}
        table.insert(seen.counters[track], v)
      end
    end
  end
  -- thread tracks: a stack of open slices; a slice must end before (or when) its parent ends
  for key, list in pairs(threads) do
    by_ts(list)
    local stack = {}
    for _, e in ipairs(list) do
      while #stack > 0 and stack[#stack].close and stack[#stack].close <= e.ts do table.remove(stack) end
      if e.ph == "E" then
        local top = stack[#stack]
        if not top or top.close then
          bad("track %s: E at %s without an open B", key, tostring(e.ts))
        else
          table.remove(stack)
        end
      else
        local close = e.ph == "X" and e.ts + e.dur or nil
        local parent = stack[#stack]
        if close and parent and parent.close and close > parent.close then
          bad("track %s: %q [%s, %s] overlaps %q partially", key, tostring(e.name), e.ts, close, tostring(parent.name))
        end
        stack[#stack + 1] = { close = close, name = e.name }
      end
    end
    for _, s in ipairs(stack) do
      if not s.close then bad("track %s: B %q never ends", key, tostring(s.name)) end
    end
  end
  -- async slices
  by_ts(asyncs)
  local open = {}
  for _, e in ipairs(asyncs) do
    local key = tostring(e.cat) .. "\0" .. tostring(e.id) .. "\0" .. tostring(e.name)
    if e.ph == "b" then
      if open[key] then bad("async %s id %s %q begins twice", tostring(e.cat), tostring(e.id), tostring(e.name)) end
      open[key] = e
    else
      if not open[key] then
        bad("async %s id %s %q: e at %s without its b", tostring(e.cat), tostring(e.id), tostring(e.name), tostring(e.ts))
      end
      open[key] = nil
    end
  end
  for _, e in pairs(open) do
    bad("async %s id %s %q begins at %s and never ends", tostring(e.cat), tostring(e.id), tostring(e.name), tostring(e.ts))
  end
  for _, e in ipairs(asyncs) do e._k = nil end
  for _, list in pairs(threads) do for _, e in ipairs(list) do e._k = nil end end
  table.sort(problems)
  return problems, seen
end

return M
