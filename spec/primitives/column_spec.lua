local column = require("ascope_core").column

describe("column:map", function()
  it("gives one result per distinct string, of the results' kind", function()
    local c = column.new("string", { "aten::add", "cann::x", "aten::add" })
    local calls = 0
    local m = c:map(function(s)
      calls = calls + 1
      return #s
    end)
    assert.equal("integer", m:kind())
    assert.same({ 9, 7, 9 }, m:totable())
    assert.equal(2, calls)
  end)

  it("keeps missing rows missing and lets a later row decide the kind", function()
    local c = column.new("string", { "x", "yy", "x" })
    local m = c:map(function(s) return s == "yy" and "long" or nil end)
    assert.equal("string", m:kind())
    assert.same({ nil, "long", nil }, { m[1], m[2], m[3] })
  end)

  it("stays a string column when every value is missing or every result is nil", function()
    local all_missing = column.fill("string", nil, 4):map(function(s) return s end)
    assert.equal("string", all_missing:kind())
    assert.equal(4, #all_missing)
    assert.is_nil(all_missing[4])
    local none = column.new("string", { "a", "b" }):map(function() return nil end)
    assert.equal("string", none:kind())
    assert.equal(2, #none)
    -- a string key column: grouping by it works (every row in the one missing group)
    local groups, total = column.group_sum(none, column.new("number", { 1.5, 2 }))
    assert.equal(3.5, total)
    assert.equal(1, #groups)
    assert.is_nil(groups[1].key)
  end)

  it("calls once per distinct string when the string table is far larger than the column", function()
    local many = {}
    for i = 1, 6000 do many[i] = "filler " .. i end
    local big = column.new("string", many) -- the state's table now holds 6000 more strings
    local c = column.new("string", { "filler 17", "x:1", "filler 17", nil, "x:1", "filler 5999" })
    local calls = 0
    local m = c:map(function(s)
      calls = calls + 1
      return tonumber(s:match("%d+$")) + 0.5
    end)
    assert.equal("number", m:kind())
    assert.same({ 17.5, 1.5, 17.5, nil, 1.5, 5999.5 }, { m[1], m[2], m[3], m[4], m[5], m[6] })
    assert.equal(6, #m)
    assert.equal(3, calls)
    assert.equal(6000, #big)
  end)

  it("refuses results of different kinds and takes a boolean result as no value", function()
    local c = column.new("string", { "a", "b", "c" })
    assert.has_error(function() c:map(function(s) return s == "a" and 1 or 2.5 end) end,
      "map: results of different kinds")
    local m = c:map(function(s) return s == "b" and "B" or s == "c" end)
    assert.equal("string", m:kind())
    assert.same({ nil, "B", nil }, { m[1], m[2], m[3] })
  end)

  it("refuses a function that adds rows to the column it maps", function()
    local many = {}
    for i = 1, 6000 do many[i] = "s" .. i end
    local big = column.new("string", many) -- the state's table far larger than the columns below
    for _, c in ipairs({ column.new("string", { "a", "b" }), column.new("string", { "s1" }) }) do
      assert.has_error(function()
        c:map(function(s)
          c:push("new " .. #c)
          return s
        end)
      end, "map: the function added rows to the column it maps")
    end
    assert.equal(6000, #big)
  end)
end)

describe("column.group_sum and argmax over some rows", function()
  local keys = column.new("string", { "a", "b", "a", "b", "a" })
  local vals = column.new("number", { 1, 10, 3, 20, 5 })
  local rows = column.new("integer", { 1, 3, 4 })

  it("sum only the rows given", function()
    local groups, total, count = column.group_sum(keys, vals, { rows = rows })
    assert.equal(24, total)
    assert.equal(3, count)
    table.sort(groups, function(x, y) return x.key < y.key end)
    assert.same({ { key = "a", sum = 4, count = 2 }, { key = "b", sum = 20, count = 1 } }, groups)
    local _, pos = column.group_sum(nil, vals, { rows = rows, positive = column.new("number", { -1, 1, 1, -1, 1 }) })
    assert.equal(3, pos)
  end)

  it("argmax looks at the rows given, the first of equals in their order", function()
    assert.same({ 4, 20 }, { vals:argmax(rows) })
    assert.same({ 5, 5 }, { vals:argmax(column.new("integer", { 1, 5, 3 })) })
    local ties = column.new("number", { 7, 7, 7 })
    assert.same({ 3, 7 }, { ties:argmax(column.new("integer", { 3, 1 })) })
    -- a row whose `present` value is missing is not looked at: rows 2 and 4 hold the two largest
    local when = column.new("integer")
    for _, v in ipairs({ 10, false, 30, false, 50 }) do when:push(v or nil) end
    assert.same({ 5, 5 }, { vals:argmax(nil, when) })
    assert.same({ 3, 3 }, { vals:argmax(rows, when) })
    assert.is_nil(vals:argmax(column.new("integer", { 4 }), when))
    assert.is_nil(vals:argmax(column.new("integer")))
  end)

  it("argmax takes, of equal values, the row whose `earliest` value is smallest", function()
    local total = column.new("number", { 5, 9, 9, 9, 2 })
    -- nanosecond instants 1 ns apart: as doubles (256 ns apart there) they would be one number
    local base = 1779785665728627910
    assert.equal(base + 1 + 0.0, base + 2 + 0.0)
    local at = column.new("integer")
    for _, v in ipairs({ base, base + 2, base + 1, false, base }) do at:push(v or nil) end
    assert.same({ 3, 9 }, { total:argmax(nil, nil, at) })
    assert.same({ 4, 9 }, { total:argmax(nil, nil, column.new("number", { 1, 2, 3, 0.5, 0 })) })
    assert.same({ 2, 9 }, { total:argmax(column.new("integer", { 4, 2 }), nil, at) }) -- no instant: after any
    assert.same({ 4, 9 }, { total:argmax(column.new("integer", { 4 }), nil, at) })
    assert.same({ 3, 9 }, { total:argmax(nil, at, at) }) -- row 4 has no instant: not present
    assert.has_error(function() total:argmax(nil, nil, column.new("integer", { 1 })) end)
  end)

  it("refuse rows outside the column", function()
    assert.has_error(function() column.group_sum(keys, vals, { rows = column.new("integer", { 6 }) }) end,
      "group_sum: row 6 out of range")
    assert.has_error(function() vals:argmax(column.new("integer", { 0 })) end)
    assert.has_error(function() vals:argmax(column.new("number", { 1 })) end)
  end)
end)

describe("column.group_sum with top", function()
  -- the model: every group from the plain group_sum, sorted by (sum desc, key asc, first seen),
  -- the keyless group ranked by the `none` text
  local function model(keys, vals, n, none)
    local groups = column.group_sum(keys, vals)
    for i, g in ipairs(groups) do g.seen = i end
    table.sort(groups, function(a, b)
      if a.sum ~= b.sum then return a.sum > b.sum end
      local ka, kb = a.key or none, b.key or none
      if ka ~= kb then return ka < kb end
      return a.seen < b.seen
    end)
    local out = {}
    for i = 1, math.min(n, #groups) do out[i] = { key = groups[i].key, sum = groups[i].sum, count = groups[i].count } end
    return out, #groups
  end

  it("keeps the n first groups in rank order, ties by key, the keyless group by its label", function()
    math.randomseed(7)
    local words = {}
    for i = 1, 300 do words[i] = ("k%03d"):format(math.random(1, 120)) end
    for i = 1, 300, 17 do words[i] = nil end -- rows without a key
    local keys = column.new("string")
    for i = 1, 300 do keys:push(words[i]) end
    local vals = column.new("number")
    for _ = 1, 300 do vals:push(math.random(1, 6)) end -- few distinct sums: many ties
    for _, n in ipairs({ 0, 1, 5, 20, 1000 }) do
      for _, none in ipairs({ "(no call stack)", "k050", "" }) do
        local want, ngroups = model(keys, vals, n, none)
        local got, total, count, groups = column.group_sum(keys, vals, { top = n, none = none })
        assert.same(want, got, ("top %d, none %q"):format(n, none))
        assert.equal(ngroups, groups)
        local _, all_total, all_count = column.group_sum(keys, vals)
        assert.same({ all_total, all_count }, { total, count })
      end
    end
  end)

  it("gives the keyless group's sum and count, 0 when there is none", function()
    local keys = column.new("string")
    for _, k in ipairs({ "a", false, "b", false, false }) do keys:push(k or nil) end
    local vals = column.new("number", { 1, 2, 3, 4, 5 })
    local _, _, _, groups, none_sum, none_count = column.group_sum(keys, vals, { top = 1 })
    assert.same({ 3, 11, 3 }, { groups, none_sum, none_count })
    local _, _, _, _, s, c = column.group_sum(column.new("string", { "a" }), column.new("number", { 1 }), { top = 1 })
    assert.same({ 0, 0 }, { s, c })
    assert.equal(math.type(s), "integer")
  end)

  it("cuts long keys to labels on a character boundary, after ranking by the whole key", function()
    local long_a, long_b = ("中"):rep(400) .. "a", ("中"):rep(400) .. "b" -- 1201 bytes, equal for 1200
    local keys = column.new("string", { long_b, long_a, "short" })
    local vals = column.new("number", { 5, 5, 1 })
    local got = column.group_sum(keys, vals, { top = 3, key_max = 1000 })
    local cut = ("中"):rep(333) .. "…" -- 999 bytes: the 334th character would end at byte 1002
    assert.same({ cut, cut, "short" }, { got[1].key, got[2].key, got[3].key })
    assert.equal(1, got[2].count)
    -- long_a ranks first by its whole text: the first of the two is the one of the second row
    local whole = column.group_sum(keys, vals, { top = 1 })
    assert.equal(long_a, whole[1].key)
    assert.has_error(function() column.group_sum(keys, vals, { top = -1 }) end)
    assert.has_error(function() column.group_sum(keys, vals, { top = 1, key_max = -1 }) end)
  end)
end)

describe("column.group leaving results out", function()
  it("gives the same ids, values and rows as the full call, nil for what was left out", function()
    local a = column.new("string", { "x", "y", "x", "z", "y", "x" })
    local b = column.new("integer", { 1, 1, 1, 2, 1, 3 })
    local ids, vals, rows = column.group(a, b)
    local ids2, vals2, rows2 = column.group(a, b, { rows = false })
    local ids3, vals3, rows3 = column.group(a, b, { ids = false })
    assert.same({ 1, 2, 1, 3, 2, 4 }, { ids[1], ids[2], ids[3], ids[4], ids[5], ids[6] })
    assert.same(vals, vals2)
    assert.same(vals, vals3)
    assert.is_nil(rows2)
    assert.is_nil(ids3)
    for i = 1, #a do assert.equal(ids[i], ids2[i]) end
    assert.equal(#vals, #rows3)
    for g = 1, #rows do
      assert.equal(#rows[g], #rows3[g])
      for k = 1, #rows[g] do assert.equal(rows[g][k], rows3[g][k]) end
    end
    assert.same({ 1, 3 }, { rows3[1][1], rows3[1][2] })
    assert.has_error(function() column.group(a, b, "rows") end)
    -- keys = "first": each group's first row in place of its values, which take gives back
    local ids4, first, rows4 = column.group(a, b, { rows = false, keys = "first" })
    assert.same({ 1, 2, 4, 6 }, first:totable())
    assert.is_nil(rows4)
    for i = 1, #a do assert.equal(ids[i], ids4[i]) end
    local fa, fb = a:take(first):totable(), b:take(first):totable()
    for g = 1, #vals do assert.same(vals[g], { fa[g], fb[g] }) end
    local _, first5, rows5 = column.group(a, nil, { keys = "first" })
    assert.same({ 1, 2, 4 }, first5:totable())
    assert.same({ 1, 3, 6 }, rows5[1]:totable())
    assert.has_error(function() column.group(a, b, { keys = "values" }) end)
  end)

  it("leaves out the rows of the groups with a missing value when asked, and only those", function()
    local lane = column.new("integer", { 1, 1, 2, 2, 1, 2, 1 })
    local tag = column.new("string")
    for _, v in ipairs({ "p2p", false, "p2p", "launch", false, false, false }) do tag:push(v or nil) end
    local _, keys, full = column.group(lane, tag)
    local ids, keys2, rows = column.group(lane, tag, { ids = false, missing = false })
    assert.is_nil(ids)
    assert.same(keys, keys2)
    assert.equal(#keys, #rows)
    local kept = 0
    for g, key in ipairs(keys) do
      if key[2] == nil then
        assert.is_false(rows[g])
      else
        assert.same(full[g]:totable(), rows[g]:totable())
        kept = kept + #rows[g]
      end
    end
    assert.equal(3, kept) -- the tagged rows 1, 3, 4
    assert.equal(5, #keys) -- (1, p2p) (1, nil) (2, p2p) (2, launch) (2, nil)
    local _, _, one = column.group(lane, nil, { missing = false }) -- no value missing: all rows
    assert.same({ 4, 3 }, { #one[1], #one[2] })
  end)
end)

describe("col:lookup", function()
  -- an integer column from a list where false stands for a missing value
  local function icol(list)
    local c = column.new("integer")
    for _, v in ipairs(list) do c:push(v or nil) end
    return c
  end

  it("maps every row through the table, nil where the table or the row has nothing", function()
    local keys = icol({ 2, 1, false, 2, 7, 0, -3, 1 })
    local s = keys:lookup({ "a", "b" })
    assert.same({ "b", "a", nil, "b", nil, nil, nil, "a" }, { s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8] })
    assert.equal(8, #s)
    local n = keys:lookup({ [1] = 10, [7] = 70 })
    assert.same({ nil, 10, nil, nil, 70, nil, nil, 10 }, { n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8] })
    local f = keys:lookup({ 0.5, 1.5, [-3] = 2.5 })
    assert.same({ 1.5, 0.5, 2.5 }, { f[1], f[2], f[7] })
    local none = keys:lookup({})
    assert.equal(8, #none)
    for i = 1, 8 do assert.is_nil(none[i]) end
    -- a key beyond the rows' count is still looked up
    assert.equal("far", icol({ 1000 }):lookup({ [1000] = "far" })[1])
  end)

  it("refuses values of another kind than the first one met", function()
    assert.has_error(function() icol({ 1, 2 }):lookup({ 5, "x" }) end)
    assert.has_error(function() icol({ 1, 2 }):lookup({ 5, 1.5 }) end)
  end)
end)

describe("group numbers and rows in 4-byte columns", function()
  local core = require "ascope_core"
  local interval, match, par = core.interval, core.match, core.par
  -- lanes 1 2 1 3 2 1 by (pid, tid); starts and durations of the six rows
  local pid = column.new("string", { "p1", "p1", "p1", "p2", "p1", "p1" })
  local tid = column.new("string", { "a", "b", "a", "a", "b", "a" })
  local ts = column.new("integer", { 0, 5, 10, 20, 30, 40 })
  local dur = column.new("integer", { 4, 10, 5, 1, 2, 3 })
  local lane, keys, rows = column.group(pid, tid)

  it("are integer columns to every reader, with the values of 8-byte ones", function()
    assert.equal("integer", lane:kind())
    assert.same({ 1, 2, 1, 3, 2, 1 }, lane:totable())
    assert.same({ 3, 2, 3, 1 }, { #keys, #rows[2], #rows[1], #rows[3] })
    assert.same({ 1, 3, 6 }, rows[1]:totable())
    assert.same({ 6, 10, 1, 3 }, { lane:stats() })
    assert.same({ 1, 3, 6, 2, 5, 4 }, lane:order():totable())
    assert.same({ "b", "b" }, tid:take(rows[2]):totable())
    assert.same({ 1, 1, 1 }, lane:take(rows[1]):totable())
    assert.same({ 2, 1, 3 }, lane:take(column.new("integer", { 2, 1, 4 })):totable())
    assert.same({ "x", "y", "x", "z", "y", "x" }, lane:lookup({ "x", "y", "z" }):totable())
    -- a row column appended to: only values a row number can have
    local r = rows[3]
    r:push(7)
    assert.same({ 4, 7 }, r:totable())
    assert.has_error(function() r:push(-1) end)
    assert.has_error(function() r:push(1 << 32) end)
  end)

  it("concatenate with each other, and with 8-byte integers into 8-byte ones", function()
    local both = column.concat({ rows[1], rows[2] })
    assert.same({ 1, 3, 6, 2, 5 }, both:totable())
    local mixed = column.concat({ column.new("integer"), rows[1], column.new("integer", { 1 << 40 }) })
    assert.same({ 1, 3, 6, 1 << 40 }, mixed:totable())
    assert.same({ 2, 5 }, column.concat({ column.new("integer"), rows[2] }):totable())
  end)

  it("select the rows of busy sets, lookups, sums and the rows of a window", function()
    local s = interval.from_durations(ts, dur, rows[2])
    assert.same({ 5, 32 }, { s:bounds() })
    assert.equal(12, s:total())
    assert.equal(4, interval.from_durations(ts, dur, rows[1], 2, 12):total()) -- [2,4) and [10,12)
    local held = match.within(lane, ts, dur, { 1, 2, 3 }, { 12, 31, 22 })
    assert.same({ 3, 5 }, { held[1], held[2] })
    assert.is_nil(held[3]) -- row 4 ended at 21
    local _, total, count = column.group_sum(nil, dur, { rows = rows[1] })
    assert.same({ 12, 3 }, { total, count })
    assert.same({ 3, 5 }, { dur:argmax(rows[1]) })
    local w = column.rows_overlapping(ts, dur, 9, 21)
    assert.same({ 2, 3, 4 }, w:totable())
    assert.same({ 5, 10, 20 }, ts:take(w):totable())
    -- starting in [5, 30), of all rows and of a list in its order; no duration: not a slice
    assert.same({ 2, 3, 4 }, column.rows_starting(ts, dur, 5, 30):totable())
    assert.same({ 4, 2 }, column.rows_starting(ts, dur, 5, 30, { 4, 1, 5, 2 }):totable())
    local nodur = column.new("integer", { 4, math.mininteger, 5, 1, 2, 3 })
    assert.same({ 3, 4 }, column.rows_starting(ts, nodur, 5, 30):totable())
    assert.has_error(function() column.rows_starting(ts, dur, 0, 9, { 7 }) end,
      "column.rows_starting: a row number is out of range")
    -- a negative duration that ends before the window is out of it, as rows_overlapping says
    local neg = column.new("integer", { 4, 10, -6, -4, 2, 3 }) -- row 3: 10 - 6 < 5; row 4: 20 - 4 >= 5
    assert.same({ 2, 4 }, column.rows_starting(ts, neg, 5, 30):totable())
    local over = {}
    for _, r in ipairs(column.rows_overlapping(ts, neg, 5, 30):totable()) do over[r] = true end
    assert.is_nil(over[3])
    assert.is_true(over[4])
    -- a string column's ids are not rows
    assert.has_error(function() column.rows_starting(ts, dur, 0, 9, column.new("string", { "x" })) end)
  end)

  it("cross to a worker process and back with their values", function()
    local back = par.decode(par.encode({ lane = lane, rows = rows[1] }))
    assert.same(lane:totable(), back.lane:totable())
    assert.same({ 1, 3, 6 }, back.rows:totable())
  end)
end)

describe("column.group_max", function()
  it("gives each key's largest value, keys in order of first appearance, missing ones left out", function()
    local function col(values, n) -- missing values where the list has holes
      local c = column.new("integer")
      for i = 1, n do c:push(values[i]) end
      return c
    end
    local keys = col({ 7, 3, 7, nil, 3, 9, 7, 5 }, 8)
    local vals = col({ 10, 40, 30, 99, 20, nil, -5, nil }, 8)
    local k, most = column.group_max(keys, vals)
    assert.are.same({ 7, 3 }, k:totable())
    assert.are.same({ 30, 40 }, most:totable())
    -- 9 and 5 have no value, the missing key's value goes nowhere
    local ek, em = column.group_max(column.new("integer"), column.new("integer"))
    assert.are.equal(0, #ek)
    assert.are.equal(0, #em)
  end)

  it("agrees with a table by key on many keys (the hash table grows)", function()
    math.randomseed(5)
    local keys, vals, want, order = {}, {}, {}, {}
    for i = 1, 20000 do
      keys[i] = math.random(1, 5000) * 1000003
      vals[i] = math.random(-1e9, 1e9)
      if want[keys[i]] == nil then order[#order + 1] = keys[i] end
      if want[keys[i]] == nil or vals[i] > want[keys[i]] then want[keys[i]] = vals[i] end
    end
    local k, most = column.group_max(column.new("integer", keys), column.new("integer", vals))
    assert.are.same(order, k:totable())
    for j = 1, #order do assert.are.equal(want[order[j]], most[j]) end
  end)

  it("takes integer columns of one length only", function()
    assert.has_error(function() column.group_max(column.new("integer", { 1 }), column.new("integer", { 1, 2 })) end,
      "column.group_max: columns differ in length")
    assert.has_error(function() column.group_max(column.new("string", { "a" }), column.new("integer", { 1 })) end)
  end)
end)

-- The scratch of a call over a string column is sized by the rows or by the whole string
-- table (a million distinct call stacks). It goes as the call returns or raises: left to the
-- collector, which does not count C memory, the scratch of each call stayed until its next
-- cycle, and a few calls over a big rank added up at a command's peak.
describe("scratch of calls over a large string table", function()
  local rss_bytes = require("helper").rss_bytes
  local N = 300000 -- distinct strings: a call's scratch by id is 2.4-4.8 MB
  local words = {}
  for i = 1, N do words[i] = ("scratch-%d"):format(i) end
  local keys = column.new("string", words)
  local size = column.fill("number", 1, N)

  -- RSS growth over `times` calls of fn with the collector stopped
  local function growth(times, fn)
    fn()
    collectgarbage()
    collectgarbage("stop")
    local base = rss_bytes()
    for _ = 1, times do fn() end
    local grew = rss_bytes() - base
    collectgarbage("restart")
    collectgarbage()
    return grew
  end

  -- AddressSanitizer and valgrind keep freed memory in quarantine: their leak checks tell there
  local measured = not os.getenv("ASAN_OPTIONS") and os.getenv("ASCOPE_RUNNER") ~= "valgrind"

  it("frees column.group_sum's sums and counts on return", function()
    local grew = growth(10, function()
      local top = column.group_sum(keys, size, { top = 3 })
      assert.are.equal(3, #top)
    end)
    -- kept until a collection, ten calls held 48 MB
    if measured then assert.is_true(grew < 12e6, ("RSS grew by %.1f MB"):format(grew / 1e6)) end
  end)

  it("frees col:map's results by id on return and when the function raises", function()
    local grew = growth(10, function()
      local ok, err = pcall(keys.map, keys, function(s)
        if s == words[1] then error("stop here") end -- at once: no result written
        return #s
      end)
      assert.is_false(ok)
      assert.matches("stop here", err)
    end)
    -- kept until a collection, ten calls held 48 MB of 16-byte results by id
    if measured then assert.is_true(grew < 12e6, ("RSS grew by %.1f MB"):format(grew / 1e6)) end
    local lengths = keys:map(function(s) return #s end) -- and a call that ends well answers
    assert.are.equal(#"scratch-1", lengths[1])
    assert.are.equal(#words[N], lengths[N])
  end)
end)
