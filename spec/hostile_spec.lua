-- Hostile input against whole commands: every case is a small generated tree with two healthy
-- ranks beside the bad one, and asserts the exit code, the message naming the file or folder,
-- and that the healthy ranks' results were still written.
local core = require "ascope_core"
local h = require "helper"

local HEADER = h.MEMORY_CSV_HEADER
local ROW = "aten::empty,1024,1000100,,,,,10,20,10,,,,1,NPU:0\n"

-- one rank folder of the memory layout; csv is the operator_memory.csv body after the header
local function rank(dir, name, r, csv, trace)
  local pt = dir .. "/" .. name .. "_ascend_pt"
  h.write(pt .. "/profiler_info_" .. r .. ".json", ('{"rank_id": %d}'):format(r))
  h.write(pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", HEADER .. (csv or ROW))
  h.write(pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", trace or
    '[{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": "1000000.0", "dur": 200, '
    .. '"args": {"Call stack": "a.py(1): f"}}]')
  return pt
end

local function ranks_in(summary_path)
  local s = assert(core.json.load(summary_path))
  local got = {}
  for _, r in ipairs(s.ranks) do got[#got + 1] = r.rank end
  table.sort(got)
  return got, s
end

describe("hostile input to memory", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("counts inf and nan spellings in a numeric column as bad cells and writes valid JSON", function()
    rank(dir .. "/in", "a", 0, ROW:gsub(",10,20,10,", ",inf,20,-Infinity,") .. ROW:gsub("1000100", "0x10"))
    rank(dir .. "/in", "b", 1)
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(0, code, err)
    assert.truthy(err:find('value(s) are not numbers and were left empty; first: ', 1, true), err)
    assert.truthy(err:find('"inf" is not a number', 1, true), err)
    -- every JSON output parses (yajl), and the bad cells are empty, not "inf"
    for _, f in ipairs({ "memory_summary.json", "memory_trace.json" }) do
      assert.is_not_nil(core.json.load(dir .. "/out/" .. f), f)
    end
    assert.same({ 0, 1 }, (ranks_in(dir .. "/out/memory_summary.json")))
    local csv = h.read(dir .. "/out/memory_events.csv")
    assert.falsy(csv:find("inf", 1, true))
  end)

  it("reports a last CSV line without its line end, and leaves a row cut short out", function()
    rank(dir .. "/in", "a", 0, ROW .. "aten::cut,2048,200010")         -- cut in the middle of a row
    rank(dir .. "/in", "b", 1, ROW .. ROW:gsub("\n$", ""))             -- complete, only the \n is missing
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(1, code, err) -- rank 0 was read in part
    assert.truthy(err:find("[ERROR] rank 0 (in) is partial", 1, true), err)
    assert.falsy(err:find("rank 1 (in) is partial", 1, true), err)
    assert.truthy(err:find("a_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv:3: the last line has no line end "
      .. "(was the file cut?): its row has fewer fields than the header and is left out", 1, true), err)
    assert.truthy(err:find("b_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv:3: the last line has no line end "
      .. "(was the file cut?): its row is used", 1, true), err)
    local rows = h.csv_rows(dir .. "/out/memory_events.csv")
    local per_rank = {}
    for _, r in ipairs(rows) do per_rank[r.rank_id] = (per_rank[r.rank_id] or 0) + 1 end
    assert.same({ ["0"] = 1, ["1"] = 2 }, per_rank)
  end)

  it("takes a memory_record.csv cut in its last row for a rank read in part", function()
    local src = h.real .. "/msinsight_pytorch_text_level0/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT/%s"
    local dst = dir .. "/in/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT/%s"
    for r = 0, 1 do
      for _, f in ipairs({ "operator_memory.csv", "memory_record.csv", "trace_view.json" }) do
        h.copy(src:format(r, f), dst:format(r, f))
      end
      h.copy(src:format(r, "../profiler_info_" .. r .. ".json"), dst:format(r, "../profiler_info_" .. r .. ".json"))
    end
    local rec = dst:format(1, "memory_record.csv")
    h.write(rec, h.read(rec) .. "PTA,1736405443999999.000,1999.5,14")
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(1, code, err)
    assert.truthy(err:find("[ERROR] rank 1 (in) is partial: " .. rec .. ":1005: the last line has no line end", 1, true), err)
    assert.falsy(err:find("rank 0 (in) is partial", 1, true), err)
    assert.same({ 0, 1 }, (ranks_in(dir .. "/out/memory_summary.json")))
  end)

  it("names a stray quote as such (not an empty file) and keeps the other rank", function()
    rank(dir .. "/in", "a", 0, ROW:gsub("NPU", 'NP"U'))
    rank(dir .. "/in", "b", 1)
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(1, code)
    assert.truthy(err:find("a_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv:2", 1, true), err)
    assert.truthy(err:find("stray or unclosed quote", 1, true), err)
    assert.falsy(err:find("empty", 1, true), err)
    assert.same({ 1 }, (ranks_in(dir .. "/out/memory_summary.json")))
  end)

  it("accepts a UTF-8 byte order mark before trace_view.json", function()
    rank(dir .. "/in", "a", 0, nil, "\239\187\191" .. '[{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, '
      .. '"tid": 1, "ts": "1000000.0", "dur": 200, "args": {"Call stack": "bom.py(1): f"}}]')
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(0, code, err)
    assert.equal("bom.py(1): f", h.csv_rows(dir .. "/out/memory_events.csv")[1].call_stack)
  end)

  it("escapes invalid UTF-8 from call stacks and folder names in the JSON outputs", function()
    rank(dir .. "/in/\200\255role", "a", 0, nil, '[{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, '
      .. '"tid": 1, "ts": "1000000.0", "dur": 200, "args": {"Call stack": "gbk\214\208.py(1): f"}}]')
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(0, code, err)
    local trace = h.read(dir .. "/out/memory_trace.json")
    assert.truthy(trace:find("gbk\\ufffd\\ufffd.py(1): f", 1, true))
    local s = assert(core.json.load(dir .. "/out/memory_trace.json")) -- yajl checks UTF-8 by default
    assert.is_not_nil(s)
    local _, summary = ranks_in(dir .. "/out/memory_summary.json")
    assert.equal("\239\191\189\239\191\189role", summary.ranks[1].role)
  end)

  it("names a folder it cannot read, exits 1, and writes the ranks it could read", function()
    rank(dir .. "/in", "a", 0)
    local b = rank(dir .. "/in", "b", 1)
    rank(dir .. "/in", "d", 3)
    rank(dir .. "/in/locked", "c", 2)
    local out = b .. "/ASCEND_PROFILER_OUTPUT"
    assert(os.execute(("chmod -R a+rwX %s && chmod 000 %s/in/locked %s"):format(dir, dir, out)))
    -- root reads any folder: run as nobody then
    local as = io.popen("id -u"):read("l") == "0" and "setpriv --reuid=65534 --regid=65534 --clear-groups " or ""
    local function run(cmd)
      local _, _, code = os.execute(("%s%s %s %s -o %s/%s -q >%s/o 2>%s/e"):format(as, h.bin, cmd, dir .. "/in", dir,
        cmd, dir, dir))
      return code, h.read(dir .. "/e")
    end
    local code, err = run("memory")
    local tcode, terr = run("timeline")
    assert(os.execute(("chmod 755 %s/in/locked %s"):format(dir, out)))
    assert.equal(1, code, err)
    assert.truthy(err:find(dir .. "/in/locked: Permission denied", 1, true), err)
    local ranks, summary = ranks_in(dir .. "/memory/memory_summary.json")
    assert.same({ 0, 3 }, ranks)
    -- a folder inside a rank's fails that rank, once, with the reason (it was a second failed rank
    -- beside the rank's own "operator_memory.csv is missing")
    assert.equal(2, #summary.failed)
    for _, c in ipairs({ { code, err, "memory" }, { tcode, terr, "timeline" } }) do
      assert.equal(1, c[1], c[2])
      assert.truthy(c[2]:find("rank 1 (in): " .. out .. ": Permission denied", 1, true), c[2])
      assert.falsy(c[2]:find("missing", 1, true), c[2])
      assert.falsy(c[2]:find("no trace", 1, true), c[2])
    end
    local tl = assert(core.json.load(dir .. "/timeline/timeline_metrics.json"))
    assert.same({ 0, 3 }, { tl.ranks[1].rank, tl.ranks[2].rank })
  end)

  it("fails a role's only rank whose output folder it cannot read, and reads a rank past a locked raw folder", function()
    rank(dir .. "/in/actor", "a", 0)
    local b = rank(dir .. "/in/rollout", "b", 0)
    local c = rank(dir .. "/in/ref", "c", 0)
    local raw = c .. "/PROF_000001_x/device_0"
    assert(core.fs.mkdirs(raw))
    local locked = { b .. "/ASCEND_PROFILER_OUTPUT", raw }
    assert(os.execute(("chmod -R a+rwX %s && chmod 000 %s %s"):format(dir, locked[1], locked[2])))
    local as = io.popen("id -u"):read("l") == "0" and "setpriv --reuid=65534 --regid=65534 --clear-groups " or ""
    local _, _, code = os.execute(("%s%s memory %s -o %s/out -q >%s/o 2>%s/e"):format(as, h.bin, dir .. "/in", dir, dir, dir))
    local err = h.read(dir .. "/e")
    assert(os.execute(("chmod 755 %s %s"):format(locked[1], locked[2])))
    assert.equal(1, code, err)
    -- the rollout role's one rank may have its file behind the lock: it fails with why (it was
    -- left out as a role "profiled without memory", exit 0, the lock never named)
    assert.truthy(err:find("rank 0 (rollout): " .. locked[1] .. ": Permission denied", 1, true), err)
    assert.falsy(err:find("none of its", 1, true), err)
    -- a raw folder holds none of memory's inputs: its own failure, and the rank is read
    assert.truthy(err:find(raw .. ": Permission denied", 1, true), err)
    local _, summary = ranks_in(dir .. "/out/memory_summary.json")
    local read = {}
    for _, r in ipairs(summary.ranks) do read[#read + 1] = r.role end
    table.sort(read)
    assert.same({ "actor", "ref" }, read)
  end)

  it("names a folder tree too deep to read instead of skipping it in silence", function()
    rank(dir .. "/in", "a", 0)
    local deep = dir .. "/in" .. ("/d"):rep(70)
    assert(core.fs.mkdirs(deep))
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(1, code, err)
    assert.truthy(err:find("folders nested more than 64 deep are not read", 1, true), err)
    assert.same({ 0 }, (ranks_in(dir .. "/out/memory_summary.json")))
  end)

  it("plog, graph and opjitter name a folder tree too deep to read, exit 1, and keep what they read", function()
    local deep = ("/d"):rep(70)
    local too_deep = "folders nested more than 64 deep are not read"
    -- plog: the log beside the deep tree is classified
    h.copy("spec/fixtures/plog/seed_pattern.log", dir .. "/logs/device-0/plog-1.log")
    assert(core.fs.mkdirs(dir .. "/logs" .. deep))
    local code, _, err = h.run("plog", dir .. "/logs", "-o", dir .. "/po", "-q")
    assert.equal(1, code, err)
    assert.truthy(err:find(too_deep, 1, true), err)
    assert.truthy(core.json.load(dir .. "/po/plog_summary.json").files >= 1)
    -- graph: the two cards beside it are compared
    local g = '{"graph": [{"name": "g", "op": [{"name": "MoeDistributeDispatchV2_1", "type": "MoeDistributeDispatchV2"}]}]}'
    h.write(dir .. "/graphs/graph_1_device0.json", g)
    h.write(dir .. "/graphs/graph_1_device1.json", g)
    assert(core.fs.mkdirs(dir .. "/graphs" .. deep))
    code, _, err = h.run("graph", dir .. "/graphs", "-o", dir .. "/go", "-q")
    assert.equal(1, code, err)
    assert.truthy(err:find(too_deep, 1, true), err)
    assert.equal(1, #core.json.load(dir .. "/go/graph_summary.json").pairs)
    -- opjitter: the card beside it is read
    h.write(dir .. "/prof/card_0/kernel_details.csv", "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"
      .. "1,Add_1,Add,AI_VECTOR_CORE,1000.000,5.0\n")
    assert(core.fs.mkdirs(dir .. "/prof" .. deep))
    code, _, err = h.run("opjitter", dir .. "/prof", "-o", dir .. "/oo", "-q")
    assert.equal(1, code, err)
    assert.truthy(err:find(too_deep, 1, true), err)
  end)

  it("refuses FIFOs standing for input files without waiting on them, and keeps the other ranks", function()
    local a = rank(dir .. "/in", "a", 0)
    local b = rank(dir .. "/in", "b", 1)
    rank(dir .. "/in", "c", 2)
    for _, p in ipairs({ a .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", b .. "/ASCEND_PROFILER_OUTPUT/trace_view.json" }) do
      os.remove(p)
      assert(os.execute("mkfifo " .. p))
    end
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q")
    assert.equal(1, code, err) -- the rank without its CSV failed
    assert.truthy(err:find("a_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv (not a regular file", 1, true), err)
    -- a trace that is no file is what a missing trace is: a warning, empty call stacks
    assert.truthy(err:find("b_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json (not a regular file", 1, true), err)
    assert.same({ 1, 2 }, (ranks_in(dir .. "/out/memory_summary.json")))
    -- to the timeline the trace is the rank: one that is no file fails the rank, even beside its
    -- step split (it was analysed from the split alone, without a word)
    h.write(b .. "/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
      "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage\n1,5,1,1,2,1,7\n")
    local tcode, _, terr = h.run("timeline", dir .. "/in", "-o", dir .. "/tl", "-q")
    assert.equal(1, tcode, terr)
    assert.truthy(terr:find("rank 1 (in): " .. b .. "/ASCEND_PROFILER_OUTPUT/trace_view.json (not a regular file", 1, true), terr)
    local tl = assert(core.json.load(dir .. "/tl/timeline_metrics.json"))
    assert.same({ 0, 2, 1 }, { tl.ranks[1].rank, tl.ranks[2].rank, tl.failed[1].rank })
    -- a FIFO given as the input itself, and a .db that is none, are named for what they are
    for _, cmd in ipairs({ "timeline", "memory" }) do
      local fcode, _, ferr = h.run(cmd, b .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", "-o", dir .. "/f" .. cmd)
      assert.equal(1, fcode, ferr)
      assert.truthy(ferr:find("trace_view.json: not a regular file (a FIFO, device or socket): not read", 1, true), ferr)
    end
    local fake = dir .. "/fake/r_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    h.write(fake, ("\1\2random bytes, no header"):rep(100))
    local dcode, _, derr = h.run("timeline", dir .. "/fake", "-o", dir .. "/fake/out")
    assert.equal(1, dcode, derr)
    assert.truthy(derr:find(fake .. " (byte 0): not an SQLite database", 1, true), derr)
    -- the readers refuse one as well when asked directly
    local r, rerr = require("ascope.ascend.timeline").read(b .. "/ASCEND_PROFILER_OUTPUT/trace_view.json")
    assert.is_nil(r)
    assert.truthy(rerr:find("not a regular file", 1, true), rerr)
  end)

  it("refuses a FIFO given to plog or graph, alone or beside other files, and keeps the others' results", function()
    local line = "[ERROR] RUNTIME(1,python):2024-06-01-10:00:01.000.000 [rt.cc:1]2 Aicore kernel execute failed, "
      .. "device_id=0, stream_id=5, task_id=1, kernel_name=MoeDistributeDispatch_1"
    h.write(dir .. "/p/device-0/plog-1.log", line .. "\n")
    h.write(dir .. "/g/device_0/graph_1.json", '[{"name": "MoeDistributeDispatch_1"}]')
    assert(core.fs.mkdirs(dir .. "/p/device-1"))
    assert(core.fs.mkdirs(dir .. "/g/device_1"))
    local fifos = { dir .. "/p/device-1/plog-2.log", dir .. "/g/device_1/graph_1.json" }
    for _, p in ipairs(fifos) do assert(os.execute("mkfifo " .. p)) end
    -- each run is bounded: reading a FIFO with no writer waits forever
    local function run(cmd, input, out)
      local _, _, code = os.execute(("timeout 30 %s %s %s -o %s >%s/o 2>%s/e"):format(h.bin, cmd, input, out, dir, dir))
      return code, h.read(dir .. "/e")
    end
    for _, c in ipairs({ { "plog", dir .. "/p", fifos[1] }, { "graph", dir .. "/g", fifos[2] } }) do
      local code, err = run(c[1], c[2], dir .. "/out_" .. c[1])
      assert.equal(1, code, err)
      assert.truthy(err:find(c[3] .. " (not a regular file", 1, true), err)
      code, err = run(c[1], c[3], dir .. "/one_" .. c[1])
      assert.equal(1, code, err)
      assert.truthy(err:find(c[3] .. " (not a regular file", 1, true), err)
    end
    -- the other card's results are still there
    local s = assert(core.json.load(dir .. "/out_plog/plog_summary.json"))
    assert.equal(1, s.categories.aicore_kernel_failed.count)
    assert.same({ "MoeDistributeDispatch_1" }, assert(core.json.load(dir .. "/out_graph/graph_summary.json")).cards["0"])
    -- the classifier refuses one when asked directly
    local plog = require "ascope.plog"
    local rules = assert(plog.rules())
    local cl = assert(plog.classifier(rules))
    local tally = assert(core.logclass.tally({ rules = #rules.classifiers }))
    local ok, cerr = cl:scan(fifos[1], tally, 1, 1, function() end)
    assert.is_nil(ok)
    assert.truthy(tostring(cerr):find("not a regular file", 1, true), tostring(cerr))
  end)

  it("checks -j and --rank-list, clamps workers to the open-file limit, and keeps rank ranges small", function()
    rank(dir .. "/in", "a", 0)
    rank(dir .. "/in", "b", 1)
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-j", "99999999999")
    assert.equal(2, code)
    assert.truthy(err:find("-j must be at most 1024", 1, true), err)
    code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "--rank-list", "0-99999999999999999999999")
    assert.equal(2, code)
    assert.truthy(err:find("is not a rank number", 1, true), err)
    -- a range of 10^11 ranks costs nothing: only rank 1 is in it, and the others are named as a range
    code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/out", "-q", "--rank-list", "1-99999999999")
    assert.equal(1, code, err)
    assert.truthy(err:find("no rank 2-99999999999 under", 1, true), err)
    assert.same({ 1 }, (ranks_in(dir .. "/out/memory_summary.json")))
    -- 1000 workers asked for under 40 open files: clamped, no busy loop, both ranks read
    local _, _, c2 = os.execute(("ulimit -n 40; timeout 60 %s memory %s -o %s/out2 -q -j 1000 >/dev/null 2>%s/e"):format(
      h.bin, dir .. "/in", dir, dir))
    assert.equal(0, c2, h.read(dir .. "/e"))
    assert.same({ 0, 1 }, (ranks_in(dir .. "/out2/memory_summary.json")))
  end)

  it("names the file on a full disk, exits 1, and leaves no report cut short", function()
    rank(dir .. "/in", "a", 0, ROW:rep(40))
    -- a file-size limit: the signal it sends (SIGXFSZ) is ignored by ascope itself, or it would
    -- end the process with the temporary files left
    local _, _, code = os.execute(("sh -c 'trap - XFSZ; ulimit -f 8; exec %s memory %s -o %s/out -q' 2>%s/e"):format(
      h.bin, dir .. "/in", dir, dir))
    local err = h.read(dir .. "/e")
    assert.equal(1, code, err)
    assert.truthy(err:find("/out/memory_trace.json: cannot write: File too large (nothing written)", 1, true), err)
    for _, name in ipairs(core.fs.list(dir .. "/out") or {}) do
      assert.falsy(name:find(".tmp-", 1, true), name)
      local size = core.fs.stat(dir .. "/out/" .. name).size
      assert.is_true(size < 4096, name) -- only the outputs that fitted whole are there
      if name:match("%.json$") then assert.is_not_nil(core.json.load(dir .. "/out/" .. name), name) end
    end
  end)

  it("says once that the output folder cannot be made", function()
    rank(dir .. "/in", "a", 0)
    h.write(dir .. "/file", "x")
    -- under a file: a usage error before anything is read
    local code, _, err = h.run("memory", dir .. "/in", "-o", dir .. "/file/out", "-q")
    assert.equal(2, code)
    local _, count = err:gsub("is a file, not a folder", "")
    assert.equal(1, count, err)
    -- a place where no folder can be made (/proc takes none)
    code, _, err = h.run("memory", dir .. "/in", "-o", "/proc/ascope-spec-none/out", "-q")
    assert.equal(1, code)
    _, count = err:gsub("cannot create folder", "")
    assert.equal(1, count, err)
  end)
end)

describe("hostile input to timeline", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("leaves a flow event with an unreadable time out, with a warning, instead of failing the rank", function()
    local events = {
      '{"ph":"M","name":"process_name","pid":1,"args":{"name":"Python"}}',
      '{"ph":"M","name":"process_name","pid":2,"args":{"name":"Ascend Hardware"}}',
      '{"ph":"M","name":"thread_name","pid":2,"tid":5,"args":{"name":"Stream 5"}}',
      '{"ph":"X","name":"launch1","pid":1,"tid":1,"ts":"100.000","dur":"10.000","cat":"cpu_op"}',
      '{"ph":"X","name":"launch2","pid":1,"tid":1,"ts":"120.000","dur":"10.000","cat":"cpu_op"}',
      '{"ph":"X","name":"k1","pid":2,"tid":5,"ts":"150.000","dur":"20.000","args":{"Task Type":"AI_CORE"}}',
      '{"ph":"X","name":"k2","pid":2,"tid":5,"ts":"180.000","dur":"20.000","args":{"Task Type":"AI_CORE"}}',
      '{"ph":"s","name":"flow","id":"1","pid":1,"tid":1,"ts":"105.000","cat":"HostToDevice"}',
      '{"ph":"f","name":"flow","id":"1","pid":2,"tid":5,"ts":"155.000","cat":"HostToDevice","bp":"e"}',
      '{"ph":"s","name":"flow","id":"2","pid":1,"tid":1,"ts":"12x.000","cat":"HostToDevice"}',
      '{"ph":"f","name":"flow","id":"2","pid":2,"tid":5,"ts":"185.000","cat":"HostToDevice","bp":"e"}',
    }
    h.write(dir .. "/t.json", "[" .. table.concat(events, ",\n") .. "]")
    local code, _, err = h.run("timeline", dir .. "/t.json", "-o", dir .. "/out", "-q")
    assert.equal(0, code, err)
    assert.truthy(err:find('field "ts": "12x.000" is not a time (left empty)', 1, true), err)
    assert.truthy(err:find("1 flow event(s) without a readable time were left out of the critical path", 1, true), err)
    local m = assert(core.json.load(dir .. "/out/timeline_metrics.json"))
    local cp = m.ranks[1].critical_path
    assert.equal(1, cp.flow_edges) -- the readable flow binds launch1 -> k1
  end)
end)

describe("hostile step traces to timeline", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("names bad cells and a cut last line of step_trace_time.csv and analyses the rank", function()
    h.write(dir .. "/t.json", '[{"ph":"M","name":"process_name","pid":2,"args":{"name":"Ascend Hardware"}},'
      .. '{"ph":"X","name":"k1","pid":2,"tid":5,"ts":"150.000","dur":"20.000","args":{"Task Type":"AI_CORE"}}]')
    h.write(dir .. "/step_trace_time.csv", "Step,Computing,Communication(Not Overlapped),Free\n1,10,2,-inf\n2,12,")
    local code, _, err = h.run("timeline", dir .. "/t.json", "-o", dir .. "/out", "-q")
    assert.equal(0, code, err)
    assert.truthy(err:find("step_trace_time.csv: 1 value(s) are not numbers and were left empty; first: ", 1, true), err)
    assert.truthy(err:find('column "Free": "-inf" is not a number', 1, true), err)
    assert.truthy(err:find("step_trace_time.csv:3: the last line has no line end (was the file cut?): its row has "
      .. "fewer fields than the header and is left out", 1, true), err)
    assert.is_not_nil(core.json.load(dir .. "/out/timeline_metrics.json"))
  end)
end)

describe("hostile input to opjitter", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  local HEADER_K = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"

  it("indexes cards sparsely: a card numbered 99999999 is one card, the gaps of a real range are missing", function()
    for _, n in ipairs({ 0, 2, 99999999 }) do
      h.write(("%s/card_%d/kernel_details.csv"):format(dir, n), HEADER_K .. "1,op_1,Op,AI_CORE,1000.000,10\n"
        .. "1,op_2,Op,AI_CORE,1010.000," .. (11 + n % 7) .. "\n")
    end
    local r = assert(require("ascope.opjitter").run(dir))
    assert.same({ 0, 2, 99999999 }, r.found)
    assert.same({}, r.missing) -- 0..99999999 is no card range: its gaps are not cards
    local row
    for _, x in ipairs(r.rows) do if x.call == 1 then row = x end end
    assert.equal(11, row.values[0])
    assert.equal(13, row.values[2])
    assert.equal(11 + 99999999 % 7, row.values[99999999])
    -- a dense numbering still lists its gaps
    h.cleanup(dir .. "/card_99999999")
    r = assert(require("ascope.opjitter").run(dir))
    assert.same({ 1 }, r.missing)
    local code, _, err = h.run("opjitter", dir, "-o", dir .. "/out", "--cards", "99999999999")
    assert.equal(2, code)
    assert.truthy(err:find("--cards must be at most 1048576", 1, true), err)
  end)
end)

describe("hostile kernel files to opjitter", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("names bad cells and a cut last line of a card's file, and keeps every card", function()
    local head = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"
    h.write(dir .. "/card_0/kernel_details.csv", head .. "1,op_1,Op,AI_CORE,1000.000,10\n1,op_2,Op,AI_CORE,1010.000,12\n")
    h.write(dir .. "/card_1/kernel_details.csv", head .. "1,op_1,Op,AI_CORE,1000.000,inf\n1,op_2,Op,AI_CORE,1010.000,15\n"
      .. "1,op_3,Op,AI_CORE,1020.")
    local code, _, err = h.run("opjitter", dir, "-o", dir .. "/out")
    assert.equal(0, code, err)
    assert.truthy(err:find("card_1/kernel_details.csv: 1 value(s) are not numbers and were left empty; first: "
      .. dir .. "/card_1/kernel_details.csv:2: column \"Duration(us)\": \"inf\" is not a number", 1, true), err)
    assert.truthy(err:find("card_1/kernel_details.csv:4: the last line has no line end (was the file cut?): its row has "
      .. "fewer fields than the header and is left out", 1, true), err)
    local s = assert(core.json.load(dir .. "/out/opjitter_summary.json"))
    assert.same({ 0, 1 }, s.cards)
  end)
end)
