local core = require "ascope_core"
local h = require "helper"
local bin = core.bin

local varint = h.pb_varint
local function field(num, wire, payload)
  if wire == 0 then return h.pb_int(num, payload) end
  return h.pb_bytes(num, payload)
end

describe("bin views", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("reads little-endian scalars, negative offsets and strided int32 arrays", function()
    local p = dir .. "/x.bin"
    h.write(p, string.pack("<i4i4i4i4i8d", 1, -2, 3, 4, 1 << 40, 2.5))
    local v = assert(bin.open(p))
    assert.equal(32, v:size())
    assert.equal(-2, v:read("i32", 4))
    assert.equal(1 << 40, v:read("i64", 16))
    assert.equal(2.5, v:read("f64", -8))
    assert.same({ 1, 3 }, v:array("i32", 0, 2, 8):totable())
    local tail = v:tail(8)
    assert.equal(24, tail:offset())
    assert.equal(2.5, tail:read("f64", 0))
    assert.has_error(function() v:read("i32", 30) end)
  end)

  it("reads declarative struct layouts, one block after another", function()
    local blocks = {}
    for core_id = 0, 2 do
      local words = {}
      for i = 0, 127 do words[i + 1] = 0 end
      words[1], words[2], words[3] = core_id % 2, 1, core_id + 10
      blocks[#blocks + 1] = string.pack("<" .. ("i4"):rep(128), table.unpack(words))
    end
    local v = bin.from_string(table.concat(blocks))
    local layout = { size = 512, fields = { flag = { 0, "i32" }, pos = { 4, "i32" }, rank = { 8, "i32" },
                                            head = { 0, "i32", 3 } } }
    local list = v:structs(0, 3, layout)
    assert.equal(3, #list)
    assert.equal(1, list[2].flag)
    assert.equal(12, list[3].rank)
    assert.same({ 0, 1, 10 }, list[1].head)
    assert.equal(11, v:struct(512, layout).rank)
  end)

  it("decodes protobuf messages from a schema, leaving big payloads in place", function()
    local input = field(1, 0, 3) .. field(2, 2, "\1\2\3\4") .. field(4, 2, varint(6) .. varint(4))
    local msg = field(1, 2, "v1") .. field(2, 0, 1700000000) .. field(4, 2, input) .. field(4, 2, field(1, 0, 9))
      .. field(6, 2, "MoeDistributeDispatchV2") .. field(99, 0, 5)
    local schema = {
      [1] = { "version", "string" }, [2] = { "dump_time", "int" }, [6] = { "op_name", "string" },
      [4] = { "input", "message", { [1] = { "data_type", "int" }, [2] = { "data", "bytes" },
                                    [4] = { "shape", "int", repeated = true } }, repeated = true },
    }
    local v = bin.from_string("HEAD" .. msg)
    local d = v:protobuf(schema, 4)
    assert.equal("v1", d.version)
    assert.equal(1700000000, d.dump_time)
    assert.equal("MoeDistributeDispatchV2", d.op_name)
    assert.equal(2, #d.input)
    assert.equal(3, d.input[1].data_type)
    assert.same({ 6, 4 }, d.input[1].shape)
    assert.equal(4, d.input[1].data.length)
    assert.equal("\1\2\3\4", v:bytes(d.input[1].data.offset, 4))
    assert.equal(9, d.input[2].data_type)
    local ok, err = pcall(function() return bin.from_string("\10\50abc"):protobuf(schema) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("runs past the end", 1, true))
  end)

  it("loads .npy arrays and rejects truncated ones", function()
    local header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"
    header = header .. (" "):rep(64 - 10 - #header - 1) .. "\n"
    local data = string.pack("<i4i4i4i4i4i4", 1, 2, 3, -4, 5, 6)
    local p = dir .. "/a.npy"
    h.write(p, "\147NUMPY\1\0" .. string.pack("<I2", #header) .. header .. data)
    local a = assert(assert(bin.open(p)):npy())
    assert.equal("<i4", a.descr)
    assert.same({ 2, 3 }, a.shape)
    assert.same({ 1, 2, 3, -4, 5, 6 }, a.data:totable())
    h.write(p, "\147NUMPY\1\0" .. string.pack("<I2", #header) .. header .. data:sub(1, 10))
    local none, err = assert(bin.open(p)):npy()
    assert.is_nil(none)
    assert.truthy(err:find("24 bytes expected, 10 present", 1, true))
  end)
end)
