local core = require "ascope_core"
local match = core.match

local function brute_latest(keys, starts, key, t)
  local best, bt
  for i = 1, #keys do
    if keys[i] == key and starts[i] <= t and (not bt or starts[i] >= bt) then best, bt = i, starts[i] end
  end
  return best
end

local function brute_within(keys, starts, durs, key, t)
  local best, bt
  for i = 1, #keys do
    if keys[i] == key and starts[i] <= t and t <= starts[i] + durs[i] and (not bt or starts[i] >= bt) then
      best, bt = i, starts[i]
    end
  end
  return best
end

describe("match index", function()
  it("finds the latest start <= t and the latest containing start, as brute force does", function()
    math.randomseed(11)
    local names = { "aten::empty", "aten::matmul", "aten::add" }
    for _ = 1, 20 do
      local keys, starts, durs = {}, {}, {}
      for i = 1, math.random(1, 40) do
        keys[i] = names[math.random(1, 3)]
        starts[i] = math.random(0, 1000)
        durs[i] = math.random(0, 200)
      end
      local ix = match.index(keys, starts, durs)
      local qk, qt = {}, {}
      for i = 1, 100 do
        qk[i] = names[math.random(1, 3)]
        qt[i] = math.random(-10, 1300)
      end
      local latest, within = ix:latest(qk, qt), ix:within(qk, qt)
      local both, _, _, changed = ix:within_or_latest(qk, qt)
      local differ = 0
      for i = 1, 100 do
        local l, w = brute_latest(keys, starts, qk[i], qt[i]), brute_within(keys, starts, durs, qk[i], qt[i])
        assert.equal(l, latest[i])
        assert.equal(w, within[i])
        assert.equal(w or l, both[i])
        if w and w ~= l then differ = differ + 1 end
      end
      assert.equal(differ, changed)
    end
  end)

  it("takes string columns from different scans as the same keys", function()
    local k1 = core.column.new("string", { "a", "b", "a" })
    local ix = match.index(k1, { 10, 20, 30 }, { 1, 1, 1 })
    local rows = ix:latest(core.column.new("string", { "a", "b", "c" }), { 35, 25, 99 })
    assert.equal(3, rows[1])
    assert.equal(2, rows[2])
    assert.is_nil(rows[3])
  end)
end)
