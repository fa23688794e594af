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

  it("gives the bounds of a clip without building it", function()
    math.randomseed(37)
    for _ = 1, 200 do
      local s, e = random_intervals(math.random(0, 20), 200)
      local set = interval.union(s, e)
      local lo = math.random(-20, 220)
      local hi = lo + math.random(-10, 120)
      assert.same({ set:clip(lo, hi):bounds() }, { set:bounds(lo, hi) })
    end
    local set = interval.union({ 0, 30 }, { 20, 50 })
    assert.same({ 0, 50 }, { set:bounds() })
    assert.same({ 5, 31 }, { set:bounds(5, 31) })
    assert.is_nil(set:bounds(20, 30)) -- the gap between, ends touching
  end)
end)

-- The longest path as the timeline first computed it, in Lua, over plain tables: the oracle
-- for interval.longest_path on random steps.
local function longest_reference(ts, dur, lane, rows, edges, lo, hi)
  local nodes, seen = {}, {}
  local function add(r)
    nodes[#nodes + 1] = r
    seen[r] = true
  end
  for _, r in ipairs(rows) do add(r) end
  local preds = {}
  for _, e in ipairs(edges) do
    local p, c = e[1], e[2]
    if seen[c] and dur[p] then
      if not seen[p] then add(p) end
      preds[c] = preds[c] or {}
      table.insert(preds[c], p)
    end
  end
  if #nodes == 0 then return nil end
  table.sort(nodes, function(a, b) -- (start, end, row): of two that start together, the one over first
    if ts[a] ~= ts[b] then return ts[a] < ts[b] end
    if dur[a] ~= dur[b] then return dur[a] < dur[b] end
    return a < b
  end)
  local function s_of(r) return math.min(math.max(ts[r], lo), hi) end
  local function e_of(r) return math.min(math.max(ts[r] + dur[r], lo), hi) end
  local last_on_lane, dist, from, gain, reach = {}, {}, {}, {}, {}
  local best, best_node = -1, nil
  for _, r in ipairs(nodes) do
    local s0, e0 = s_of(r), e_of(r)
    local d0, f0, g0, r0 = e0 - s0, nil, e0 - s0, e0
    local function consider(p)
      if not dist[p] then return end
      local add_ = math.max(e0 - math.max(s0, reach[p]), 0)
      if dist[p] + add_ > d0 then d0, f0, g0, r0 = dist[p] + add_, p, add_, math.max(e0, reach[p]) end
    end
    if last_on_lane[lane[r]] then consider(last_on_lane[lane[r]]) end
    for _, p in ipairs(preds[r] or {}) do consider(p) end
    dist[r], from[r], gain[r], reach[r] = d0, f0, g0, r0
    last_on_lane[lane[r]] = r
    if d0 > best then best, best_node = d0, r end
  end
  local path, gains = {}, {}
  local r = best_node
  while r do
    path[#path + 1], gains[#gains + 1] = r, gain[r]
    r = from[r]
  end
  return best, path, #nodes, gains
end

describe("interval.longest_path", function()
  it("walks random steps as the reference walk does: length, path, gains and node count", function()
    math.randomseed(17)
    for round = 1, 300 do
      local n = math.random(1, 60)
      local ts, dur, lane = {}, {}, {}
      for i = 1, n do
        ts[i] = math.random(0, 40) -- coarse: many equal starts, so the ties are exercised
        dur[i] = math.random(0, 12)
        lane[i] = math.random(1, 4)
      end
      local rows = {}
      for i = 1, n do
        if math.random() < 0.6 then rows[#rows + 1] = i end
      end
      local edges, producers, consumers = {}, {}, {}
      for k = 1, math.random(0, n) do -- flows from anywhere, backwards in time too, repeated
        local p, c = math.random(1, n), math.random(1, n)
        if p ~= c then
          edges[#edges + 1] = { p, c }
          producers[#producers + 1], consumers[#consumers + 1] = p, c
        end
        if k % 7 == 0 and #edges > 0 then
          edges[#edges + 1] = edges[#edges]
          producers[#producers + 1], consumers[#consumers + 1] = producers[#producers], consumers[#consumers]
        end
      end
      local lo = math.random(-5, 20)
      local hi = lo + math.random(0, 40)
      local want, wpath, wnodes, wgains = longest_reference(ts, dur, lane, rows, edges, lo, hi)
      local got, path, nodes, gains = interval.longest_path(ts, dur, lane, rows, producers, consumers, lo, hi)
      assert.equal(want, got, "round " .. round)
      if want then
        assert.same(wpath, path, "round " .. round)
        assert.same(wgains, gains)
        assert.equal(wnodes, nodes)
        assert.is_true(got <= hi - lo)
      end
    end
  end)

  it("takes columns, skips untimed tasks and refuses rows out of range", function()
    local column = core.column
    local NULL = math.mininteger -- an integer column's missing value
    local ts = column.new("integer", { 0, 5, 100, 7 })
    local dur = column.new("integer", { 10, 10, 5, 1 })
    local lane = column.new("integer", { 1, 2, 1, 2 })
    -- rows 1 and 2 overlap on two lanes; the flow from row 1 into row 2 chains them: 0..15
    local len, path, nodes, gains = interval.longest_path(ts, dur, lane, { 1, 2 }, { 1 }, { 2 }, 0, 50)
    assert.equal(15, len)
    assert.same({ 2, 1 }, path)
    assert.same({ 5, 10 }, gains)
    assert.equal(2, nodes)
    -- a producer outside the rows joins the graph; one without a duration does not
    local nostart = column.new("integer", { 0, 5, 100, NULL })
    local _, _, n2 = interval.longest_path(ts, dur, lane, { 2 }, { 1, 4 }, { 2, 2 }, 0, 50)
    assert.equal(3, n2)
    local _, _, n3 = interval.longest_path(ts, column.new("integer", { 10, 10, 5, NULL }), lane, { 2 }, { 4 }, { 2 }, 0, 50)
    assert.equal(1, n3)
    assert.is_nil((interval.longest_path(nostart, dur, lane, { 4 }, {}, {}, 0, 50)))
    assert.is_nil((interval.longest_path(ts, dur, lane, {}, {}, {}, 0, 50)))
    assert.has_error(function() interval.longest_path(ts, dur, lane, { 5 }, {}, {}, 0, 50) end,
      "interval.longest_path: a row number is out of range")
    assert.has_error(function() interval.longest_path(ts, dur, lane, { 1 }, { 1 }, {}, 0, 50) end,
      "interval.longest_path: 1 producers but 0 consumers")
  end)
end)
