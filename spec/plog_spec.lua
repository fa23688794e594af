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

  it("takes the card from the folders, never from the process id in device-<pid>_<time>.log", function()
    local card = require("ascope.ascend.plog").card_of_path
    assert.is_nil(card("flat/device-3978_20240601100000123.log"))
    assert.is_nil(card("device-3978_20240601100000123.log"))
    assert.equal(1, card("log/debug/device-1/device-3978_20240601100000123.log"))
    assert.equal(5, card("x/device-5/run.log"))
    assert.equal(2, card("card_2/plog-1_2.log"))
    assert.equal(7, card("/a/dev7/a.log"))
    -- the home of a number: one node's debug and run logs share one, two nodes' do not
    local reader = require "ascope.ascend.plog"
    assert.same({ 3, "n0/log/" }, { reader.card_home("n0/log/debug/device-3/device-9_1.log") })
    assert.same({ 3, "n0/log/" }, { reader.card_home("n0/log/Run/device-3/x.log") })
    assert.is_nil(reader.numbering_clash({ "n0/log/debug/device-3/a.log", "n0/log/run/device-3/b.log", "n1/log/device-4/c.log" }))
    assert.same({ 3, "n0/log/", "n1/log/" },
      { reader.numbering_clash({ "n0/log/debug/device-3/a.log", "n0/log/debug/device-4/b.log", "n1/log/debug/device-3/c.log" }) })
  end)

  it("reads the first line past a UTF-8 byte order mark, and names a UTF-16 log instead of reading nothing", function()
    local err_line = line("ERROR", "RUNTIME", "00:01", "Aicore kernel execute failed, device_id=1, stream_id=2, task_id=3, kernel_name=k")
    h.write(dir .. "/device-1/plog-1_2.log", "\239\187\191" .. err_line .. "\n")
    local r = assert(plog.run(dir, {}))
    assert.equal(0, #r.failed)
    assert.equal(1, r.failures[1] and r.failures[1].line)
    h.write(dir .. "/device-2/plog-1_2.log", "\255\254[\0E\0R\0")
    r = assert(plog.run(dir, {}))
    assert.equal(1, #r.failed)
    assert.equal(dir .. "/device-2/plog-1_2.log:1:1 (byte 0): UTF-16 text (byte order mark FF FE): convert it to UTF-8 first",
      r.failed[1].reason)
  end)

  it("reads the time of every line shape of host and device logs, the device's TSCH(-1,null) included", function()
    local shapes = {
      "[ERROR] TSCH(-1,null):2024-03-08-16:35:48.123.456 [ts_task.c:120] aicore error, device_id=4, stream_id=5, task_id=7, retCode=0x26",
      "[ERROR] RUNTIME(3977,python):2024-03-08-16:35:49.123.456 [device_error_proc.cc:816] [3977663]report error module_name=EZ9999",
      "[ERROR] AICPU(2876,aicpu_scheduler):2024-03-08-16:35:50.123.456 [ae_kernel.cc:88][tid:2901] EZ9999 aicpu failed",
      "[ERROR] GE(3975660,python):2024-03-08-16:35:51.123.456 [graph.cc:1]3977663 E19999: Inner Error!",
      "[ERROR] DRV(-1,null):2024-03-08-16:35:52.123 [dev.c:1] EE9999 device fault",
    }
    local parse = require("ascope.ascend.plog").parse_line
    local p = parse(shapes[1])
    assert.same({ "ERROR", "TSCH", "-1", "null", "2024-03-08-16:35:48.123.456" }, { p.level, p.module, p.pid, p.pname, p.time })
    h.write(dir .. "/device-4/device-1_2.log", table.concat(shapes, "\n") .. "\n")
    local r = assert(plog.run(dir))
    assert.equal(0, r.unclassified.count)
    assert.same({ [4] = "2024-03-08-16:35:48.123.456" }, r.first_error)
    assert.equal("2024-03-08-16:35:48.123.456", r.failures[1].time)
    assert(plog.write(r, dir .. "/out", { formats = { "csv" } }))
    local times = {}
    for _, rec in ipairs(h.csv_rows(dir .. "/out/error_plog.csv")) do times[tonumber(rec.line)] = rec.time end
    assert.same({ "2024-03-08-16:35:48.123.456", "2024-03-08-16:35:49.123.456", "2024-03-08-16:35:50.123.456",
                  "2024-03-08-16:35:51.123.456", "2024-03-08-16:35:52.123" }, times)
  end)

  it("names a gzip-compressed log, and reads the lines of a log padded with NUL bytes", function()
    local err_line = line("ERROR", "RUNTIME", "00:01", "Aicore kernel execute failed, device_id=1, stream_id=2, task_id=3, "
      .. "kernel_name=MoeDistributeCombine_1")
    -- gzip's header and a deflate stream that holds the letters of an error line by chance
    h.write(dir .. "/device-1/plog-1.log", "\31\139\8\0\0\0\0\0\0\3" .. err_line:sub(1, 60) .. " EZ9999 \0\1")
    h.write(dir .. "/device-1/plog-2.log.gz", "\31\139\8\0\0\0\0\0\0\3\1\2")
    -- a crash left 5000 NUL bytes; the next line was written after them, and a NUL inside a line
    h.write(dir .. "/device-2/plog-1.log", err_line:gsub("device_id=1", "device_id=2") .. "\n" .. ("\0"):rep(5000)
      .. line("ERROR", "GE", "00:02", "E19999 x\0\0 EZ9999") .. "\n" .. ("\0"):rep(100))
    local r = assert(plog.run(dir))
    local reasons = {}
    for _, f in ipairs(r.failed) do reasons[#reasons + 1] = f.reason end
    table.sort(reasons)
    assert.same({ dir .. "/device-1/plog-1.log:1:1 (byte 0): gzip-compressed (it begins with 1F 8B): decompress it first (gunzip)",
                  dir .. "/device-1/plog-2.log.gz:1:1 (byte 0): gzip-compressed (it begins with 1F 8B): decompress it first (gunzip)" },
      reasons)
    assert.same({ { path = dir .. "/device-2/plog-1.log", bytes = 5102 } }, r.nul_files)
    assert.equal(1, r.categories.ez9999.count)
    assert.equal(2, r.categories.ez9999.examples[1].line)
    assert.equal(line("ERROR", "GE", "00:02", "E19999 x EZ9999"), r.categories.ez9999.examples[1].text)
    assert.equal(1, r.categories.ge_error.count)
    assert.equal(0, r.unclassified.count)
    assert.same({ [2] = "2024-06-01-10:00:01.123.456" }, r.first_error)
    local code, out, err = h.run("--lang", "en", "plog", dir, "-o", dir .. "/out")
    assert.equal(1, code)
    assert.truthy(err:find("gzip-compressed (it begins with 1F 8B): decompress it first (gunzip)", 1, true), err)
    assert.truthy(out:find("[WARNING] " .. dir .. "/device-2/plog-1.log: 5102 NUL byte(s)", 1, true), out)
    assert.equal(5102, core.json.load(dir .. "/out/plog_summary.json").nul_bytes[1].bytes)
  end)

  it("reads the bus error in the runtime's AI Core exception line, and no longer code as 0x800000", function()
    local aic = "The error from device(chipId:0, dieId:0), serial number is 1, there is an aicore error exception, "
      .. "core id is 12, error code = 0x800000, dump info: pc start: 0x1240c0000000, current: 0x1240c0000c34"
    h.write(dir .. "/device-3/plog-1_2.log", table.concat({
      line("ERROR", "RUNTIME", "00:01", aic),
      line("ERROR", "RUNTIME", "00:02", (aic:gsub("0x800000", "0x8000000"))),
      line("ERROR", "RUNTIME", "00:03", "errcode:(0x8000001, 0, 0) device_id=3"),
    }, "\n") .. "\n")
    local r = assert(plog.run(dir, {}))
    assert.equal(1, r.categories.bus_error_0x800000.count)
    assert.equal(1, r.categories.bus_error_0x800000.examples[1].line)
    assert.equal(2, r.categories.aicore_error_exception.count)
    assert.equal(1, r.unclassified.count) -- the errcode 0x8000001 line
    assert(plog.write(r, dir .. "/out", { formats = { "csv" } }))
    local first = h.csv_rows(dir .. "/out/error_plog.csv")[1]
    assert.equal("error code = 0x800000", first.error_code)
    assert.equal("3", first.card)
  end)

  it("reads the AI Core exception line in its other wording, and a decimal error code", function()
    -- as CANN writes it in other versions (vllm-ascend issue 2630): "an exception of aivec error"
    local exc = "ProcessStarsCoreErrorInfo:The error from device(chipId:5, dieId:0), serial number is 65, there is an "
      .. "exception of %s error, core id is 44, error code = %s, dump info: pc start: 0x12c0c2e05000."
    h.write(dir .. "/device-3/plog-1_2.log", table.concat({
      line("ERROR", "RUNTIME", "00:01", exc:format("aivec", "0")),
      line("ERROR", "RUNTIME", "00:02", exc:format("aicore", "0x800000")),
    }, "\n") .. "\n")
    local r = assert(plog.run(dir, {}))
    assert.equal(2, r.categories.aicore_error_exception.count)
    assert.equal(1, r.categories.bus_error_0x800000.count)
    assert.equal(0, r.unclassified.count)
    assert(plog.write(r, dir .. "/out", { formats = { "csv" } }))
    local rows = h.csv_rows(dir .. "/out/error_plog.csv")
    assert.same({ "error code = 0", "error code = 0x800000" }, { rows[1].error_code, rows[2].error_code })
  end)

  it("counts lines per category, codes matched as codes, any-level classifiers on any level", function()
    tree(dir)
    local r = assert(plog.run(dir))
    local count = {}
    for id, c in pairs(r.categories) do count[id] = c.count end
    -- ge_error: the four [ERROR] lines of module GE (the E19999 one also carries an E1xxxx code);
    -- never the letters GE inside a word (PAGE_SIZE) nor a line of another module without a code
    assert.same({ ez9999 = 2, bus_error_0x800000 = 2, error_happened_origin_op = 1, ge_error = 4,
                  ub_link_ras_0x81b18603 = 1, ei0002 = 1, aicore_exception_0x26 = 1, aicore_kernel_failed = 2,
                  oom_npu = 1, ee9999 = 1 }, count)
    assert.equal(0, r.unclassified.count)
    local ex = r.categories.error_happened_origin_op.examples[1]
    assert.equal(dir .. "/device-0/plog-3975660_20240601100000.log", ex.file)
    assert.equal(5, ex.line)
    assert.equal(4, r.categories.ee9999.examples[1].line) -- CRLF lines are counted once
  end)

  it("extracts fields and finds each card's failing kernel; names the card that failed elsewhere", function()
    tree(dir)
    local r = assert(plog.run(dir))
    assert(plog.write(r, dir .. "/out", { formats = { "csv" } }))
    local records = h.csv_rows(dir .. "/out/error_plog.csv")
    local bus
    for _, rec in ipairs(records) do
      if rec["错误类型"] == "bus error 0x800000 (MTE address out of range)" and rec.card == "0" then bus = rec end
    end
    assert.equal("5", bus.stream_id)
    assert.equal("5", bus.report_stream_id)
    assert.equal("12", bus.task_id)
    assert.equal("MoeDistributeDispatchV2_a1b2_mix_aiv", bus.kernel_name)
    assert.equal("errcode:(0x800000", bus.error_code)
    assert.equal("0", bus.device_id)
    assert.equal("2024-06-01-10:00:02.123.456", bus.time)
    assert.equal("4", bus.line)
    -- the CRLF file's lines lose their CR; a line without a device_id takes the card of its folder
    local ee = records[#records]
    assert.equal(dir .. "/device-1/plog-3975661_20240601100000.log", ee.file)
    assert.equal(line("ERROR", "GE", "00:04", "EE9999: event wait timeout"), ee["错误信息"])
    assert.equal("1", ee.card)
    assert.equal("", ee.device_id)
    -- one failure per failing (card, task): card 0 tasks 12 and 13, card 1 task 99
    assert.equal(3, #r.failures)
    assert.same({ card = 0, kernel_name = "MoeDistributeDispatchV2_a1b2_mix_aiv", origin_op_name = "MoeDistributeDispatchV2",
                  stream_id = "5", task_id = "12", file = bus.file, line = 4, time = "2024-06-01-10:00:02.123.456" },
      r.failures[1])
    assert.same({ card = 0, stream_id = "5", task_id = "13", file = bus.file, line = 11, time = "2024-06-01-10:00:09.123.456" },
      r.failures[2])
    assert.equal("99", r.failures[3].task_id)
    assert.same({ { card = 1, kernel_name = "MatMulV2_77_mix_aic", task_id = "99" } }, r.non_moe_failures)
    assert.same({ [0] = "2024-06-01-10:00:01.123.456", [1] = "2024-06-01-10:00:01.123.456" }, r.first_error)
    local code, out = h.run("plog", "PLOG_PATH=" .. dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[ERROR] card 1 did not fail on a dispatch/combine kernel but on MatMulV2_77_mix_aic", 1, true))
    local s = core.json.load(dir .. "/out/plog_summary.json")
    assert.equal(2, s.categories.bus_error_0x800000.count)
    assert.equal(1, s.non_moe_failures[1].card)
    local rows, header = h.csv_rows(dir .. "/out/error_plog.csv")
    assert.equal("错误类型", header[1])
    assert.equal("\239\187\191", h.read(dir .. "/out/error_plog.csv"):sub(1, 3)) -- UTF-8 with BOM for Excel
    assert.equal(r.record_count, #rows)
    assert.equal(#records, #rows)
  end)

  it("judges a card by its first failing kernel in time, not by the failures that follow it", function()
    local function fail(time, task, kernel, device)
      return line("ERROR", "RUNTIME", time, ("Aicore kernel execute failed, device_id=%d, stream_id=5, task_id=%d, "
        .. "kernel_name=%s"):format(device, task, kernel))
    end
    -- card 0 failed in dispatch at 00:01, its MatMul at 00:03 followed (in a file read first);
    -- card 1 failed in a MatMul at 00:02, its combine at 00:04 followed
    h.write(dir .. "/device-0/plog-1.log", fail("00:03", 9, "MatMulV2_1", 0) .. "\n")
    h.write(dir .. "/device-0/plog-2.log", fail("00:01", 3, "MoeDistributeDispatchV2_1", 0) .. "\n")
    h.write(dir .. "/device-1/plog-1.log", fail("00:02", 4, "MatMulV2_2", 1) .. "\n" .. fail("00:04", 5, "MoeDistributeCombineV2_1", 1) .. "\n")
    local r = assert(plog.run(dir))
    assert.same({ { card = 1, kernel_name = "MatMulV2_2", task_id = "4" } }, r.non_moe_failures)
    -- each card's failures in the order they happened
    assert.same({ "3", "9", "4", "5" }, { r.failures[1].task_id, r.failures[2].task_id, r.failures[3].task_id,
                                          r.failures[4].task_id })
    local errs = {}
    for _, a in ipairs(plog.anomalies(r)) do
      if a.severity == "ERROR" then errs[#errs + 1] = a.card end
    end
    assert.same({ 1 }, errs)
  end)

  it("claims every failing card failed on dispatch/combine only when each one's first failing kernel is known", function()
    local function fail(time, task, device, kernel)
      return line("ERROR", "RUNTIME", time, ("Aicore kernel execute failed, device_id=%d, stream_id=5, task_id=%d%s")
        :format(device, task, kernel and (", kernel_name=" .. kernel) or ""))
    end
    -- card 0 failed in dispatch; card 3's failure names no kernel; card 5's first failure names
    -- none, its dispatch failure came after it (a consequence, not what it failed on)
    h.write(dir .. "/device-0/plog-1.log", fail("00:01", 1, 0, "MoeDistributeDispatchV2_1") .. "\n")
    h.write(dir .. "/device-3/plog-1.log", fail("00:02", 7, 3) .. "\n")
    h.write(dir .. "/device-5/plog-1.log", fail("00:01", 8, 5) .. "\n" .. fail("00:04", 9, 5, "MoeDistributeDispatchV2_1") .. "\n")
    local r = assert(plog.run(dir))
    assert.same({}, r.non_moe_failures)
    assert.same({ 3, 5 }, { r.unknown_kernel_failures[1].card, r.unknown_kernel_failures[2].card })
    assert.equal("7", r.unknown_kernel_failures[1].task_id)
    local named = {}
    for _, a in ipairs(plog.anomalies(r)) do
      if a.cards then named[#named + 1] = { a.severity, a.cards, a.message } end
    end
    assert.same({ { "WARNING", { 3, 5 }, "2 card(s) failed without naming a kernel (their first failure names no kernel "
      .. "and no op): 3, 5" } }, named)
    local code, out = h.run("--lang", "en", "plog", dir, "-o", dir .. "/out", "--fail-on", "error")
    assert.equal(0, code) -- not knowing the kernel is no failure elsewhere
    assert.falsy(out:find("every failing card", 1, true))
    assert.truthy(out:find("[WARNING] 2 card(s) failed without naming a kernel", 1, true))
    local s = core.json.load(dir .. "/out/plog_summary.json")
    assert.same({ 3, 5 }, { s.unknown_kernel_failures[1].card, s.unknown_kernel_failures[2].card })
    assert.equal(0, #s.non_moe_failures)
    local _, zh = h.run("--lang", "zh", "plog", dir, "-o", dir .. "/out")
    assert.truthy(zh:find("2 张卡失败时未给出 kernel", 1, true))
    -- once every card's first failure names a dispatch/combine kernel, the claim is made
    os.remove(dir .. "/device-3/plog-1.log")
    h.write(dir .. "/device-5/plog-1.log", fail("00:04", 9, 5, "moe_distribute_combine_2") .. "\n")
    r = assert(plog.run(dir))
    assert.same({}, r.unknown_kernel_failures)
    local _, out2 = h.run("--lang", "en", "plog", dir, "-o", dir .. "/out")
    assert.truthy(out2:find("[INFO] every failing card failed on a dispatch/combine kernel", 1, true))
  end)

  it("knows dispatch/combine kernels in every spelling, as graph does", function()
    local moe = { "MoeDistributeDispatch_1", "MoeDistributeCombine_2", "moe_distribute_dispatch_3",
                  "moe_distribute_combine_4", "MoeDistributeDispatchV2_5", "MoeDistributeCombineV2_6",
                  "MOE_DISTRIBUTE_DISPATCH_V2_7", "aclnnMoeDistributeCombineV2_8" }
    local lines = {}
    for card, kernel in ipairs(moe) do
      lines[card] = line("ERROR", "RUNTIME", "00:01", ("Aicore kernel execute failed, device_id=%d, stream_id=5, task_id=1, "
        .. "kernel_name=%s"):format(card, kernel))
    end
    lines[#lines + 1] = line("ERROR", "RUNTIME", "00:01", "Aicore kernel execute failed, device_id=0, stream_id=5, "
      .. "task_id=1, kernel_name=MoeGatingTopK_9")
    h.write(dir .. "/plog-1.log", table.concat(lines, "\n") .. "\n")
    local r = assert(plog.run(dir))
    assert.equal(#moe + 1, #r.failures)
    assert.same({ { card = 0, kernel_name = "MoeGatingTopK_9", task_id = "1" } }, r.non_moe_failures)
    -- one definition: the kernels plog judges failures by are the nodes graph compares
    assert.same(plog.rules().moe_kernels, require("ascope.graph").rules().filter)
  end)

  it("takes a user classifier from a rule file without rebuilding", function()
    tree(dir)
    h.write(dir .. "/r.lua", [[return { classifiers = {
      { id = "my_custom", category = "app", pattern = "Tried to allocate", title = { en = "allocation", zh = "申请" } },
    } }]])
    local r = assert(plog.run(dir, { rules = dir .. "/r.lua" }))
    -- categories are independent: the line counts as the user's category and as NPU out of memory
    assert.equal(1, r.categories.my_custom.count)
    assert.equal(1, r.categories.oom_npu.count)
    -- a character a quantifier may drop is not required by the literal search before the pattern
    h.write(dir .. "/q.lua", [[return { classifiers = {
      { id = "optional_t", category = "app", pattern = "NPU outt? of", title = { en = "o", zh = "o" } },
      { id = "captured", category = "app", pattern = "(Tried) to", title = { en = "c", zh = "c" } },
    } }]])
    local rq = assert(plog.run(dir, { rules = dir .. "/q.lua" }))
    assert.equal(1, rq.categories.optional_t.count)
    assert.equal(1, rq.categories.captured.count)
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

  it("counts one line in every category it matches", function()
    h.write(dir .. "/device-2/plog-1.log", line("ERROR", "GE", "00:01",
      "Error happened, origin_op_name [MoeDistributeCombineV2], op_name [layer_3_combine]") .. "\n")
    local r = assert(plog.run(dir))
    assert.equal(1, r.categories.error_happened_origin_op.count)
    assert.equal(1, r.categories.ge_error.count)
    assert.equal(2, r.record_count)
    assert(plog.write(r, dir .. "/out", { formats = { "csv" } }))
    local records = h.csv_rows(dir .. "/out/error_plog.csv")
    assert.equal(2, #records)
    assert.same({ "Error happened, origin_op_name", "GE error (module GE, or an E1xxxx code)" },
      { records[1]["错误类型"], records[2]["错误类型"] })
    assert.equal("1", records[1].line)
    assert.equal("1", records[2].line)
    assert.same({ { card = 2, file = dir .. "/device-2/plog-1.log", line = 1, time = "2024-06-01-10:00:01.123.456",
                    origin_op_name = "MoeDistributeCombineV2" } }, r.failures)
    assert.same({}, r.non_moe_failures)
  end)

  it("keeps an [ERROR] line no classifier knows as unclassified, with its example, and flags it", function()
    h.write(dir .. "/device-0/plog-1.log", table.concat({
      line("ERROR", "HCCL", "00:01", "something nobody has seen before"),
      line("INFO", "HCCL", "00:02", "an [ERROR] quoted in an info line is no error"),
      line("ERROR", "RUNTIME", "00:03", "Stream Synchronize failed, stream_id=3, retCode=0x222"),
      line("ERROR", "HCCL", "00:04", ("topo exchange "):rep(2000) .. "and no time limit named"),
    }, "\n") .. "\n")
    local r = assert(plog.run(dir))
    assert.equal(2, r.unclassified.count)
    assert.same({ file = dir .. "/device-0/plog-1.log", line = 1,
                  text = line("ERROR", "HCCL", "00:01", "something nobody has seen before") }, r.unclassified.examples[1])
    assert.equal(4, r.unclassified.examples[2].line)
    assert.equal(1, r.categories.stream_sync_0x222.count)
    assert.is_nil(r.categories.topo_exchange_timeout)
    local code, out = h.run("--lang", "en", "plog", dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[WARNING] 2 [ERROR] line(s) that no classifier knows (unclassified)", 1, true))
    local s = core.json.load(dir .. "/out/plog_summary.json")
    assert.equal(2, s.unclassified.count)
    local rows, header = h.csv_rows(dir .. "/out/error_plog.csv")
    assert.equal(3, #rows)
    assert.equal("unclassified [ERROR] line", rows[1][header[1]])
    assert.equal(3, (h.run("--fail-on", "warning", "plog", dir, "-o", dir .. "/out", "-q")))
    assert.equal(0, (h.run("--fail-on", "error", "plog", dir, "-o", dir .. "/out", "-q")))
  end)

  it("prints the GE documentation hint with the GE error count", function()
    tree(dir)
    local code, out = h.run("--lang", "en", "plog", dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[INFO] GE error (module GE, or an E1xxxx code): 4 line(s); look the codes up under \"GE Errors\" at "
      .. "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/900beta2/index/index.html", 1, true))
    local _, zh = h.run("plog", dir, "-o", dir .. "/out", "--lang", "zh")
    assert.truthy(zh:find("检测到 GE 错误（GE 模块，或 E1xxxx 错误码）：4 个，请前往该网址，搜索GE Errors查询对应报错信息及解决方法：", 1, true))
  end)

  it("matches the shipped classifiers and fields in linear time, a user's .- pattern through Lua", function()
    local rules = assert(plog.rules())
    assert.same({}, (plog.classifier(rules)):slow())
    h.write(dir .. "/device-0/plog-1.log", table.concat({
      -- thousands of repeats of the classifiers' and fields' words, none complete: Lua's
      -- patterns took quadratic time here
      line("ERROR", "HCCL", "00:01", ("topo exchange EZ9999x task_id= E1 kernel_name= retCode=0x device_id=a "):rep(40000)),
      line("ERROR", "APP", "00:02", "NPU out of memory. Tried to allocate 2.00 GiB"),
    }, "\n") .. "\n")
    h.write(dir .. "/r.lua", [[return { classifiers = {
      { id = "lazy", category = "app", pattern = "Tried.-GiB", title = { en = "l", zh = "l" } } } }]])
    local r = assert(plog.run(dir, { rules = dir .. "/r.lua" }))
    assert.equal(1, r.unclassified.count)
    assert.equal(1, r.unclassified.examples[1].line)
    assert.equal(1, r.categories.lazy.count)
    assert.equal(1, r.categories.oom_npu.count)
    assert.same({ "Tried.-GiB" }, (plog.classifier(r.rules)):slow())
  end)

  it("follows at most MAX_FAILURES failing tasks and says how many lines it did not follow", function()
    local lines = {}
    for k = 1, 5 do
      lines[k] = line("ERROR", "RUNTIME", "00:0" .. k, ("Aicore kernel execute failed, device_id=0, stream_id=5, task_id=%d"):format(k))
    end
    h.write(dir .. "/device-0/plog-1.log", table.concat(lines, "\n") .. "\n")
    local max = plog.MAX_FAILURES
    plog.MAX_FAILURES = 3
    local r = assert(plog.run(dir))
    plog.MAX_FAILURES = max
    assert.same({ "1", "2", "3" }, { r.failures[1].task_id, r.failures[2].task_id, r.failures[3].task_id })
    assert.equal(3, #r.failures)
    assert.equal(2, r.failures_dropped)
    assert.equal(5, r.categories.aicore_kernel_failed.count) -- counting is not capped
    local found
    for _, a in ipairs(plog.anomalies(r)) do
      if a.analysis == "plog failures" then found = a.message end
    end
    assert.truthy(found:find("2", 1, true))
    -- lines that wait for a task keep only what can be used: many of them drop nothing
    local ops = {}
    for k = 1, 50 do
      ops[k] = line("ERROR", "GE", "00:01", ("Error happened, origin_op_name [Op_%d], op_name [x]"):format(k))
    end
    h.write(dir .. "/device-0/plog-1.log", table.concat(ops, "\n") .. "\n")
    plog.MAX_FAILURES = 3
    local w = assert(plog.run(dir))
    plog.MAX_FAILURES = max
    assert.equal(0, w.failures_dropped)
    assert.same({ { card = 0, origin_op_name = "Op_1", file = dir .. "/device-0/plog-1.log", line = 1,
                    time = "2024-06-01-10:00:01.123.456" } }, w.failures)
  end)

  it("classifies a line of 5 MB without an end of line by its first 64 KiB and says so", function()
    assert(core.fs.mkdirs(dir .. "/device-3"))
    local f = assert(io.open(dir .. "/device-3/plog-1.log", "wb"))
    f:write(line("ERROR", "RUNTIME", "00:01", "EZ9999 then " .. ("z"):rep(5 * 1024 * 1024)))
    f:close()
    local r = assert(plog.run(dir))
    assert.equal(1, r.categories.ez9999.count)
    assert.equal(1, r.cut_lines)
    assert.equal(4096 + 3, #r.categories.ez9999.examples[1].text)
    local code, out = h.run("--lang", "en", "plog", dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[WARNING] 1 line(s) longer than 64 KiB were classified by their first 64 KiB", 1, true))
    -- the console shows the example's first 1000 bytes, the summary JSON the 4 KiB the scan kept
    local shown = out:match("plog%-1%.log:1: ([^\n]*)")
    assert.equal(1000 + #"…", #shown)
    assert.equal(("z"):rep(20) .. "…", shown:sub(-20 - #"…"))
    local s = core.json.load(dir .. "/out/plog_summary.json")
    assert.equal(4096 + 3, #s.categories.ez9999.examples[1].text)
    local rows = h.csv_rows(dir .. "/out/error_plog.csv")
    assert.equal(65536, #rows[1]["错误信息"])
  end)
end)
