local core = require "ascope_core"
local h = require "helper"
local plog = require "ascope.plog"

local function line(level, module, time, msg)
  return ("[%s] %s(3975660,python):2024-06-01-10:%s.123.456 [device_error_proc.cc:816]3977663 %s"):format(level, module,
    time, msg)
end

-- a two-card log tree: card 0 fails in dispatch, card 1 in a MatMul kernel
local function tree(dir)
  h.write(dir .. "/device-0/plog-3975660_20240601100000.log", table.concat({
    line("INFO", "RUNTIME", "00:00", "stream created, PAGE_SIZE=4096 GE ready"),
    line("ERROR", "RUNTIME", "00:01", "report error module_type=1, module_name=EZ9999"),
    "    continuation text without a level",
    line("ERROR", "RUNTIME", "00:02", "The error from device(chipId:0, dieId:0), errcode:(0x800000, 0, 0) device_id=0, "
      .. "stream_id=5, report_stream_id=5, task_id=12, fault kernel_name=MoeDistributeDispatchV2_a1b2_mix_aiv, fault kernel info ext=none"),
    line("ERROR", "GE", "00:03", "Error happened, origin_op_name [MoeDistributeDispatchV2], op_name [layer_3_dispatch]"),
    line("ERROR", "GE", "00:04", "[Check][Param] E19999: Inner Error! alloc PAGE_SIZE failed"),
    line("ERROR", "GE", "00:05", "value E1000000 is not a GE code, nor XE12345"),
    line("WARNING", "HCCL", "00:06", "link event ras_code=0x81b18603 on port 3"),
    line("ERROR", "HCCL", "00:07", "[EI0002] The wait execution of the Notify register times out. device_id=0"),
    line("ERROR", "RUNTIME", "00:08", "Aicore kernel execute failed, device_id=0, stream_id=5, task_id=12, retCode=0x26"),
    line("ERROR", "RUNTIME", "00:09", "Aicore kernel execute failed, device_id=0, stream_id=5, task_id=13"),
  }, "\n") .. "\n")
  h.write(dir .. "/device-1/plog-3975661_20240601100000.log", table.concat({
    line("ERROR", "RUNTIME", "00:01", "module_name=EZ9999 vector error"),
    line("ERROR", "RUNTIME", "00:02", "errcode:(0x800000, 0, 0) device_id=1, stream_id=7, task_id=99, "
      .. "fault kernel_name=MatMulV2_77_mix_aic, more"),
    line("ERROR", "APP", "00:03", "NPU out of memory. Tried to allocate 2.00 GiB"),
    line("ERROR", "GE", "00:04", "EE9999: event wait timeout"),
  }, "\r\n") .. "\r\n")
end

describe("plog", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("counts lines per category, codes matched as codes, any-level classifiers on any level", function()
    tree(dir)
    local r = assert(plog.run(dir))
    local count = {}
    for id, c in pairs(r.categories) do count[id] = c.count end
    assert.same({ ez9999 = 2, bus_error_0x800000 = 2, error_happened_origin_op = 1, ge_error = 1,
                  ub_link_ras_0x81b18603 = 1, ei0002 = 1, aicore_exception_0x26 = 1, aicore_kernel_failed = 1,
                  oom_npu = 1, ee9999 = 1 }, count)
    local ex = r.categories.error_happened_origin_op.examples[1]
    assert.equal(dir .. "/device-0/plog-3975660_20240601100000.log", ex.file)
    assert.equal(5, ex.line)
    assert.equal(4, r.categories.ee9999.examples[1].line) -- CRLF lines are counted once
  end)

  it("extracts fields and finds each card's failing kernel; names the card that failed elsewhere", function()
    tree(dir)
    local r = assert(plog.run(dir))
    local bus
    for _, rec in ipairs(r.records) do
      if rec.id == "bus_error_0x800000" and rec.card == 0 then bus = rec end
    end
    assert.equal("5", bus.fields.stream_id)
    assert.equal("5", bus.fields.report_stream_id)
    assert.equal("12", bus.fields.task_id)
    assert.equal("MoeDistributeDispatchV2_a1b2_mix_aiv", bus.fields.kernel_name)
    assert.equal("errcode:(0x800000", bus.fields.error_code)
    assert.equal(2, #r.failures)
    assert.same({ card = 0, kernel_name = "MoeDistributeDispatchV2_a1b2_mix_aiv", origin_op_name = "MoeDistributeDispatchV2",
                  stream_id = "5", task_id = "12", file = bus.file, line = 4 }, r.failures[1])
    assert.same({ { card = 1, kernel_name = "MatMulV2_77_mix_aic" } }, r.non_moe_failures)
    local code, out = h.run("plog", "PLOG_PATH=" .. dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[ERROR] card 1 did not fail on a dispatch/combine kernel but on MatMulV2_77_mix_aic", 1, true))
    local s = core.json.load(dir .. "/out/plog_summary.json")
    assert.equal(2, s.categories.bus_error_0x800000.count)
    assert.equal(1, s.non_moe_failures[1].card)
    local rows, header = h.csv_rows(dir .. "/out/error_plog.csv")
    assert.equal("错误类型", header[1])
    assert.equal("\239\187\191", h.read(dir .. "/out/error_plog.csv"):sub(1, 3)) -- UTF-8 with BOM for Excel
    assert.equal(#r.records, #rows)
  end)

  it("takes a user classifier from a rule file without rebuilding", function()
    tree(dir)
    h.write(dir .. "/r.lua", [[return { classifiers = {
      { id = "my_custom", category = "app", pattern = "Tried to allocate", title = { en = "allocation", zh = "申请" } },
    } }]])
    local r = assert(plog.run(dir, { rules = dir .. "/r.lua" }))
    -- appended after the bundled ones: "NPU out of memory" still wins that line
    assert.is_nil(r.categories.my_custom)
    h.write(dir .. "/r2.lua", [[return { classifiers = { { id = "oom_npu", disabled = true },
      { id = "my_custom", category = "app", pattern = "Tried to allocate", title = { en = "allocation", zh = "申请" } } } }]])
    local r2 = assert(plog.run(dir, { rules = dir .. "/r2.lua" }))
    assert.equal(1, r2.categories.my_custom.count)
    assert.is_nil(r2.categories.oom_npu)
    h.write(dir .. "/bad.lua", [[return { classifiers = { { id = "broken", pattern = "[unclosed" } } }]])
    local none, err = plog.run(dir, { rules = dir .. "/bad.lua" })
    assert.is_nil(none)
    assert.truthy(err:find("broken", 1, true))
  end)
end)
