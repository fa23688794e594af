local core = require "ascope_core"
local h = require "helper"
local memory = require "ascope.memory"
local trace_check = require "trace_check"

local HEADER = "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),"
  .. "Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),"
  .. "Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),"
  .. "Release Total Active(MB),Stream Ptr,Device Type\n"

local function ev(name, ts, dur, stack)
  return ('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 1, "tid": 1, "ts": "%s", "dur": %s, '
    .. '"args": {"Call stack": "%s"}}'):format(name, ts, dur, stack)
end

-- The documented example of the reference tool, in a <in>/<role>/<..>_ascend_pt tree.
local function example_tree(dir)
  local pt = dir .. "/actor_update/20260101_120000_ascend_pt"
  h.write(pt .. "/profiler_info_0.json", '{"rank_id": 0}')
  h.write(pt .. "/profiler_metadata.json", '{"role": "actor_update"}')
  h.write(pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", "[" .. table.concat({
    ev("aten::empty", "1000000.0", 50, "fsdp2.py(112): train_batch;\\r\\nmain.py(1): main"),
    ev("aten::empty", "3000000.0", 100, "fsdp2.py(120): train_batch;\\r\\nmain.py(1): main"),
    ev("aten::matmul", "2000000.0", 1000, "model.py(60): forward;\\r\\nmain.py(1): main"),
    '{"ph": "X", "cat": "python_function", "name": "aten::unknown", "ts": "5999999.0", "dur": 5}',
  }, ",\n") .. "]")
  h.write(pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", HEADER ..
    "aten::empty,1024,1000100,,,,,10,20,10,,,,1,NPU:0\n" ..
    "aten::empty,2048,3000050,3000150,3000150,100.0,100.0,12,20,12,,,,1,NPU:0\n" ..
    "aten::matmul,4096,2000500,2000900,2000900,400,400,16,20,16,,,,1,NPU:0\n" ..
    "aten::unknown,512,6000000,,,,,16.5,20,16.5,,,,1,NPU:0\n" ..
    "aten::empty,-1024,7000000,,,,,15.5,20,15.5,,,,1,NPU:0\n")
  return pt
end

describe("memory attribution: the documented example", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("gives the reference's rows, in time order, with exact times", function()
    example_tree(dir)
    local r = assert(memory.parse(dir, { jobs = 1 }))
    assert.equal(1, #r.ranks)
    assert.equal(0, #r.failed)
    local got = {}
    for row in r:rows() do got[#got + 1] = row end
    assert.same({ "aten::empty", "aten::matmul", "aten::empty", "aten::unknown", "aten::empty" },
      { got[1].name, got[2].name, got[3].name, got[4].name, got[5].name })
    assert.same({ "fsdp2.py(112): train_batch", "model.py(60): forward", "fsdp2.py(120): train_batch", "",
                  "fsdp2.py(120): train_batch" },
      { got[1].call_stack_top, got[2].call_stack_top, got[3].call_stack_top, got[4].call_stack_top,
        got[5].call_stack_top })
    assert.same({ 1000100000, 2000500000, 3000050000, 6000000000, 7000000000 },
      { got[1].start_ns, got[2].start_ns, got[3].start_ns, got[4].start_ns, got[5].start_ns })
    assert.equal("actor_update", got[1].role)
    assert.equal(0, got[1].rank_id)
    assert.equal("fsdp2.py(112): train_batch;\r\nmain.py(1): main", got[1].call_stack)
  end)

  it("writes memory_events.csv with the contract's columns and exact ms values", function()
    example_tree(dir)
    local code, out = h.run("memory", dir, "-o", dir .. "/out", "-q")
    assert.equal(0, code)
    assert.truthy(out:find("1 rank(s), 5 events", 1, true))
    local rows, header = h.csv_rows(dir .. "/out/memory_events.csv")
    assert.same({ "name", "role", "rank_id", "call_stack", "call_stack_top", "size_kb", "start_time_ms",
      "duration_ms", "total_allocated_mb", "total_reserved_mb", "total_active_mb", "device_type" }, header)
    local ms, dur, top = {}, {}, {}
    for i, row in ipairs(rows) do
      ms[i], dur[i], top[i] = row.start_time_ms, row.duration_ms, row.call_stack_top
    end
    assert.same({ "1000.1", "2000.5", "3000.05", "6000.0", "7000.0" }, ms)
    assert.same({ "0.0", "0.4", "0.1", "0.0", "0.0" }, dur)
    assert.equal("-1024.0", rows[5].size_kb)
    assert.equal("1024.0", rows[1].size_kb)
    assert.equal("NPU:0", rows[1].device_type)
    assert.equal("fsdp2.py(120): train_batch", top[5])
  end)

  it("--match within refuses an operator that had ended, within-or-latest falls back", function()
    example_tree(dir)
    local latest = assert(memory.parse(dir, { jobs = 1 }))
    -- 1000100 > 1000000 + 50 us and the release at 7000000 > 3000000 + 100 us: op already ended
    assert.equal(2, latest.ranks[1].summary.suspect_latest_matches)
    assert.equal(4, latest.ranks[1].summary.latest_matches)
    local within = assert(memory.parse(dir, { jobs = 1, match = "within" }))
    assert.equal(2, within.ranks[1].summary.matched)
    local w = {}
    for row in within:rows() do w[#w + 1] = row.call_stack_top end
    assert.same({ "", "model.py(60): forward", "fsdp2.py(120): train_batch", "", "" }, w)
    local both = assert(memory.parse(dir, { jobs = 1, match = "within-or-latest" }))
    assert.equal(4, both.ranks[1].summary.matched)
    assert.equal(0.8, both.ranks[1].summary.match_rate)
  end)

  it("computes the peak and what is alive at it", function()
    example_tree(dir)
    local s = assert(memory.parse(dir, { jobs = 1 })).ranks[1].summary
    -- every row is aten::: one pool, PTA
    assert.equal(1, #s.components)
    local c = s.components[1]
    assert.equal("PTA", c.component)
    -- peak 16.5 MB at 6000 ms: alive then are the never-released 1024 KB and 512 KB allocations
    assert.equal(16.5, c.peak.allocated_mb)
    assert.equal(6000000000, c.peak.time_ns)
    assert.same({ allocated_mb = 16.5, time_ns = 6000000000, component = "PTA" }, s.peak)
    assert.equal(1536, c.live_at_peak.size_kb)
    assert.equal(2, c.live_at_peak.count)
    assert.equal("fsdp2.py(112): train_batch", c.live_at_peak.sites[1].call_site)
    assert.equal(1024, c.live_at_peak.sites[1].size_kb)
    assert.equal("(no call stack)", c.live_at_peak.sites[2].call_site)
    assert.near(1024 / (16.5 * 1024), c.live_at_peak.sites[1].share, 1e-12)
    -- the rest of the peak: 512 KB without a stack, 16.5 MB - 1.5 MB from before the file
    assert.equal(512, c.live_at_peak.no_stack_kb)
    assert.equal(16.5 * 1024 - 1536, c.live_at_peak.earlier_kb)
    -- 512 of the 7680 KB allocated have no call stack, all of it from aten::unknown
    assert.equal(512, c.no_stack.size_kb)
    assert.equal(512 / 7680, c.no_stack.share)
    assert.same({ { name = "aten::unknown", size_kb = 512, count = 1, share = 1.0 } }, c.no_stack.operators)
    assert.equal(4, s.allocations)
    assert.equal(1, s.releases)
    assert.equal(1536, s.leak_suspects.size_kb)
  end)

  it("a release total without a release time hides no other release's peak", function()
    local pt = dir .. "/train/rank0_ascend_pt"
    h.write(pt .. "/profiler_info_0.json", "{}")
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", "[" .. ev("aten::a", "0.0", 1, "a.py(1): a") .. "]")
    -- the first row's release total (100 MB) has no release time: seen at no instant of the file
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", HEADER ..
      "aten::a,10,10,,,,,5,8,5,100,9,,1,NPU:0\n" ..
      "aten::a,20,20,40,40,20,20,6,8,6,50,12,,1,NPU:0\n")
    local c = assert(memory.parse(dir, { jobs = 1 })).ranks[1].summary.components[1]
    assert.same({ allocated_mb = 50, time_ns = 40000, row = 2, at = "release" }, c.peak)
    assert.same({ reserved_mb = 12, time_ns = 40000 }, c.peak_reserved)
  end)

  it("counts a row whose call stack is empty or starts with a blank frame as without a call stack", function()
    local pt = dir .. "/train/rank0_ascend_pt"
    h.write(pt .. "/profiler_info_0.json", "{}")
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", "[" .. table.concat({
      ev("aten::add", "100.0", 100, ""), ev("aten::mul", "100.0", 100, " ;\\r\\nmain.py(3): <module>"),
      ev("aten::sub", "100.0", 100, "a.py(1): f") }, ",") .. "]")
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", HEADER ..
      "aten::add,1024,150,,,,,1,4,1,,,,1,NPU:0\n" ..
      "aten::mul,1024,160,,,,,2,4,2,,,,1,NPU:0\n" ..
      "aten::sub,2048,170,,,,,4,4,4,,,,1,NPU:0\n")
    local r = assert(memory.parse(dir, { jobs = 1 }))
    local c = r.ranks[1].summary.components[1]
    assert.equal(3, r.ranks[1].summary.matched) -- matched, as the reference matches them
    assert.equal(2048, c.no_stack.size_kb)
    assert.equal(0.5, c.no_stack.share)
    assert.same({ "aten::add", "aten::mul" }, { c.no_stack.operators[1].name, c.no_stack.operators[2].name })
    -- no call site named "": the two rows are the keyless one
    local sites = {}
    for _, site in ipairs(c.top_call_sites.sites) do sites[site.call_site] = site.size_kb end
    assert.same({ ["a.py(1): f"] = 2048, ["(no call stack)"] = 2048 }, sites)
    assert.equal(2048, c.live_at_peak.no_stack_kb)
    -- memory_events.csv keeps the stacks as the trace gives them
    local stacks = {}
    for row in r:rows() do stacks[#stacks + 1] = row.call_stack end
    assert.same({ "", " ;\r\nmain.py(3): <module>", "a.py(1): f" }, stacks)
  end)
end)

-- Live at peak by brute force from the CSV text alone (no ascope analysis code), over the rows
-- of one pool (keep(name) says which).
local function brute_live(path, keep)
  local rows = {}
  for _, r in ipairs(h.csv_rows(path)) do
    if keep(r.Name) then rows[#rows + 1] = r end
  end
  local peak, tpeak
  for _, r in ipairs(rows) do
    local a = tonumber(r["Allocation Total Allocated(MB)"])
    if a and (not peak or a > peak) then peak, tpeak = a, r["Allocation Time(us)"] end
  end
  -- compare times as exact decimals: split into integer microseconds and 3-digit fraction
  local function ns(text)
    local w, f = text:match("^%s*(%d+)%.?(%d*)")
    return math.tointeger(tonumber(w)) * 1000 + math.tointeger(tonumber(((f or "") .. "000"):sub(1, 3)))
  end
  local t = ns(tpeak)
  local kb, count = 0, 0
  for _, r in ipairs(rows) do
    local size = tonumber(r["Size(KB)"])
    local st = ns(r["Allocation Time(us)"])
    local d = r["Duration(us)"]
    if size > 0 and st <= t and (d == "" or st + ns(d) > t) then
      kb = kb + size
      count = count + 1
    end
  end
  return peak, t, kb, count
end

describe("memory on real samples", function()
  it("msinsight level0, two ranks: rows and call stacks as the reference rule gives them", function()
    local r = assert(memory.parse(h.real .. "/msinsight_pytorch_text_level0", { jobs = 2 }))
    assert.equal(2, #r.ranks)
    for k, rank in ipairs(r.ranks) do
      assert.equal(k - 1, rank.rank)
      assert.equal("msinsight_pytorch_text_level0", rank.role)
      local s = rank.summary
      -- 184 rows, 76 matched (an independent Python bisect over Decimal times agrees row by row)
      assert.equal(184, s.events)
      assert.equal(76, s.matched)
      assert.equal(24, s.leak_suspects.sites[1] and s.leak_suspects.site_count > 0 and 24 or 0)
      -- two pools with their own totals: 127 PyTorch rows (peak 1187.98 MB, reserved 1452) and
      -- 57 cann:: workspace rows (peak 73.0625 MB, reserved 74.75); awk over the CSV agrees
      assert.same({ "PTA", "GE" }, { s.components[1].component, s.components[2].component })
      local pta, ge = s.components[1], s.components[2]
      assert.same({ 127, 57 }, { pta.events, ge.events })
      assert.equal(1187.9814453125, pta.peak.allocated_mb)
      assert.equal(1452.0, pta.peak_reserved.reserved_mb)
      assert.equal(73.0625, ge.peak.allocated_mb)
      assert.equal(74.75, ge.peak_reserved.reserved_mb)
      assert.equal("PTA", s.peak.component)
      local path = rank.dirs[1] .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
      local function is_ge(name) return name:sub(1, 6) == "cann::" end
      for _, case in ipairs({ { pta, function(n) return not is_ge(n) end }, { ge, is_ge } }) do
        local c = case[1]
        local peak, t, kb, count = brute_live(path, case[2])
        assert.equal(peak, c.peak.allocated_mb)
        assert.equal(t, c.peak.time_ns)
        assert.equal(kb, c.live_at_peak.size_kb)
        assert.equal(count, c.live_at_peak.count)
        assert.equal(peak * 1024 - kb, c.live_at_peak.earlier_kb)
      end
      assert.equal(498238.5, pta.live_at_peak.size_kb)
      assert.equal(41, pta.live_at_peak.count)
      assert.equal(74752.0, ge.live_at_peak.size_kb)
      assert.equal(3, ge.live_at_peak.count)
      -- no cann:: row has a call stack in the trace
      assert.equal(1.0, ge.no_stack.share)
      -- the share without a stack, summed row by row from the attributed rows
      local all, bare, mm = 0, 0, 0
      for row in r:rows() do
        if row.rank_id == rank.rank and row.component == "PTA" and row.size_kb > 0 then
          all = all + row.size_kb
          if row.call_stack == "" then bare = bare + row.size_kb end
          if row.call_stack == "" and row.name == "aten::mm" then mm = mm + row.size_kb end
        end
      end
      assert.near(bare / all, pta.no_stack.share, 1e-12)
      assert.near(0.559388754, pta.no_stack.share, 1e-9)
      assert.same({ "aten::mm", mm }, { pta.no_stack.operators[1].name, pta.no_stack.operators[1].size_kb })
      assert.equal(258711.0, s.leak_suspects.size_kb)
      assert.equal(1460243.5, s.top_call_sites.size_kb)
    end
    assert.equal(1736405443921184280, r.ranks[1].summary.components[1].peak.time_ns)
    assert.equal(1736405443938069830, r.ranks[2].summary.components[1].peak.time_ns)
    local first = r:rows()()
    assert.equal("aten::empty_strided", first.name)
    assert.equal("/home/z30057886/imagenet_script/main.py(350): train", first.call_stack_top)
    assert.equal(1736405443871259720, first.start_ns)
  end)

  it("a rank exported as a database only: the figures of the text export of the same model", function()
    -- db_level2 is another run of the level0 model, exported as ascend_pytorch_profiler_0.db:
    -- every figure the text export gives above comes out the same (sqlite3 on the file agrees on
    -- the peak, 1187.9814453125 MB at ...689196090 ns, and on the stack of the first row)
    local r = assert(memory.parse(h.real .. "/msinsight_pytorch_db_level2", {}))
    assert.equal(1, #r.ranks)
    assert.same({}, r.failed)
    local s = r.ranks[1].summary
    assert.same({ 184, 76 }, { s.events, s.matched })
    local pta, ge = s.components[1], s.components[2]
    assert.same({ "PTA", "GE" }, { pta.component, ge.component }) -- the rows without a stream pointer
    assert.same({ 127, 57 }, { pta.events, ge.events })
    assert.same({ 1187.9814453125, 1452.0, 73.0625, 74.75 },
      { pta.peak.allocated_mb, pta.peak_reserved.reserved_mb, ge.peak.allocated_mb, ge.peak_reserved.reserved_mb })
    assert.equal(1736414119689196090, pta.peak.time_ns)
    assert.same({ 498238.5, 41, 74752.0, 3 },
      { pta.live_at_peak.size_kb, pta.live_at_peak.count, ge.live_at_peak.size_kb, ge.live_at_peak.count })
    assert.equal(258711.0, s.leak_suspects.size_kb)
    assert.equal(1460243.5, s.top_call_sites.size_kb)
    local first = r:rows()()
    assert.same({ "aten::empty_strided", 18816.5, 1736414119641485690 }, { first.name, first.size_kb, first.start_ns })
    assert.equal("/home/z30057886/imagenet_script/main.py(350): train", first.call_stack_top)
    -- its memory_record: MEMORY_RECORD's rows by component (sqlite3's GROUP BY), no APP (the
    -- text file's 13 APP rows have no counterpart in the database)
    local rec, count = r.ranks[1].record, {}
    for i = 1, rec.n do count[rec.component[i]] = (count[rec.component[i]] or 0) + 1 end
    assert.same({ GE = 114, PTA = 381, ["PTA+GE"] = 495 }, count)
    assert.equal(981462016 / 1048576, rec.allocated_mb[1])
    assert.equal("NPU:0", rec.device[1])
  end)

  it("a rank hidden by a profiler_info file it cannot read is failed with that file's error", function()
    local dir = h.tmpdir()
    local rank = dir .. "/role/x_ascend_pt"
    h.copy(h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
      rank .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    h.write(rank .. "/profiler_info.json", '{"rank_id": 0, "trunc')
    local r = assert(memory.parse(dir, {}))
    assert.equal(0, #r.ranks)
    assert.equal(1, #r.failed)
    assert.equal(rank .. ": cannot tell the rank (no profiler_info_<N>.json, no rank_id, no rank number in the folder "
      .. "name); " .. rank .. "/profiler_info.json:1:22 (byte 21): invalid JSON: parse error: premature EOF",
      r.failed[1].reason)
    h.cleanup(dir)
  end)

  it("a database of odd kinds reads as the plain one: text digits, no-number cells, odd chain ids, twice-named ids", function()
    -- hostile/memory_odd.db is db_level0's memory tables with OP_MEMORY.allocationTime declared
    -- TEXT (digits), row 5's size 'abc' and name an id STRING_IDS lacks, three PYTORCH_CALLCHAINS rows whose ids are NULL, 0.5
    -- and 'x', STRING_IDS without a key naming the first row's name id twice, no MEMORY_RECORD
    local function run(db)
      local dir = h.tmpdir()
      h.copy(db, dir .. "/r/x_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db")
      h.write(dir .. "/r/x_ascend_pt/profiler_info_0.json", '{"rank_id": 0}')
      local r = assert(memory.parse(dir, {}))
      h.cleanup(dir)
      return r
    end
    local plain = run(h.real .. "/msinsight_pytorch_db_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
      .. "ascend_pytorch_profiler_0.db")
    local odd = run(h.fixtures .. "/hostile/memory_odd.db")
    assert.same({}, odd.failed)
    assert.same({}, odd.ranks[1].problems)
    assert.is_nil(odd.ranks[1].record) -- no MEMORY_RECORD: no process memory, not a failure
    local warned = {}
    for k, w in ipairs(odd.ranks[1].warnings) do warned[k] = w:gsub("^.*/r/", "") end
    assert.same({ "x_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db: 1 value(s) are not numbers and "
      .. "were left empty; first: table OP_MEMORY, row 5, column size: 'abc'",
      "x_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db: 1 row(s) of OP_MEMORY hold in column name a "
      .. "string id STRING_IDS does not name: those names are empty" }, warned)
    local a, b = {}, {}
    for row in plain:rows() do a[#a + 1] = row end
    for row in odd:rows() do b[#b + 1] = row end
    assert.equal(184, #b)
    local differ = {}
    for k = 1, #a do
      for _, f in ipairs({ "name", "call_stack", "start_ns", "size_kb", "total_allocated_mb" }) do
        if a[k][f] ~= b[k][f] then differ[#differ + 1] = k .. " " .. f end
      end
    end
    -- the 'abc' row only: its size is left empty, its name too, and without a name no
    -- operator's stack is matched to it (row 5 of the table is the 7th in time)
    assert.same({ "7 name", "7 call_stack", "7 size_kb" }, differ)
    assert.same({ "", nil }, { b[7].name, b[7].size_kb })
    assert.equal(plain.ranks[1].summary.matched - 1, odd.ranks[1].summary.matched) -- that row
  end)

  it("a database whose call chains are stored out of order gives the stacks of the ordered one", function()
    -- hostile/chains_shuffled.db is db_level0's memory tables with PYTORCH_CALLCHAINS written
    -- deepest frame first, chains backwards: the rows must be sorted before they are joined
    local memory_db = require "ascope.ascend.memory_db"
    local plain = assert(memory_db.call_stacks(h.real .. "/msinsight_pytorch_db_level0/rank0_ascend_pt/"
      .. "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"))
    local shuffled = assert(memory_db.call_stacks(h.fixtures .. "/hostile/chains_shuffled.db"))
    assert.equal(316, shuffled.n)
    assert.is_nil(shuffled.note)
    for _, f in ipairs({ "name", "ts", "dur", "stack" }) do assert.same(plain[f]:totable(), shuffled[f]:totable(), f) end
    -- the first operator's stack, innermost frame first: chain 0's 12 frames (sqlite3 on the
    -- file, ORDER BY stackDepth)
    local frames = require("ascope.ascend.trace").frames(shuffled.stack[1])
    assert.equal(12, #frames)
    assert.equal("/home/z30057886/.local/lib/python3.9/site-packages/torch/_ops.py(692): __call__", frames[1])
    assert.equal("<string>(1): <module>", frames[12])
  end)

  it("a database whose chains name no frame gives empty stacks and counts the unnamed frames", function()
    -- hostile/chains_unnamed.db: chain 0 = frames NULL (depth 0) and 99 (depth 1), chain 1 =
    -- frame 98; STRING_IDS names none of them
    local cs = assert(require("ascope.ascend.memory_db").call_stacks(h.fixtures .. "/hostile/chains_unnamed.db"))
    assert.equal(2, cs.n)
    assert.same({ 1000, 2000 }, cs.ts:totable())
    assert.same({ ";\r\n", "" }, cs.stack:totable())
    -- the NULL frame is said apart from the two ids STRING_IDS lacks
    assert.equal("1 row(s) of PYTORCH_CALLCHAINS hold no usable string id in column stack (none, no whole number, "
      .. "or -2^63): those frames are empty; "
      .. "2 row(s) of PYTORCH_CALLCHAINS hold in column stack a string id STRING_IDS does not name: those "
      .. "names are empty", cs.note)
  end)

  it("a database's operators are PYTORCH_API's rows of type op, as ENUM_API_TYPE names it", function()
    -- hostile/api_types.db: an op row on chain 1, a trace row and a queue row with chains of their own
    local cs = assert(require("ascope.ascend.memory_db").call_stacks(h.fixtures .. "/hostile/api_types.db"))
    assert.equal(1, cs.n)
    assert.same({ "aten::empty" }, cs.name:totable())
    assert.same({ 1000 }, cs.ts:totable())
    assert.same({ "a.py(1): f" }, cs.stack:totable())
  end)

  it("a database's frames of odd kinds: a number as text, the least id as none, a depth that is no number last", function()
    -- hostile/frames_odd.db: chain 0's rows in table order (frame 4, depth 'abc'), (3, 0), (2, 1),
    -- (-2^63, 2); STRING_IDS without TEXT affinity names 2 by the integer 42, -2^63 by a text
    local cs = assert(require("ascope.ascend.memory_db").call_stacks(h.fixtures .. "/hostile/frames_odd.db"))
    assert.equal(1, cs.n)
    assert.equal("a.py(1): f;\r\n42;\r\n;\r\njunk.py(3): c", cs.stack[1])
    assert.equal("1 row(s) of PYTORCH_CALLCHAINS hold no usable string id in column stack (none, no whole number, "
      .. "or -2^63): those frames are empty", cs.note)
  end)

  it("a database's chain ids and depths of odd kinds keep every operator on its own stack", function()
    -- hostile/chains_odd_ids.db: chain 5 = (frame 3, depth 1), (frame 2, depth '0' as TEXT), in
    -- that order; chain -2^63 = frame 5; chain 7 = frame 4. Operators at 1000, 2000, 3000 ns on
    -- chains 5, -2^63, 7. The least integer is no chain (the join reads it as no id), so its
    -- operator is left out, and chain 7 stays the third operator's.
    local cs = assert(require("ascope.ascend.memory_db").call_stacks(h.fixtures .. "/hostile/chains_odd_ids.db"))
    assert.equal(2, cs.n)
    assert.same({ 1000, 3000 }, cs.ts:totable())
    assert.same({ "f0.py(1): a;\r\nf1.py(2): b", "g.py(3): c" }, cs.stack:totable())
    assert.is_nil(cs.note)
  end)

  it("a database whose shared frames would expand past the budget leaves the stacks out, and says so", function()
    local memory_db = require "ascope.ascend.memory_db"
    local db = h.real .. "/msinsight_pytorch_db_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    local whole = assert(memory_db.call_stacks(db))
    assert.is_nil(whole.warning)
    -- 316 PYTORCH_API rows have a chain; the chains' frames take 384837 bytes (sqlite3 on the file)
    assert.equal(316, whole.n)
    -- the real budget is 256 MiB + 8 x the file; one of 200000 bytes stops there
    local budget = memory_db.stack_budget
    memory_db.stack_budget = function() return 200000 end
    local ok, cut = pcall(memory_db.call_stacks, db)
    memory_db.stack_budget = budget
    assert(ok, cut)
    assert.equal(0, cut.n)
    assert.equal("the call stacks would take more than 0.2 MiB (chains that share long frames, each written out whole): "
      .. "call stacks", cut.warning)
  end)

  it("a database without OP_MEMORY is a failed rank naming the file and the table; no call chains, no stacks", function()
    local dir = h.tmpdir()
    local db = h.real .. "/msinsight_pytorch_db_level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db"
    local rank = dir .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    local f = assert(io.open(db, "rb"))
    h.write(rank .. "/ascend_pytorch_profiler_0.db", f:read("a"))
    f:close()
    h.write(dir .. "/rank0_ascend_pt/profiler_info_0.json", '{"rank_id": 0}')
    local r = assert(memory.parse(dir, {}))
    assert.equal(1, #r.failed)
    assert.equal(rank .. "/ascend_pytorch_profiler_0.db: no OP_MEMORY table (is this an ascend_pytorch_profiler .db?)",
      r.failed[1].reason)
    -- a database without call chains gives no operator, and says why
    local cs = assert(require("ascope.ascend.memory_db").call_stacks(db))
    assert.equal(0, cs.n)
    assert.equal("no PYTORCH_API table (the profiler ran without with_stack): call stacks", cs.warning)
    h.cleanup(dir)
  end)

  it("a role profiled without memory is left out with a warning; a rank of a memory role without it fails", function()
    -- rl-insight: memory_data has operator_memory.csv; the four mstx roles' folders have none
    local r = assert(memory.parse(h.real .. "/rl-insight", {}))
    assert.same({ 1, 0 }, { #r.ranks, #r.failed })
    assert.equal("memory_data", r.ranks[1].role)
    assert.same({ "role actor_compute_log_prob: none of its 1 rank(s) has operator_memory.csv (profiled without "
      .. "memory?): left out, the other roles are read" }, { r.unprofiled[1] })
    assert.equal(4, #r.unprofiled)
    local dir = h.tmpdir()
    local code, _, err = h.run("memory", h.real .. "/rl-insight", "-o", dir .. "/o", "-q")
    assert.equal(0, code, err)
    assert.truthy(err:find("[WARNING] role actor_update: none of its 1 rank(s)", 1, true), err)
    -- a role whose other rank has the file: the rank without it is a failed rank, as ever
    local src = h.real .. "/msinsight_pytorch_text_level0"
    h.copy(src .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
      dir .. "/job/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    h.copy(src .. "/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
      dir .. "/job/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv")
    local r2 = assert(memory.parse(dir, {}))
    assert.same({ 1, 1, 0 }, { #r2.ranks, #r2.failed, #r2.unprofiled })
    assert.truthy(r2.failed[1].reason:find("operator_memory.csv is missing", 1, true), r2.failed[1].reason)
    h.cleanup(dir)
  end)

  it("rl-insight memory_data: quoted times with tabs, rank_id as a string, role from the folder", function()
    local r = assert(memory.parse(h.real .. "/rl-insight/memory_data", { jobs = 1 }))
    assert.equal(1, #r.ranks)
    local rank = r.ranks[1]
    assert.equal(0, rank.rank)
    assert.equal("memory_data", rank.role)
    assert.equal(49, rank.summary.events)
    assert.equal(49, rank.summary.matched)
    assert.equal(1779785515596661420, rank.start_ns[1])
    assert.equal(151491310310, rank.dur_ns[1])
    assert.equal("rl_insight/train.py(42): train_step", rank.top[3])
  end)

  it("one pool (rl-insight): the component's summary is the one its rows give when read through them", function()
    local analysis = require "ascope.analysis.memory"
    local rank = assert(memory.parse(h.real .. "/rl-insight/memory_data", { jobs = 1 })).ranks[1]
    -- the release totals the peak reads are dropped from the result: read again from the file
    local csv = assert(require("ascope.ascend.memory_csv").read(rank.dirs[1] .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv"))
    rank.rel_allocated_mb, rank.rel_reserved_mb = csv.rel_allocated_mb, csv.rel_reserved_mb
    local all = {}
    for i = 1, rank.n do all[i] = i end
    local comp = rank.summary.components[1]
    assert.equal(1, #rank.summary.components)
    local by_rows = analysis.summarize_component(rank, core.column.new("integer", all), 20)
    for _, k in ipairs({ "events", "allocations", "peak", "peak_reserved", "live_at_peak", "top_call_sites",
                         "leak_suspects", "no_stack" }) do
      assert.same(by_rows[k], comp[k], k)
    end
    assert.equal(49, comp.top_call_sites.sites[1] and comp.events)
    assert.is_true(comp.top_call_sites.site_count > 0 and comp.peak.allocated_mb > 0)
  end)

  it("legacy 2023/2024 files: 10- and 15-column headers, rank from the folder name, no trace", function()
    local r = assert(memory.parse(h.real .. "/msinsight_legacy_2023_2024", { jobs = 2 }))
    assert.equal(2, #r.ranks)
    assert.equal(28, r.ranks[1].n)
    assert.equal(21, r.ranks[2].n)
    assert.equal(1, r.ranks[2].rank)            -- test_rank_1 has no profiler_info
    assert.is_nil(r.ranks[1].active_mb[1])       -- legacy: no Active column
    assert.equal(192.0, r.ranks[1].size_kb[1])
    assert.equal(1695115378723902500, r.ranks[1].start_ns[1])
    assert.truthy(r.ranks[1].warnings[1]:find("trace_view.json is missing", 1, true))
    assert.equal(0, r.ranks[1].summary.matched)
    -- rank 1's PTA peak is a release's total, 3469.5556640625 MB at 1706704429253692.904 us,
    -- above every Allocation Total Allocated(MB) (3273.61962890625 at its largest)
    local peak = r.ranks[2].summary.components[1].peak
    assert.same({ 3469.5556640625, 1706704429253692904, "release" }, { peak.allocated_mb, peak.time_ns, peak.at })
  end)
end)

describe("memory with bad input", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  local function rank_dir(role, rank, with_trace)
    local pt = ("%s/%s/rank%d_ascend_pt"):format(dir, role, rank)
    h.write(pt .. "/profiler_info_" .. rank .. ".json", "{}")
    h.copy(h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
      pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    if with_trace then
      h.copy(h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json")
    end
    return pt
  end

  it("reports a rank without operator_memory.csv or with a truncated trace, and writes the others", function()
    rank_dir("train", 0, true)
    local gone = rank_dir("train", 1, true)
    os.remove(gone .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    local cut = rank_dir("train", 2, false)
    h.copy(h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
      cut .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", 50000)
    rank_dir("train", 3, false)
    local code, out, err = h.run("memory", dir, "-o", dir .. "/out", "-j", "2")
    assert.equal(1, code)
    assert.truthy(err:find("rank 1 (train): operator_memory.csv is missing", 1, true), err)
    assert.truthy(err:find("rank 2 (train) is partial: " .. cut .. "/ASCEND_PROFILER_OUTPUT/trace_view.json:", 1, true), err)
    assert.truthy(err:find("byte 50000", 1, true))
    assert.truthy(err:find("trace_view.json is missing, call stacks stay empty", 1, true))
    -- the cut rank keeps its 184 rows, attributed with the events before the cut
    assert.truthy(out:find("3 rank(s), 552 events", 1, true))
    local rows = h.csv_rows(dir .. "/out/memory_events.csv")
    assert.equal(552, #rows)
    local summary = core.json.load(dir .. "/out/memory_summary.json")
    assert.equal(1, #summary.failed)
    assert.equal(1, summary.failed[1].rank)
    assert.equal(2, summary.ranks[2].rank)
    assert.is_true(summary.ranks[2].partial)
    assert.truthy(summary.ranks[2].problems[1]:find("byte 50000", 1, true))
    assert.is_nil(summary.ranks[1].partial)
  end)

  it("names the missing column", function()
    local pt = rank_dir("train", 0, false)
    local p = pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
    h.write(p, "Name,Size(KB),Duration(us),Allocation Total Allocated(MB),Device Type\naten::x,1,,1,NPU:0\n")
    local code, _, err = h.run("memory", dir, "-o", dir .. "/out", "-q")
    assert.equal(1, code)
    assert.truthy(err:find("lacks required columns: Allocation Time(us) (in " .. p .. ")", 1, true), err)
  end)

  it("reads several collections of one rank in the order of the times in their names", function()
    local later = dir .. "/train/host_12_20260101120000123_ascend_pt"
    local earlier = dir .. "/train/20251231_235959_ascend_pt"
    for _, pt in ipairs({ later, earlier }) do
      h.write(pt .. "/profiler_info_3.json", "{}")
      h.copy(h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    end
    local r = assert(memory.parse(dir, { jobs = 1 }))
    assert.equal(1, #r.ranks)
    assert.same({ earlier, later }, r.ranks[1].dirs)
    assert.equal(368, r.ranks[1].n)
    assert.equal(3, r.ranks[1].rank)
  end)

  it("says so when there is nothing to read", function()
    local code, _, err = h.run("memory", dir, "-o", dir .. "/out")
    assert.equal(1, code)
    assert.truthy(err:find("no profiling data found under " .. dir, 1, true))
  end)
end)

describe("ascope memory command line", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("puts a peak that several rows show at the earliest of their instants, in either file", function()
    -- rows in allocation order: b's release (60 us) shows the 500 MB that a's allocation shows at
    -- 100 us; memory_record.csv shows its 900 MB at 300 us and, written after it, at 100 us
    local out = dir .. "/in/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
    h.write(out .. "operator_memory.csv", HEADER
      .. "aten::b,1,10,60,60,50,50,200,700,200,500,700,500,1,NPU:0\n"
      .. "aten::a,1,100,200,200,100,100,500,700,500,300,600,300,1,NPU:0\n")
    h.write(out .. "memory_record.csv", "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),"
      .. "Total Active(MB),Stream Ptr,Device Type\nPTA,300,900,950,900,1,NPU:0\nPTA,100,900,950,900,1,NPU:0\n"
      .. "PTA,200,400,950,400,1,NPU:0\n")
    assert.equal(0, (h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")))
    local s = core.json.load(dir .. "/out/memory_summary.json").ranks[1]
    local pta = s.components[1]
    assert.same({ 500, "release", "0.06" }, { pta.peak.allocated_mb, pta.peak.seen_at, pta.peak.time_ms })
    -- reserved: 700 at b's allocation (10 us), its release and a's allocation after it
    assert.same({ 700, "0.01" }, { pta.peak_reserved.reserved_mb, pta.peak_reserved.time_ms })
    local rec = s.memory_record[1]
    assert.same({ 900, "0.1", 950, "0.1" }, { rec.peak_allocated_mb, rec.peak_allocated_time_ms, rec.peak_reserved_mb,
                                              rec.peak_reserved_time_ms })
  end)

  it("the rank's peak is the pool's that reached it first; a row without its time shows no peak", function()
    -- PTA reaches 500 MB at 900 us, listed before GE (cann::) reaching 500 MB at 400 us; a
    -- 700 MB row without an Allocation Time shows it at no instant: PTA's peak is its 500
    local out = dir .. "/in/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
    h.write(out .. "operator_memory.csv", HEADER
      .. "aten::x,1,,,,,,700,800,700,,,,1,NPU:0\n"
      .. "aten::a,1,900,1000,1000,100,100,500,800,500,400,800,400,1,NPU:0\n"
      .. "cann::b,1,400,1000,1000,600,600,500,600,500,100,600,100,,NPU:0\n")
    assert.equal(0, (h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")))
    local s = core.json.load(dir .. "/out/memory_summary.json").ranks[1]
    local peaks = {}
    for _, c in ipairs(s.components) do peaks[c.component] = c.peak and { c.peak.allocated_mb, c.peak.time_ms } end
    assert.same({ PTA = { 500, "0.9" }, GE = { 500, "0.4" } }, peaks)
    assert.same({ 500, "GE", "0.4" }, { s.peak.allocated_mb, s.peak.component, s.peak.time_ms })
  end)

  it("takes the reference tool's spelling and --rank-list / --role filters", function()
    local code, out = h.run("memory", "--input-path", h.real .. "/msinsight_pytorch_text_level0",
      "--input-type", "ascend_memory", "--profiler-type", "memory", "--output-path", dir, "--rank-list", "1", "-q")
    assert.equal(0, code)
    assert.truthy(out:find("rank 1 (msinsight_pytorch_text_level0)", 1, true))
    assert.falsy(out:find("rank 0 (", 1, true))
    local code2, out2 = h.run("memory", h.real .. "/msinsight_pytorch_text_level0", "-o", dir,
      "--role", "nobody", "-q")
    assert.equal(1, code2)
    assert.falsy(out2:find("rank 0", 1, true))
  end)

  it("writes the same files with one job as with one process per rank and per output", function()
    local input = h.real .. "/msinsight_pytorch_text_level0"
    for _, j in ipairs({ "1", "2", "4" }) do
      local code = h.run("memory", input, "-o", dir .. "/j" .. j, "-j", j, "-q")
      assert.equal(0, code)
    end
    for _, f in ipairs({ "memory_events.csv", "memory_trace.json", "memory_summary.json", "memory_report.md",
                         "memory_report.html" }) do
      local one = h.read(dir .. "/j1/" .. f)
      assert.truthy(#one > 1000, f)
      assert.equal(one, h.read(dir .. "/j2/" .. f), f)
      assert.equal(one, h.read(dir .. "/j4/" .. f), f)
    end
  end)

  it("rejects unknown options and bad values with exit code 2", function()
    local code, _, err = h.run("memory", h.real, "--frobnicate")
    assert.equal(2, code)
    assert.truthy(err:find("unknown option --frobnicate", 1, true))
    local code2, _, err2 = h.run("memory", h.real, "--match", "nearest")
    assert.equal(2, code2)
    assert.truthy(err2:find("latest, within, within-or-latest", 1, true))
    local code3, _, err3 = h.run("memory", h.real, "--rank-list", "3-1")
    assert.equal(2, code3)
    assert.truthy(err3:find("runs backwards", 1, true))
  end)

  it("writes a Chrome trace with counters, slices and deduplicated stack frames", function()
    local code = h.run("memory", h.real .. "/rl-insight/memory_data", "-o", dir, "-q")
    assert.equal(0, code)
    local t = assert(core.json.load(dir .. "/memory_trace.json"))
    local problems, seen = trace_check.check(t)
    assert.same({}, problems)
    local last, begins, never = 0, {}, {}
    for _, e in ipairs(t.traceEvents) do
      if e.ts and e.ts > last then last = e.ts end
      if e.ph == "b" then begins[#begins + 1] = e end
      if (e.ph == "b" or e.ph == "e") and e.args and e.args.never_released then never[#never + 1] = e end
    end
    -- 49 rows, all allocations; one has no Release Time: it runs to the end of the trace
    assert.equal(49, seen.b)
    assert.equal(49, seen.e)
    assert.equal(2, #never)
    assert.equal(last, never[1].ph == "e" and never[1].ts or never[2].ts)
    -- allocated, reserved and active of the 49 rows, on the PTA pool's tracks
    assert.equal(49, #seen.counters["1/PTA operators allocated"])
    assert.equal(49, #seen.counters["1/PTA operators active"])
    assert.equal(147, seen.C)
    local frame = t.stackFrames[begins[1].sf]
    assert.truthy(frame.name:find("%.py%(%d+%)"))
    local md = h.read(dir .. "/memory_report.md")
    -- the peak is a release's total: 20138.58544921875 MB in Release Total Allocated(MB) at
    -- 1779785665728627.91 us, above every allocation's (19207.61279296875 MB at its largest);
    -- reserved likewise, 27928.0 against 21216.0 (python's csv module on the file). Two
    -- releases show 27928.0: file line 2's at 1779785667087971.73 us and line 3's, 1.36 s
    -- earlier, at 1779785665728627.91 us; the peak was reached at the earlier one
    assert.truthy(md:find("### PTA\n\nPeak 20138.58544921875 MB allocated at 1779785665728.62791 ms (reserved peaks "
      .. "at 27928.0 MB)", 1, true), md)
    assert.truthy(md:find("The peak is a release's total", 1, true))
    local pta = core.json.load(dir .. "/memory_summary.json").ranks[1].components[1]
    assert.same({ 20138.58544921875, "release" }, { pta.peak.allocated_mb, pta.peak.seen_at })
    assert.same({ 27928.0, "1779785665728.62791" }, { pta.peak_reserved.reserved_mb, pta.peak_reserved.time_ms })
    -- values keep the digits of the input: 19071.60547 is not printed as 19071.605470
    local rows = h.csv_rows(dir .. "/memory_events.csv")
    assert.equal("19071.60547", rows[5].total_allocated_mb)
  end)

  it("the trace and the summary call the same rows never released: those without a Duration", function()
    local pt = dir .. "/in/train/rank0_ascend_pt"
    h.write(pt .. "/profiler_info_0.json", "{}")
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", "[" .. ev("aten::a", "0.0", 1, "a.py(1): a") .. "]")
    -- a Release Time without a Duration, a Duration without a Release Time, and both
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", HEADER ..
      "aten::a,10,10,500,,,,1,8,1,,,,1,NPU:0\n" ..
      "aten::a,20,20,,,1000,,2,8,2,,,,1,NPU:0\n" ..
      "aten::a,30,30,40,40,10,10,3,8,3,,,,1,NPU:0\n")
    assert.equal(0, (h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")))
    local s = core.json.load(dir .. "/out/memory_summary.json").ranks[1]
    assert.equal(10, s.leak_suspects.size_kb)
    local t = assert(core.json.load(dir .. "/out/memory_trace.json"))
    assert.same({}, (trace_check.check(t)))
    local slices = {}
    for _, e in ipairs(t.traceEvents) do
      if e.ph == "b" or e.ph == "e" then
        local sl = slices[e.id] or {}
        slices[e.id] = sl
        sl[e.ph] = e.ts
        if e.ph == "b" then sl.size, sl.never = e.args.size_kb, e.args.never_released or false end
      end
    end
    local by_size = {}
    for _, sl in pairs(slices) do by_size[sl.size] = { sl.b, sl.e, sl.never } end
    -- the row with a Duration runs its 1000 us; the one without runs to the trace's last instant
    assert.same({ 10, 1020, true }, by_size[10])
    assert.same({ 20, 1020, false }, by_size[20])
    assert.same({ 30, 40, false }, by_size[30])
  end)
end)

-- Rows of a CSV file as text, counted by the value of one column where another is not empty
-- (read with plain string functions, independent of ascope's reader).
local function count_by(path, key, value_col)
  local counts, header = {}, nil
  for line in io.lines(path) do
    local cells = {}
    for cell in (line .. ","):gmatch("([^,]*),") do cells[#cells + 1] = cell end
    if not header then
      header = {}
      for i, c in ipairs(cells) do header[c] = i end
    elseif cells[header[value_col]]:match("%d") then
      local k = cells[header[key]]
      counts[k] = (counts[k] or 0) + 1
    end
  end
  return counts
end

describe("memory on real samples: what surrounds the rows", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  local level0 = h.real .. "/msinsight_pytorch_text_level0"

  it("rl-insight --match within: no row gets a stack, all 49 rows are kept (0%, not an error)", function()
    local code, out, err = h.run("memory", h.real .. "/rl-insight/memory_data", "-o", dir, "--match", "within", "-q")
    assert.equal(0, code, err)
    assert.truthy(out:find("49 events, 49 allocations, match 0.0% (within)", 1, true), out)
    local rows = h.csv_rows(dir .. "/memory_events.csv")
    assert.equal(49, #rows)
    assert.equal("", rows[1].call_stack)
    local s = core.json.load(dir .. "/memory_summary.json").ranks[1]
    assert.equal(0, s.match.matched)
    assert.equal(1.0, s.components[1].without_stack.share)
  end)

  it("times that are not times (NaN, 1e400) leave rows without a match, never an error", function()
    local pt = dir .. "/in/train/rank0_ascend_pt"
    h.write(pt .. "/profiler_info_0.json", "{}")
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", HEADER ..
      "aten::empty,1024,NaN,,,,,10,20,10,,,,1,NPU:0\n" ..
      "aten::empty,2048,1e400,,,,,12,20,12,,,,1,NPU:0\n")
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", "[" .. ev("aten::empty", "1000.0", 5, "a.py(1): f") .. "]")
    local code, out, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(0, code, err)
    assert.truthy(out:find("2 events, 2 allocations, match 0.0% (latest)", 1, true), out)
    assert.truthy(err:find('1 value(s) are not numbers and were left empty; first: ' .. pt
      .. '/ASCEND_PROFILER_OUTPUT/operator_memory.csv:3: column "Allocation Time(us)": "1e400" is not a time', 1, true), err)
    assert.equal(2, #h.csv_rows(dir .. "/out/memory_events.csv"))
  end)

  it("a copy of level0 whose rank-1 trace is cut keeps all 368 rows, names the byte, exits 1", function()
    for r = 0, 1 do
      local from = ("%s/rank%d_ascend_pt"):format(level0, r)
      local to = ("%s/in/rank%d_ascend_pt"):format(dir, r)
      h.copy(from .. "/profiler_info_" .. r .. ".json", to .. "/profiler_info_" .. r .. ".json")
      for _, f in ipairs({ "operator_memory.csv", "memory_record.csv" }) do
        h.copy(from .. "/ASCEND_PROFILER_OUTPUT/" .. f, to .. "/ASCEND_PROFILER_OUTPUT/" .. f)
      end
      h.copy(from .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", to .. "/ASCEND_PROFILER_OUTPUT/trace_view.json",
        r == 1 and 300000 or nil)
    end
    local code, out, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(1, code)
    assert.truthy(out:find("2 rank(s), 368 events", 1, true), out)
    assert.truthy(err:find("rank 1 (in) is partial: " .. dir .. "/in/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", 1, true), err)
    assert.truthy(err:find("(byte 300000)", 1, true), err)
    assert.equal(368, #h.csv_rows(dir .. "/out/memory_events.csv"))
    local s = core.json.load(dir .. "/out/memory_summary.json")
    assert.equal(0, #s.failed)
    assert.is_nil(s.ranks[1].partial)
    assert.is_true(s.ranks[2].partial)
    -- rank 1 is attributed with the events before the cut: as many matches as a whole trace made
    -- of the complete events of those 300000 bytes gives
    assert.equal(76, s.ranks[1].match.matched)
    local text = h.read(level0 .. "/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"):sub(1, 300000)
    local last
    for pos in text:gmatch('()}}, {"ph"') do last = pos end
    h.write(dir .. "/in/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", text:sub(1, last + 1) .. "]")
    local whole = assert(memory.parse(dir .. "/in", { jobs = 1 }))
    assert.same({}, whole.ranks[2].problems)
    assert.equal(whole.ranks[2].matched, s.ranks[2].match.matched)
    assert.equal(51, s.ranks[2].match.matched)
  end)

  it("level0: no counter track mixes the PTA and GE pools; memory_record.csv gives one track per component", function()
    local code = h.run("memory", level0, "-o", dir, "-q", "--format", "trace,json")
    assert.equal(0, code)
    local problems, seen = trace_check.check(assert(core.json.load(dir .. "/memory_trace.json")))
    assert.same({}, problems)
    local c = seen.counters
    -- operator rows: PTA totals are reserved 1452 MB throughout, GE 74.75 MB; GE rows have no Active
    for pid = 1, 2 do
      local function values(track)
        local set = {}
        for _, v in ipairs(c[pid .. "/" .. track] or {}) do set[v] = true end
        return set
      end
      assert.same({ [1452] = true }, values("PTA operators reserved"))
      assert.same({ [74.75] = true }, values("GE operators reserved"))
      assert.equal(127, #c[pid .. "/PTA operators allocated"])
      assert.equal(57, #c[pid .. "/GE operators allocated"])
      assert.is_nil(c[pid .. "/GE operators active"])
      -- memory_record.csv: one sample per row that has the value, counted from the CSV text
      local path = ("%s/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv"):format(level0, pid - 1)
      for _, series in ipairs({ { "allocated", "Total Allocated(MB)" }, { "reserved", "Total Reserved(MB)" },
                                { "active", "Total Active(MB)" } }) do
        local want = count_by(path, "Component", series[2])
        for _, comp in ipairs({ "APP", "PTA", "GE", "PTA+GE" }) do
          local got = c[pid .. "/" .. comp .. " " .. series[1]]
          assert.equal(want[comp], got and #got or nil, comp .. " " .. series[1])
        end
      end
    end
    assert.equal(13, #c["1/APP reserved"])
    assert.is_nil(c["1/APP allocated"])
    -- every allocation is one async slice; the never-released ones end at the last instant
    assert.equal(368, seen.b)
    assert.equal(368, seen.e)
    local summary = core.json.load(dir .. "/memory_summary.json")
    local rec = summary.ranks[1].memory_record
    assert.same({ "APP", "PTA", "PTA+GE", "GE" }, { rec[1].component, rec[2].component, rec[3].component, rec[4].component })
    assert.equal(2109.6015625, rec[1].peak_reserved_mb)
    assert.is_nil(rec[1].peak_allocated_mb)
    assert.equal(1187.9814453125, rec[2].peak_allocated_mb)
    assert.equal(1188.1064453125, rec[3].peak_allocated_mb)
    assert.equal(73.0625, rec[4].peak_allocated_mb)
    assert.equal(74.75, rec[4].peak_reserved_mb)
  end)

  it("an unreadable memory_record.csv marks the rank partial and keeps its rows", function()
    local pt = dir .. "/in/train/rank0_ascend_pt"
    h.copy(level0 .. "/rank0_ascend_pt/profiler_info_0.json", pt .. "/profiler_info_0.json")
    h.copy(level0 .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv", pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    local rec = pt .. "/ASCEND_PROFILER_OUTPUT/memory_record.csv"
    h.write(rec, "Kind,Timestamp(us),Total Reserved(MB)\nAPP,1,2\n")
    local code, out, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(1, code)
    assert.truthy(out:find("1 rank(s), 184 events", 1, true), out)
    assert.truthy(err:find("rank 0 (train) is partial: " .. rec, 1, true), err)
    assert.truthy(err:find("Component", 1, true), err)
    assert.truthy(err:find("memory_record.csv is left out, the operator rows are kept", 1, true), err)
    assert.equal(184, #h.csv_rows(dir .. "/out/memory_events.csv"))
  end)

  it("memory_record.csv with the legacy header: no Active column, so no active peak", function()
    local r = assert(memory.parse(h.real .. "/msinsight_legacy_2023_2024", { jobs = 1 }))
    local rec = r.ranks[1].summary.record
    assert.same({ "APP", "PTA", "PTA+GE", "GE" }, { rec[1].component, rec[2].component, rec[3].component, rec[4].component })
    assert.equal(4599.86572265625, rec[2].peak_allocated_mb)
    assert.equal(11224.375, rec[1].peak_reserved_mb)
    assert.is_nil(rec[2].peak_active_mb)
    assert.equal(0.25, rec[4].peak_allocated_mb)
  end)

  it("the same rank folder reached twice (a symlink, a copy) is read once, with a warning", function()
    local src = level0 .. "/rank0_ascend_pt"
    local a = dir .. "/in/a/rank0_ascend_pt"
    h.copy(src .. "/profiler_info_0.json", a .. "/profiler_info_0.json")
    h.copy(src .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", a .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    local b = dir .. "/in/b/rank0_ascend_pt" -- a copy: same profiler identity
    h.copy(src .. "/profiler_info_0.json", b .. "/profiler_info_0.json")
    h.copy(src .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", b .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    assert.is_true(os.execute(("ln -s %s %s/in/a/link_ascend_pt"):format(a, dir)))
    local r = assert(memory.parse(dir .. "/in", { jobs = 1 }))
    assert.equal(1, #r.ranks)
    assert.equal(184, r.ranks[1].n)
    assert.equal(2, #r.duplicates)
    local code, out, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(0, code)
    assert.truthy(out:find("1 rank(s), 184 events", 1, true), out)
    -- folders come in (role, rank, name) order: the link is met first and stands for the others
    local link = dir .. "/in/a/link_ascend_pt"
    assert.truthy(err:find(a .. " is the same rank folder as " .. link .. " (real path " .. a .. "); read once", 1, true), err)
    assert.truthy(err:find(b .. " is the same rank folder as " .. link .. " (profiler profiler_info_0.json (rank 0", 1, true), err)
  end)

  it("suggests within-or-latest only when it changes rows, with their number", function()
    -- a same-name operator still runs (1000..6000 us) when the latest one (2000..2010) has ended
    local pt = dir .. "/in/train/rank0_ascend_pt"
    h.write(pt .. "/profiler_info_0.json", "{}")
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", "[" .. table.concat({
      ev("aten::empty", "1000.0", 5000, "long.py(1): f"), ev("aten::empty", "2000.0", 10, "short.py(2): g") }, ",") .. "]")
    h.write(pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", HEADER ..
      "aten::empty,1024,3000,,,,,10,20,10,,,,1,NPU:0\n" ..
      "aten::empty,1024,7000,,,,,11,20,11,,,,1,NPU:0\n")
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(0, code)
    assert.truthy(err:find("rank 0: 2 of 2 'latest' matches point at an operator that had already ended; "
      .. "--match within-or-latest would attribute 1 row(s) to an operator still running", 1, true), err)
    -- the count is the number of rows the two modes attribute differently
    local function tops(mode)
      local out = {}
      for row in assert(memory.parse(dir .. "/in", { jobs = 1, match = mode })):rows() do out[#out + 1] = row.call_stack_top end
      return out
    end
    assert.same({ "short.py(2): g", "short.py(2): g" }, tops("latest"))
    assert.same({ "long.py(1): f", "short.py(2): g" }, tops("within-or-latest"))
    -- --match within: within-or-latest would give the second row the stack within leaves it without
    assert.same({ "long.py(1): f", "" }, tops("within"))
    local within = assert(memory.parse(dir .. "/in", { jobs = 1, match = "within" })).ranks[1].summary
    assert.equal(1, within.changed_by_fallback)
    -- level0 has 7 suspect matches, but within-or-latest would change none of them: no hint
    local code2, _, err2 = h.run("memory", level0, "-o", dir .. "/l0", "-q")
    assert.equal(0, code2)
    assert.falsy(err2:find("within-or-latest", 1, true), err2)
    local latest, both = {}, {}
    for row in assert(memory.parse(level0, { jobs = 1 })):rows() do latest[#latest + 1] = row.call_stack end
    for row in assert(memory.parse(level0, { jobs = 1, match = "within-or-latest" })):rows() do both[#both + 1] = row.call_stack end
    assert.same(latest, both)
  end)
end)

describe("the trace checker", function()
  it("finds what Perfetto's importer cannot draw", function()
    local problems = trace_check.check({ traceEvents = {
      { ph = "X", name = "a", pid = 1, tid = 1, ts = 0, dur = 10 },
      { ph = "X", name = "b", pid = 1, tid = 1, ts = 5, dur = 10 },   -- overlaps a partially
      { ph = "B", name = "c", pid = 1, tid = 2, ts = 0 },             -- never ends
      { ph = "b", cat = "PTA", id = 1, name = "d", pid = 1, ts = 0 }, -- never ends
      { ph = "e", cat = "GE", id = 1, name = "d", pid = 1, ts = 5 },  -- another cat: no b
      { ph = "C", name = "m", pid = 1, ts = 0, args = { v = "12" } }, -- not a number
    } })
    assert.equal(5, #problems)
    local all = table.concat(problems, "\n")
    assert.truthy(all:find('"b" [5, 15] overlaps "a" partially', 1, true), all)
    assert.truthy(all:find('B "c" never ends', 1, true), all)
    assert.truthy(all:find('async PTA id 1 "d" begins at 0 and never ends', 1, true), all)
    assert.truthy(all:find('async GE id 1 "d": e at 5 without its b', 1, true), all)
    assert.truthy(all:find("counter m v = 12 is not a number", 1, true), all)
    local ok = trace_check.check({ traceEvents = {
      { ph = "X", name = "a", pid = 1, tid = 1, ts = 0, dur = 10 },
      { ph = "X", name = "b", pid = 1, tid = 1, ts = 2, dur = 8 },
      { ph = "B", name = "c", pid = 1, tid = 1, ts = 20 }, { ph = "E", pid = 1, tid = 1, ts = 30 },
      { ph = "b", cat = "PTA", id = 1, name = "d", pid = 1, ts = 0 },
      { ph = "b", cat = "PTA", id = 2, name = "d", pid = 1, ts = 1 },
      { ph = "e", cat = "PTA", id = 1, name = "d", pid = 1, ts = 5 },
      { ph = "e", cat = "PTA", id = 2, name = "d", pid = 1, ts = 9 },
      { ph = "C", name = "m", pid = 1, ts = 0, args = { v = 12 } },
    } })
    assert.same({}, ok)
  end)
end)
