local heap = require "ascope.heap"

describe("heap.release", function()
  it("collects when the rows dropped outweigh the Lua heap, and not for a few rows", function()
    collectgarbage("stop") -- from here only an explicit collection may take the table below
    local kb = collectgarbage("count")
    local weak = setmetatable({}, { __mode = "v" })
    weak[1] = {}
    assert.is_false(heap.release(0))
    assert.is_false(heap.release(math.floor(kb * 1024 / heap.ROW_BYTES / 2)))
    assert.is_table(weak[1])
    assert.is_true(heap.release(math.ceil(kb * 1024 / heap.ROW_BYTES) * 2))
    collectgarbage("restart")
    assert.is_nil(weak[1])
  end)
end)
