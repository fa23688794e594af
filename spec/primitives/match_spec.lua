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

-- an integer column from a list where false stands for a missing value
local function icol(list)
  local c = core.column.new("integer")
  for _, v in ipairs(list) do c:push(v or nil) end
  return c
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
      local latest, l_matched, l_ended = ix:latest(qk, qt)
      local within = ix:within(qk, qt)
      local both, _, _, changed, latest2, l_matched2, l_ended2 = ix:within_or_latest(qk, qt)
      -- the same pass gives latest's own three results
      assert.same({ l_matched, l_ended }, { l_matched2, l_ended2 })
      for i = 1, 100 do assert.equal(latest[i], latest2[i]) end
      local differ, matched, ended = 0, 0, 0
      for i = 1, 100 do
        local l, w = brute_latest(keys, starts, qk[i], qt[i]), brute_within(keys, starts, durs, qk[i], qt[i])
        assert.equal(l, latest[i])
        assert.equal(w, within[i])
        assert.equal(w or l, both[i])
        if w and w ~= l then differ = differ + 1 end
        if l then -- the operator latest gives had ended before t: its own start + dur, not the query's
          matched = matched + 1
          if starts[l] + durs[l] < qt[i] then ended = ended + 1 end
        end
      end
      assert.equal(differ, changed)
      assert.same({ matched, ended }, { l_matched, l_ended })
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

  it("match.within answers what the index's within answers, without the index", function()
    math.randomseed(23)
    -- keys few and dense (a table by key), or far apart (binary searches); slices in any order,
    -- or in start order with a few out of it (a trace's lanes)
    for round = 1, 120 do
      local keys, starts, durs = {}, {}, {}
      local n = math.random(0, 60)
      local sparse, sorted = round % 3 == 0, round % 2 == 0
      for i = 1, n do
        keys[i] = math.random(1, 4) * (sparse and 1000000007 or 1)
        -- few distinct starts so that ties and nesting are common; some times are missing
        starts[i] = math.random(1, 12) > 1 and math.random(0, 30) * 10
        durs[i] = math.random(1, 10) > 1 and math.random(0, 8) * 10
      end
      if sorted then
        local known = {}
        for i = 1, n do if starts[i] then known[#known + 1] = starts[i] end end
        table.sort(known)
        local k = 0
        for i = 1, n do
          if starts[i] then
            k = k + 1
            starts[i] = math.random(1, 8) > 1 and known[k] or starts[i]
          end
        end
      end
      local kc, sc, dc = icol(keys), icol(starts), icol(durs)
      local qk, qt = {}, {}
      for j = 1, math.random(0, 80) do
        qk[j] = math.random(0, 5) * (sparse and 1000000007 or 1)
        qt[j] = math.random(-2, 400)
      end
      local want, want_n = match.index(kc, sc, dc):within(qk, qt)
      local got, got_n = match.within(kc, sc, dc, qk, qt)
      assert.equal(#qk, #got, "round " .. round)
      assert.equal(want_n, got_n, "round " .. round)
      for j = 1, #qk do
        assert.equal(want[j], got[j], ("round %d query %d"):format(round, j))
        if got[j] then -- the row holds the time, on the query's key
          assert.equal(qk[j], keys[got[j]])
          assert.is_true(starts[got[j]] <= qt[j] and qt[j] <= starts[got[j]] + durs[got[j]])
        end
      end
    end
  end)

  it("match.within: the latest start wins, a tie goes to the later row, a missing time matches nothing", function()
    local keys, starts = icol({ 1, 1, 1, 2, 1 }), icol({ 0, 10, 10, 0, 50 })
    local durs = icol({ 100, 20, 5, 100, false })
    local rows, matched = match.within(keys, starts, durs, { 1, 1, 1, 2, 1, 3, 1 },
      icol({ 12, 25, 31, 100, 55, 5, false }))
    assert.same({ 3, 2, 1, 4, 1 }, { rows[1], rows[2], rows[3], rows[4], rows[5] })
    assert.is_nil(rows[6])
    assert.is_nil(rows[7])
    assert.equal(5, matched)
    assert.has_error(function() match.within(keys, starts, durs, { 1 }, { 1, 2 }) end)
  end)

  it("match.last: the last place of each key, strings or integers; a missing key is never found", function()
    local column = core.column
    local ids = column.new("string")
    for _, v in ipairs({ "7", "9", "7", false, "8", false }) do ids:push(v or nil) end -- false: a start without an id
    local at, found = match.last(ids, column.new("string", { "7", "8", "5", "9" }))
    assert.same({ 3, 5, nil, 2 }, { at[1], at[2], at[3], at[4] })
    assert.equal(3, found)
    local none = column.new("string")
    none:push(nil)
    assert.is_nil(match.last(ids, none)[1]) -- a missing id is not the missing id of a start
    local ints = icol({ 4, 0, 4, false, 0 })
    local got = match.last(ints, icol({ 0, 4, false, 1 }))
    assert.same({ 5, 3 }, { got[1], got[2] })
    assert.is_nil(got[3])
    assert.is_nil(got[4])
    assert.equal(0, #match.last(ints, icol({})))
    assert.has_error(function() match.last(ids, ints) end)
  end)
end)
