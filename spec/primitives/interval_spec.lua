local core = require "ascope_core"
local interval = core.interval

-- Brute force: a unit grid over [lo, hi); covered[t] for each interval list.
local function grid(starts, ends, lo, hi)
  local g = {}
  for t = lo, hi - 1 do g[t] = false end
  for i = 1, #starts do
    for t = math.max(starts[i], lo), math.min(ends[i], hi) - 1 do g[t] = true end
  end
  return g
end

local function count(g, lo, hi, pred)
  local n = 0
  for t = lo, hi - 1 do if pred(g, t) then n = n + 1 end end
  return n
end

local function random_intervals(n, span)
  local s, e = {}, {}
  for i = 1, n do
    s[i] = math.random(0, span - 1)
    e[i] = s[i] + math.random(0, span // 4)
  end
  return s, e
end

describe("interval sets", function()
  it("union, gaps, intersection and subtraction agree with a brute-force grid", function()
    math.randomseed(7)
    for _ = 1, 50 do
      local s1, e1 = random_intervals(math.random(0, 12), 200)
      local s2, e2 = random_intervals(math.random(0, 12), 200)
      local a, b = interval.union(s1, e1), interval.union(s2, e2)
      local g1, g2 = grid(s1, e1, 0, 260), grid(s2, e2, 0, 260)
      assert.equal(count(g1, 0, 260, function(g, t) return g[t] end), a:total())
      assert.equal(count(g1, 20, 180, function(g, t) return not g[t] end), a:gaps(20, 180):total())
      assert.equal(count(g1, 0, 260, function(_, t) return g1[t] and g2[t] end), a:intersect(b):total())
      assert.equal(count(g1, 0, 260, function(_, t) return g1[t] and not g2[t] end), a:subtract(b):total())
      assert.equal(count(g1, 0, 260, function(_, t) return g1[t] or g2[t] end), a:union(b):total())
      assert.equal(count(g1, 50, 150, function(g, t) return g[t] end), a:clip(50, 150):total())
      -- disjoint and sorted
      for i = 2, #a do
        local _, pe = a:get(i - 1)
        local ns = a:get(i)
        assert.is_true(pe < ns)
      end
    end
  end)

  it("merges overlapping (not nested) intervals on one lane", function()
    local s = interval.union({ 0, 5, 16 }, { 10, 15, 20 })
    assert.equal(2, #s)
    assert.same({ 0, 15 }, { s:get(1) })
    assert.same({ 16, 20 }, { s:get(2) })
    assert.equal(19, s:total())
  end)

  it("gives gap statistics: count, max, percentiles (linear, as numpy)", function()
    local s = interval.union({ 0, 10, 30, 70 }, { 5, 20, 60, 100 })
    local g = s:gaps(0, 100)
    local st = g:stats()
    assert.equal(3, st.count)       -- [5,10) [20,30) [60,70)
    assert.equal(25, st.total)
    assert.equal(10, st.max)
    assert.equal(10, st.p50)
    assert.near(10, st.p95, 1e-9)
    assert.is_true(s:covers(0))
    assert.is_false(s:covers(5))
    assert.is_true(s:covers(99))
  end)

  it("builds from starts and durations, skipping missing values", function()
    local col = core.column.new("integer", { 100, 200 })
    local d = core.column.new("integer", { 50 })
    d:push(nil)
    local s = interval.from_durations(col, d)
    assert.equal(1, #s)
    assert.equal(50, s:total())
    local starts, ends = s:columns()
    assert.equal(100, starts[1])
    assert.equal(150, ends[1])
  end)

  it("an empty selection of rows is an empty set, and every operation on it stays empty", function()
    local column = require("ascope_core").column
    local ts, dur = { 0, 10, 20 }, { 5, 5, 5 }
    for _, none in ipairs({ {}, column.new("integer") }) do
      local e = interval.from_durations(ts, dur, none)
      assert.equal(0, #e)
      assert.equal(0, e:total())
      assert.is_nil(e:bounds())
      assert.equal(0, interval.union(ts, { 5, 15, 25 }, none):total())
      local all = interval.from_durations(ts, dur)
      assert.equal(15, all:total())
      assert.equal(0, e:intersect(all):total())
      assert.equal(0, e:subtract(all):total())
      assert.equal(0, e:clip(0, 30):total())
      assert.equal(15, e:union(all):total())
      assert.equal(30, e:gaps(0, 30):total())
      assert.equal(15, all:subtract(e):total())
    end
  end)

  it("built with a window, it is the clip of the whole set, as a grid sees it", function()
    math.randomseed(31)
    for _ = 1, 60 do
      local s, e = random_intervals(math.random(0, 30), 200)
      local d, rows = {}, {}
      for i = 1, #s do
        d[i] = e[i] - s[i]
        if math.random(1, 3) > 1 then rows[#rows + 1] = i end
      end
      local lo = math.random(-20, 220)
      local hi = lo + math.random(-10, 120)
      local whole = interval.from_durations(s, d, rows):clip(lo, hi)
      local built = interval.from_durations(s, d, rows, lo, hi)
      local ws, we = whole:columns()
      local bs, be = built:columns()
      assert.equal(#ws, #bs)
      for k = 1, #ws do assert.same({ ws[k], we[k] }, { bs[k], be[k] }) end
      local ss, ee = {}, {}
      for k, i in ipairs(rows) do ss[k], ee[k] = s[i], e[i] end
      local g = grid(ss, ee, lo, hi)
      assert.equal(count(g, lo, hi, function(gg, t) return gg[t] end), built:total())
    end
    assert.equal(0, #interval.union({ 1, 5 }, { 4, 9 }, nil, 9, 3)) -- an empty window
  end)
end)
