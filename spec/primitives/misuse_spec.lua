-- Lua API misuse against the bindings that convert sequences to int64 arrays: a bad argument
-- after a converted one raises, and the converted arrays must go with the error. Under
-- `make valgrind` and `make sanitize` a leaked block fails the run; here the resident size must
-- stay flat over many wrong calls.
local core = require "ascope_core"
local match, interval, column = core.match, core.interval, core.column

local rss_bytes = require("helper").rss_bytes
local N = 20000 -- one converted array is 160 KB

local function seq(n, f)
  local t = {}
  for i = 1, n do t[i] = f(i) end
  return t
end

-- fn(...) must raise an error containing `msg`, `times` times, and leave RSS where it was
local function raises_without_growth(times, msg, fn, ...)
  local args = table.pack(...)
  local function once()
    local ok, err = pcall(fn, table.unpack(args, 1, args.n))
    assert.is_false(ok)
    assert.matches(msg, tostring(err), 1, true)
    collectgarbage() -- what Lua holds goes now, so the heap does not swing with the collector
  end
  for _ = 1, 5 do once() end
  collectgarbage()
  collectgarbage()
  local base = rss_bytes()
  for _ = 1, times do once() end
  collectgarbage()
  collectgarbage()
  local growth = rss_bytes() - base
  -- leaked, `times` calls keep `times` x 160 KB or more (16 MB for 100 calls). AddressSanitizer
  -- and valgrind hold freed memory in quarantine, so there their leak checks tell instead.
  if not os.getenv("ASAN_OPTIONS") and os.getenv("ASCOPE_RUNNER") ~= "valgrind" then
    assert.is_true(growth < 4e6, ("RSS grew by %.1f MB"):format(growth / 1e6))
  end
end

describe("a bad argument after converted arrays", function()
  local ints = seq(N, function(i) return i end)
  local floats = column.new("number")
  for i = 1, N do floats:push(i + 0.5) end
  local words = seq(N, function(i) return "k" .. i % 97 end)
  local bad = seq(N, function(i) return i == N and "x" or i end)

  it("frees match.within's arrays, whichever argument is wrong", function()
    raises_without_growth(100, "element 20000 is not a number", match.within, ints, ints, ints, ints, bad)
    raises_without_growth(100, "element 20000 is not a number", match.within, floats, ints, bad, ints, ints)
    raises_without_growth(100, "bad argument #5", match.within, ints, ints, ints, ints, "no table")
    -- and the right call still answers
    local rows, matched = match.within({ 7 }, { 10 }, { 5 }, { 7, 7 }, { 12, 20 })
    assert.same({ 1, 1 }, { rows[1], matched })
    assert.is_nil(rows[2])
  end)

  it("frees the match index's keys and times", function()
    raises_without_growth(100, "element 20000 is not a number", match.index, words, ints, bad)
    local ix = match.index({ "a", "b" }, { 1, 5 })
    raises_without_growth(100, "element 20000 is not a number", ix.latest, ix, words, bad)
    raises_without_growth(100, "element 20000 is not a number", ix.within_or_latest, ix, words, bad)
    local rows, matched = ix:latest({ "b", "a" }, { 6, 0 })
    assert.same({ 2, 1 }, { rows[1], matched })
  end)

  it("frees interval.union's and interval.from_durations' arrays", function()
    raises_without_growth(100, "element 20000 is not a number", interval.union, ints, bad)
    raises_without_growth(100, "element 20000 is not a number", interval.from_durations, floats, ints, bad)
    raises_without_growth(100, "bad argument #3", interval.union, ints, ints, "no rows")
    assert.equal(3, interval.from_durations({ 1, 2 }, { 1, 2 }):total())
  end)

  it("frees column:take's rows and the writers' row orders", function()
    local c = column.new("integer")
    for i = 1, 3 do c:push(i) end
    raises_without_growth(100, "element 20000 is not a number", c.take, c, bad)
    raises_without_growth(100, "row 4 out of range", c.take, c, seq(N, function(i) return i == N and 4 or 1 end))
    assert.equal(3, c:take({ 3, 1 })[1])
  end)
end)
