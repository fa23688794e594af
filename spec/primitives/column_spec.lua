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
end)
