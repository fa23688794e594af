local core = require "ascope_core"
local h = require "helper"
local timeline = require "ascope.timeline"

local gen = require "timeline_gen"
local truth = dofile(h.fixtures .. "/timeline/profiler_truth.lua")
local trace = gen.write

-- brute force on a 1 us grid: covered[t] for t in [lo, hi)
local function grid(intervals, lo, hi)
  local g = {}
  for t = lo, hi - 1 do g[t] = false end
  for _, iv in ipairs(intervals) do
    for t = math.max(iv[1], lo), math.min(iv[2], hi) - 1 do g[t] = true end
  end
  return g
end

local function count(_, lo, hi, pred)
  local n = 0
  for t = lo, hi - 1 do if pred(t) then n = n + 1 end end
  return n
end

-- numpy-style percentile of a list
local function percentile(list, p)
  table.sort(list)
  local pos = p / 100 * (#list - 1)
  local lo = math.floor(pos)
  local v = list[lo + 1]
  if lo + 2 <= #list then v = v + (pos - lo) * (list[lo + 2] - v) end
  return v
end

local function analyse(path, opts)
  opts = opts or {}
  opts.jobs = 1
  local res = assert(timeline.run(path, opts))
  assert.equal(0, #res.failed)
  return res.ranks[1]
end

describe("timeline dimensions on hand-built traces (brute force on a 1 us grid)", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("leaves out a slice that ends before it starts, and says so", function()
    local compute = { { "mm", 0, 30, "AI_CORE" }, { "add", 40, 25, "AI_VECTOR_CORE" }, { "mm", 90, 40, "AI_CORE" } }
    local comm = { { "hcom_allReduce_1", 35, 40 } }
    local p, q = dir .. "/t.json", dir .. "/neg.json"
    trace(p, { { "Ascend Hardware", "Stream 2", compute }, { "HCCL", "Group 0 Communication", comm } })
    local with = { compute[1], compute[2], { "mm", 140, -60, "AI_CORE" }, compute[3] }
    trace(q, { { "Ascend Hardware", "Stream 2", with }, { "HCCL", "Group 0 Communication", comm } })
    local want, got = analyse(p), analyse(q)
    assert.same(want.dashboard, got.dashboard)
    -- no time is taken off the operator's total (it was 10 us short), nor a node off the path
    assert.same(want.hotspots, got.hotspots)
    assert.equal(want.critical_path.dag_nodes, got.critical_path.dag_nodes)
    assert.same({}, want.warnings)
    assert.same({ "1 slice(s) end before they start (a negative duration): left out as slices without a duration are; "
      .. "first: mm on Ascend Hardware/Stream 2 at 0.140000 ms" }, got.warnings)
  end)

  it("union, idle ratio, gap P95, op utilisation and overlap by intersection", function()
    local compute = { { "mm", 0, 30, "AI_CORE" }, { "add", 20, 25, "AI_VECTOR_CORE" }, { "mm", 60, 10, "AI_CORE" },
                      { "wait", 75, 5, "EVENT_WAIT" }, { "mm", 90, 40, "MIX_AIC" }, { "mm", 150, 10, "AI_CORE" } }
    local comm = { { "hcom_allReduce_1", 35, 40 }, { "hcom_allReduce_2", 120, 45 } }
    local p = dir .. "/t.json"
    trace(p, { { "Ascend Hardware", "Stream 2", compute }, { "HCCL", "Group 0 Communication", comm } })
    local r = analyse(p)
    -- compute class: AI_CORE, AI_VECTOR_CORE, MIX_AIC (the EVENT_WAIT is sync, not compute)
    local cg = grid({ { 0, 30 }, { 20, 45 }, { 60, 70 }, { 90, 130 }, { 150, 160 } }, 0, 170)
    local mg = grid({ { 35, 75 }, { 120, 165 } }, 0, 170)
    local dg = grid({ { 0, 30 }, { 20, 45 }, { 60, 70 }, { 75, 80 }, { 90, 130 }, { 150, 160 } }, 0, 170)
    local span = 165 -- the stage: first to last compute or communication task, 0 to 165 us
    assert.near(0.165, r.step.stage_ms, 1e-12)
    local busy = count(cg, 0, span, function(t) return cg[t] end)
    assert.near(busy / span, r.dashboard.op_utilization, 1e-12)
    -- the critical-path busy union leaves the event wait out: a wait is not work
    local act = count(cg, 0, span, function(t) return cg[t] or mg[t] end)
    assert.near(act / span, r.dashboard.critical_path_ratio, 1e-12)
    local comm_t = count(mg, 0, span, function(t) return mg[t] end)
    local hidden = count(mg, 0, span, function(t) return mg[t] and cg[t] end)
    assert.equal("tasks", r.overlap.source)
    assert.near(hidden / comm_t, r.dashboard.overlap_ratio, 1e-12)
    -- the device lane: idle ratio and gap statistics over its own span [0, 160)
    local lane
    for _, l in ipairs(r.lanes) do if l.name == "Ascend Hardware/Stream 2" then lane = l end end
    local dbusy = count(dg, 0, 160, function(t) return dg[t] end)
    assert.near(1 - dbusy / 160, lane.idle_ratio, 1e-12)
    local gaps, run = {}, 0
    for t = 0, 160 do
      if t < 160 and not dg[t] then run = run + 1 elseif run > 0 then gaps[#gaps + 1] = run; run = 0 end
    end
    assert.near(percentile(gaps, 95) / 1000, lane.gap_p95_ms, 1e-12)
    assert.near(math.max(table.unpack(gaps)) / 1000, lane.max_gap_ms, 1e-12)
    assert.near(r.dashboard.max_lane_idle, lane.idle_ratio, 1e-12)
  end)

  it("finds the longest path of a diamond dependency graph", function()
    -- A (host) launches B and C on two streams; B and C both feed D on a third stream, which
    -- starts the stage with a short X at 0.
    local p = dir .. "/diamond.json"
    trace(p, {
      { "Python", "Thread 1", { { "A", 0, 10 } } },
      { "Ascend Hardware", "Stream 1", { { "B", 15, 30, "AI_CORE" } } },
      { "Ascend Hardware", "Stream 2", { { "C", 12, 8, "AI_CORE" } } },
      { "Ascend Hardware", "Stream 3", { { "X", 0, 1, "AI_CORE" }, { "D", 50, 10, "AI_CORE" } } },
    }, {
      { id = 1, from = { 1, 2 }, to = { 2, 15 } }, { id = 2, from = { 1, 5 }, to = { 3, 12 } },
      { id = 3, from = { 2, 30 }, to = { 4, 50 } }, { id = 4, from = { 3, 15 }, to = { 4, 50 } },
    })
    local r = analyse(p)
    -- every path A -> x -> D, each task adding the time from max(its start, the predecessor's
    -- end) to its end: A->B->D = 10 + 30 + 10 = 50, A->C->D = 10 + 8 + 10 = 28
    local function weight(chain)
      local total, prev_end = 0, nil
      for _, t in ipairs(chain) do
        local add = t[2] - math.max(t[1], prev_end or t[1])
        total = total + math.max(add, 0)
        prev_end = t[2]
      end
      return total
    end
    local best = math.max(weight({ { 0, 10 }, { 15, 45 }, { 50, 60 } }), weight({ { 0, 10 }, { 12, 20 }, { 50, 60 } }))
    assert.near(best / 1000, r.critical_path.longest_path_ms, 1e-12)
    assert.equal(3, r.critical_path.longest_path_tasks)
    assert.equal(4, r.critical_path.flow_edges)
    assert.near(0.040, r.critical_path.composition["compute:AI_CORE"], 1e-12)
    assert.near(0.010, r.critical_path.composition.host, 1e-12)
    assert.equal("B", r.hotspots[1].name)
    -- alignment gaps (consumer start - producer end): A->B 5, A->C 2, B->D 5, C->D 30 us
    assert.equal(4, r.alignment.count)
    assert.near(0.042, r.alignment.total_ms, 1e-12)
    assert.near(0.030, r.alignment.top[1].gap_ms, 1e-12)
    assert.equal("C", r.alignment.top[1].producer)
  end)

  it("measures the bubble of a 2-stage pipeline as the union of receive waits, HCCL names included", function()
    -- stage 1 of a 2-stage pipeline, 2 micro-batches: forward, wait for recv, backward
    local p = dir .. "/pp.json"
    trace(p, {
      { "Ascend Hardware", "Stream 1", { { "fwd", 0, 20, "AI_CORE" }, { "fwd", 20, 20, "AI_CORE" },
                                           { "bwd", 70, 20, "AI_CORE" }, { "bwd", 100, 20, "AI_CORE" } } },
      { "HCCL", "Group P2P", { { "hcom_send_", 40, 5 }, { "hcom_receive_", 45, 25 }, { "hcom_BatchSendRecv_", 90, 10 },
                                { "hcom_receive_", 50, 10 } } },
    })
    local r = analyse(p, { pp = 2, microbatches = 2 })
    -- receive waits: [45,70) (with [50,60) inside it) and the batch send/recv [90,100)
    local waits = grid({ { 45, 70 }, { 50, 60 }, { 90, 100 } }, 0, 120)
    local bubble = count(waits, 0, 120, function(t) return waits[t] end)
    assert.equal(35, bubble)
    assert.near(bubble / 1000, r.pp_bubble.bubble_ms, 1e-12)
    assert.near(bubble / 120, r.dashboard.pp_bubble_ratio, 1e-12)
    assert.near(1 / 3, r.pp_bubble.theory, 1e-12)
    assert.near(bubble / 120 - 1 / 3, r.pp_bubble.excess, 1e-12)
  end)

  it("prefers the Overlap Analysis lanes and reads jitter from step_trace_time.csv", function()
    local p = dir .. "/ov.json"
    trace(p, {
      { "Ascend Hardware", "Stream 1", { { "mm", 0, 50, "AI_CORE" } } },
      { "Overlap Analysis", "Communication", { { "c", 10, 40 } } },
      { "Overlap Analysis", "Communication(Not Overlapped)", { { "c", 40, 10 } } },
    })
    -- Stage (100, 110, ...) is not the step time: Computing + Communication(Not Overlapped) + Free is
    h.write(dir .. "/step_trace_time.csv", "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage\n"
      .. "1,50,10,30,40,5,100\n2,50,12,28,40,5,110\n3,50,30,10,40,70,180\n4,50,10,30,40,5,100\n")
    local r = analyse(p)
    assert.equal("Overlap Analysis", r.overlap.source)
    assert.near(1 - 10 / 40, r.dashboard.overlap_ratio, 1e-12)
    local t = { 65, 67, 150, 65 }
    local mean = (65 + 67 + 150 + 65) / 4
    local var = 0
    for _, x in ipairs(t) do var = var + (x - mean) ^ 2 end
    assert.near(math.sqrt(var / 4) / mean, r.dashboard.step_cv, 1e-12)
    local c = { 10, 12, 30, 10 }
    local cm = (10 + 12 + 30 + 10) / 4
    local cv = 0
    for _, x in ipairs(c) do cv = cv + (x - cm) ^ 2 end
    assert.near(math.sqrt(cv / 4) / cm, r.dashboard.comm_jitter, 1e-12)
    -- 1.5 x median (66) = 99: step 3 is the long tail
    assert.equal(1, #r.jitter.long_tail)
    assert.equal("3", r.jitter.long_tail[1].step)
    local ids = {}
    for _, f in ipairs(r.findings) do ids[f.id] = true end
    assert.is_true(ids.step_jitter and ids.comm_jitter and ids.long_tail)
  end)

  it("leaves a pipeline's receive wait out of the lanes' stage and overlap, as the profiler's Stage does", function()
    local p = dir .. "/pp_lanes.json"
    trace(p, {
      { "Ascend Hardware", "Stream 1", { { "mm", 0, 780, "AI_CORE" } } },
      { "HCCL", "Group 0 Communication", { { "hcom_allReduce_1", 100, 100 }, { "hcom_receive_1", 780, 200 } } },
      { "Overlap Analysis", "Computing", { { "Computing", 0, 780 } } },
      { "Overlap Analysis", "Communication", { { "Communication", 100, 100 }, { "Communication", 780, 200 } } },
      { "Overlap Analysis", "Communication(Not Overlapped)", { { "Communication(Not Overlapped)", 780, 200 } } },
    })
    local r = analyse(p)
    assert.equal("Overlap Analysis", r.overlap.source)
    -- Stage = 980 - Bubble 200; Communication(Not Overlapped and Exclude Receive) = 0 of 100 us
    assert.near(0.78, r.step.stage_ms, 1e-12)
    assert.near(0.98, r.step.span_ms, 1e-12)
    assert.near(1, r.dashboard.op_utilization, 1e-12)
    assert.near(1, r.dashboard.overlap_ratio, 1e-12)
    assert.near(0.1, r.overlap.communication_ms, 1e-12)
    assert.near(0.2, r.overlap.receive_wait_ms, 1e-12)
  end)

  it("measures comm_jitter on Communication when compute hides all of it in every step", function()
    local p = dir .. "/hidden.json"
    trace(p, { { "Ascend Hardware", "Stream 1", { { "mm", 0, 50, "AI_CORE" } } } })
    -- Communication(Not Overlapped) is 0 in every step; Communication is 10, 10, 30, 10, 10, 10
    h.write(dir .. "/step_trace_time.csv", "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage\n"
      .. "1,90,0,10,10,10,100\n2,90,0,10,10,10,100\n3,90,0,30,30,10,100\n4,90,0,10,10,10,100\n"
      .. "5,90,0,10,10,10,100\n6,90,0,10,10,10,100\n")
    local r = analyse(p)
    local c, mean, var = { 10, 10, 30, 10, 10, 10 }, 80 / 6, 0
    for _, x in ipairs(c) do var = var + (x - mean) ^ 2 end
    assert.near(math.sqrt(var / 6) / mean, r.dashboard.comm_jitter, 1e-12)
    assert.equal("Communication", r.comm_jitter.column)
    local ids = {}
    for _, f in ipairs(r.findings) do ids[f.id] = true end
    assert.is_true(ids.hidden_comm_jitter)
  end)

  it("says which dimensions it could not compute, and leaves them out of the dashboard", function()
    local p = dir .. "/host_only.json"
    trace(p, { { "Python", "Thread 1", { { "aten::mm", 0, 10 } } } })
    local r = analyse(p)
    assert.truthy(r.not_computed.critical_path:find("no compute or communication tasks", 1, true))
    assert.truthy(r.not_computed.op_util)
    assert.is_nil(r.dashboard.op_utilization)
    local code, out = h.run("timeline", p, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.falsy(out:find("op_utilization", 1, true))
    local md = h.read(dir .. "/out/timeline_report.md")
    assert.truthy(md:find("- op_util: no compute or communication tasks in the step", 1, true))
    assert.falsy(md:find("| op_utilization", 1, true))
    assert.falsy(md:find("| critical_path_ratio", 1, true))
  end)

  it("names the 20 worst long-tail steps in the report and counts the rest", function()
    -- 200 steps of 60 us, of which `slow` take 100 + k us (the worst the last written)
    local function report_line(slow)
      local lines = { "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free" }
      for i = 1, 200 do
        local time = i <= slow and 100 + i or 60
        lines[#lines + 1] = ("%d,%d,0,0,0,0"):format(i, time)
      end
      h.write(dir .. "/step_trace_time.csv", table.concat(lines, "\n") .. "\n")
      local code = h.run("timeline", dir .. "/step_trace_time.csv", "-o", dir .. "/out")
      assert.equal(0, code)
      return h.read(dir .. "/out/timeline_report.md"):match("Long%-tail steps[^\n]*"),
        #core.json.load(dir .. "/out/timeline_metrics.json").ranks[1].jitter.long_tail
    end
    local line, listed = report_line(30)
    assert.equal(30, listed) -- the JSON lists them all
    assert.truthy(line:find("^Long%-tail steps, the first 20 of 30: 30 %(0%.130 ms%), 29 %(0%.129 ms%)"), line)
    local _, names = line:gsub(" ms%)", "")
    assert.equal(20, names)
    assert.truthy(line:find(", 11 (0.111 ms).", 1, true), line)
    line = report_line(3)
    assert.equal("Long-tail steps: 3 (0.103 ms), 2 (0.102 ms), 1 (0.101 ms).", line)
  end)

  it("reads a cluster step split as one step a row: the slowest rank, without the stage rows", function()
    -- msprof-analyze's cluster file: one step seen by 8 ranks and a "stage" row of column
    -- maxima. The ranks differ (communication 133 to 756 ms) but there is one step: no jitter.
    local real = h.fixtures .. "/real/mstt_msprof_analyze_tests/cluster_analysis_output/cluster_step_trace_time.csv"
    local code, out = h.run("timeline", real, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.falsy(out:find("jitter", 1, true), out)
    local r = core.json.load(dir .. "/out/timeline_metrics.json").ranks[1]
    assert.is_nil(r.dashboard.step_cv)
    assert.equal("only 1 step(s): step CV needs at least 3", r.not_computed.jitter)
    -- 4 steps of 3 ranks: rank 1 always the slowest but one step where rank 2 is; the series is
    -- each step's slowest row, its communication that row's
    local lines, slowest = { "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free" }, {}
    for s = 1, 4 do
      for rank = 0, 2 do
        local computing = (rank == 1 and 100) or (rank == 2 and s == 3 and 150) or 60
        local comm = rank * 10 + s
        lines[#lines + 1] = ("%d,rank,%d,%d,%d,0,%d,0"):format(s, rank, computing, comm, comm)
        local t = computing + comm
        if not slowest[s] or t > slowest[s].t then slowest[s] = { t = t, comm = comm } end
      end
      lines[#lines + 1] = ('%d,stage,"(0, 1, 2)",150,30,0,30,0'):format(s)
    end
    h.write(dir .. "/cluster_step_trace_time.csv", table.concat(lines, "\n") .. "\n")
    assert.equal(0, (h.run("timeline", dir .. "/cluster_step_trace_time.csv", "-o", dir .. "/out")))
    local function cv(key)
      local sum, var = 0, 0
      for _, x in ipairs(slowest) do sum = sum + x[key] end
      for _, x in ipairs(slowest) do var = var + (x[key] - sum / 4) ^ 2 end
      return math.sqrt(var / 4) / (sum / 4)
    end
    r = core.json.load(dir .. "/out/timeline_metrics.json").ranks[1]
    assert.equal(4, r.jitter.steps)
    assert.near(cv("t"), r.dashboard.step_cv, 1e-12)
    assert.near(cv("comm"), r.dashboard.comm_jitter, 1e-12)
    assert.near(173 / 1000, r.jitter.max_ms, 1e-12)
    -- a rank's own split without step ids (no Type column): each row is a step of its own
    h.write(dir .. "/step_trace_time.csv", "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
      .. ",60,1,0,1,0\n,60,2,0,2,0\n,90,3,0,3,0\n,60,1,0,1,0\n")
    assert.equal(0, (h.run("timeline", dir .. "/step_trace_time.csv", "-o", dir .. "/out")))
    assert.equal(4, core.json.load(dir .. "/out/timeline_metrics.json").ranks[1].jitter.steps)
  end)

  it("analyses a rank whose step split is empty with its trace's steps, and exits 1", function()
    local src = h.real .. "/msinsight_pytorch_text_level0/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT/%s"
    local dst = dir .. "/tree/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT/%s"
    for rank = 0, 1 do
      h.copy(src:format(rank, "trace_view.json"), dst:format(rank, "trace_view.json"))
      h.copy(src:format(rank, "step_trace_time.csv"), dst:format(rank, "step_trace_time.csv"))
    end
    h.write(dst:format(1, "step_trace_time.csv"), "")
    local code, out, err = h.run("timeline", dir .. "/tree", "-o", dir .. "/out")
    assert.equal(1, code)
    assert.truthy(err:find("[ERROR] rank 1: " .. dst:format(1, "step_trace_time.csv") .. ":1 (byte 0): the file is empty", 1, true), err)
    assert.truthy(err:find("the rank is analysed with the steps of its trace", 1, true))
    assert.truthy(out:find("rank 1 (tree): critical_path_ratio 73.2%", 1, true), out)
    local m = core.json.load(dir .. "/out/timeline_metrics.json")
    assert.equal(2, #m.ranks)
    assert.equal(0, #m.failed)
  end)

  it("names the file and byte offset of a truncated trace and exits 1", function()
    local p = dir .. "/cut.json"
    h.copy(h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", p, 70000)
    local code, _, err = h.run("timeline", p, "-o", dir .. "/out")
    assert.equal(1, code)
    assert.truthy(err:find(p .. ":", 1, true))
    assert.truthy(err:find("byte 70000", 1, true))
  end)

  it("keeps the good rank's results when another rank's trace is cut, and exits 1", function()
    local src = h.real .. "/msinsight_pytorch_text_level0/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    local dst = dir .. "/tree/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    h.copy(src:format(0), dst:format(0))
    h.copy(src:format(1), dst:format(1), 50000)
    local code, out, err = h.run("timeline", dir .. "/tree", "-o", dir .. "/out")
    assert.equal(1, code)
    assert.truthy(err:find("[ERROR] rank 1 (tree): " .. dst:format(1) .. ":1:50001 (byte 50000)", 1, true))
    assert.truthy(out:find("rank 0 (tree): critical_path_ratio", 1, true))
    local m = core.json.load(dir .. "/out/timeline_metrics.json")
    assert.equal(1, #m.ranks)
    assert.equal(0, m.ranks[1].rank)
    assert.equal(1, m.failed[1].rank)
  end)
end)

describe("timeline on real samples agrees with the profiler's own step split", function()
  local L0 = h.real .. "/msinsight_pytorch_text_level0"

  -- computing / stage and overlapped / communication of StepTraceTime, step_trace_time.csv
  local function agrees(r, t)
    assert.near(t.computing / t.stage, r.dashboard.op_utilization, 0.01)
    assert.near(t.overlapped / t.communication, r.dashboard.overlap_ratio, 0.01)
    assert.near(t.stage / 1000, r.step.stage_ms, 0.01)
    assert.near(t.preparing / 1000, r.step.preparing_ms, 0.01)
    -- the profiler's Free is the stage's time with neither compute nor communication
    assert.near(1 - t.free / t.stage, r.dashboard.critical_path_ratio, 0.01)
    assert.equal(t.step, r.step.id)
    -- the longest path is a path through the stage: never longer than it
    assert.is_true(r.critical_path.longest_path_ms <= r.step.stage_ms)
    -- it crosses the streams at their event waits (five in each sample: the compute stream
    -- hands over to the communication stream once, each allreduce hands back): all the
    -- communication the profiler counts is on it, and the compute before and after it (the
    -- optimizer's ForeachAdd kernels wait for the last allreduce)
    local cp = r.critical_path
    assert.equal(5, cp.wait_edges)
    assert.near(t.communication / 1000, cp.composition.comm, 0.1)
    local compute = 0
    for c, v in pairs(cp.composition) do
      if c:match("^compute:") then compute = compute + v end
    end
    assert.is_true(compute > 2, compute)
    assert.is_true(cp.comm_share < 0.96, cp.comm_share)
  end

  it("ascend_pytorch_profiler_0.db level0 and level2 against analysis.db StepTraceTime", function()
    for _, level in ipairs({ 0, 2 }) do
      local r = analyse(h.real .. "/msinsight_pytorch_db_level" .. level)
      local t = truth["db_level" .. level]
      agrees(r, t)
      -- without the Overlap Analysis lanes, the overlap and utilisation are the profiler's own
      -- row of the step: the tasks would count the communication stream's event waits and
      -- records as communication (90.248 ms in level 0 against the profiler's 89.881)
      assert.truthy(r.op_util.source:find("analysis.db$"))
      assert.equal(r.op_util.source, r.overlap.source)
      assert.near(t.communication / 1000, r.overlap.communication_ms, 1e-9)
      assert.near(t.communication_not_overlapped / 1000, r.overlap.not_overlapped_ms, 1e-9)
      assert.near(t.computing / 1000, r.overlap.computing_ms, 1e-9)
      assert.near(t.free / 1000, r.overlap.free_ms, 1e-9)
      assert.near(t.overlapped / t.communication, r.overlap.overlap_ratio, 1e-12)
      assert.near(t.computing / t.stage, r.op_util.op_utilization, 1e-12)
      -- HCCL's reduce kernels say AI_CORE but run on the communication stream
      for _, l in ipairs(r.lanes) do
        if l.name == "Ascend Hardware/Stream 4" then assert.equal("comm", l.kind) end
      end
      -- the step split came from analysis.db beside the .db
      assert.truthy(r.step_trace:find("analysis.db$"))
      assert.is_nil(r.jitter) -- one step: no CV
      assert.truthy(r.not_computed.jitter:find("only 1 step", 1, true))
    end
  end)

  it("names every bar of the reports in the language asked for, from lanes, a step split's row or tasks", function()
    -- a key the catalogue lacks comes out as the key ("report.timeline.free" was the Free bar)
    local dir = h.tmpdir()
    for _, sample in ipairs({ "msinsight_pytorch_text_level0", "msinsight_pytorch_db_level0", "msinsight_pytorch_text_level1" }) do
      for _, lang in ipairs({ "en", "zh" }) do
        local out = ("%s/%s_%s"):format(dir, sample, lang)
        local code, _, err = h.run("--lang", lang, "timeline", h.real .. "/" .. sample, "-o", out, "-q")
        assert.equal(0, code, err)
        for _, f in ipairs({ "timeline_report.html", "timeline_report.md" }) do
          local text = h.read(out .. "/" .. f)
          assert.falsy(text:find("report%.[%w_]+%.[%w_]+"), sample .. " " .. lang .. " " .. f .. ": "
            .. tostring(text:match("report%.[%w_]+%.[%w_]+")))
        end
        local page = h.read(out .. "/timeline_report.html")
        assert.truthy(page:find(lang == "en" and "free (no compute, no communication)" or "空闲（无计算、无通信）", 1, true), sample)
      end
    end
    -- the level-1 rank has its step split alone: its Computing / Stage and Overlapped /
    -- Communication (step_trace_time.csv: 8873.756 / 136581.0 and 4028.675 / 105991.878 us)
    local r = assert(core.json.load(dir .. "/msinsight_pytorch_text_level1_en/timeline_metrics.json")).ranks[1]
    assert.near(8873.756000000001 / 136581.0, r.op_util.op_utilization, 1e-12)
    assert.near(4028.6750000000175 / 105991.87800000001, r.overlap.overlap_ratio, 1e-12)
    assert.same({ 50, 1 }, { r.step.id, r.steps_found })
    -- a step the split does not have fails the rank, as for a trace without it
    local code, _, err = h.run("timeline", h.real .. "/msinsight_pytorch_text_level1", "--step", "99", "-o", dir .. "/s99")
    assert.equal(1, code)
    assert.truthy(err:find("step_trace_time.csv: step 99 is not in the step split (steps: 50 to 50)", 1, true), err)
    h.cleanup(dir)
  end)

  it("takes a step split's odd rows as they are: text times, no step id, rows that do not add up", function()
    local dir = h.tmpdir()
    -- hostile/steptrace_text.db: step 50 with Computing 'abc' (SQLite would read it as 0), then
    -- the same row without a step id: the first is warned about and has no time, the second is
    -- the step, which has no id to name
    local db = dir .. "/r_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db"
    h.copy(h.fixtures .. "/hostile/steptrace_text.db", db)
    local code, out, err = h.run("timeline", db, "-o", dir .. "/o1")
    assert.equal(0, code, err)
    assert.truthy(err:find("[WARNING] rank 0: " .. db .. ": 1 value(s) are not numbers and were left empty; first: "
      .. "table StepTraceTime, row 1, column computing", 1, true), err)
    assert.falsy((out .. err):find("nil", 1, true), out .. err)
    local r = core.json.load(dir .. "/o1/timeline_metrics.json").ranks[1]
    assert.near(8843.91 / 120625.19, r.op_util.op_utilization, 1e-12)
    assert.is_nil(r.step.id)
    assert.truthy(out:find("op_util_low: AI Core busy only 7.3% of the step [open the Timeline view]", 1, true), out)
    -- steps out of order: a step it lacks is named with the split's lowest and highest; a row
    -- with more not overlapped than communication gives an overlap of 0, not below; a time past
    -- an integer's range is written in the report as a number (its %d raised)
    local csv = dir .. "/step_trace_time.csv"
    h.write(csv, "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage\n"
      .. "5,10,50,0,10,5,65\n1,10,50,0,10,5,65\n9,1e22,50,0,10,5,1e22\n3,10,50,0,10,5,65\n")
    local c2, _, e2 = h.run("timeline", csv, "--step", "7", "-o", dir .. "/o2")
    assert.equal(1, c2)
    assert.truthy(e2:find("step 7 is not in the step split (steps: 1 to 9)", 1, true), e2)
    for _, step in ipairs({ "5", "9" }) do
      local c3, _, e3 = h.run("timeline", csv, "--step", step, "-o", dir .. "/o" .. step)
      assert.equal(0, c3, e3)
      local m = core.json.load(dir .. "/o" .. step .. "/timeline_metrics.json").ranks[1]
      assert.equal(0, m.overlap.overlap_ratio)
      assert.truthy(h.read(dir .. "/o" .. step .. "/timeline_report.html"):find("</html>", 1, true))
    end
    h.cleanup(dir)
  end)

  it("a database export without its own step split: overlap and utilisation from the tasks", function()
    local dir = h.tmpdir()
    local db = "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    h.write(dir .. db, h.read(h.real .. "/msinsight_pytorch_db_level0" .. db))
    local function check(r)
      assert.equal("tasks", r.overlap.source)
      assert.equal("tasks", r.op_util.source)
      assert.near(90.247863, r.overlap.communication_ms, 1e-6)
    end
    check(analyse(dir))
    -- a cluster file's row of the step is its slowest rank's, so not this rank's composition
    local csv = dir .. "/cluster_step_trace_time.csv"
    h.write(csv, "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage\n"
      .. "50,rank,0,8843.91,85881.122,3999.454,89880.576,25900.158,120625.19\n"
      .. "50,rank,1,8000,86000,4000,90000,26000,121000\n")
    check(analyse(dir, { step_trace = csv }))
    -- one rank's step split given for a tree of ranks (--step-trace) is no rank's composition:
    -- each keeps its own analysis.db's row, or its tasks
    h.write(csv, "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage\n"
      .. "50,8000,1000,5000,6000,1000,10000\n")
    local out = "/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/"
    for _, f in ipairs({ "ascend_pytorch_profiler_0.db", "analysis.db" }) do
      h.write(dir .. out .. f, h.read(h.real .. "/msinsight_pytorch_db_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/" .. f))
    end
    local res = assert(timeline.run(dir, { step_trace = csv, jobs = 1 }))
    assert.equal(2, #res.ranks)
    assert.same({ "tasks", "tasks" }, { res.ranks[1].overlap.source, res.ranks[1].op_util.source })
    assert.near(90.247863, res.ranks[1].overlap.communication_ms, 1e-6)
    assert.same({ "tasks", "tasks" }, { res.ranks[2].overlap.source, res.ranks[2].op_util.source })
    -- given for the one rank of a run, it is that rank's
    local one = assert(timeline.run(dir .. "/rank0_ascend_pt", { step_trace = csv, jobs = 1 })).ranks[1]
    assert.same({ csv, 5000 / 6000 }, { one.overlap.source, one.overlap.overlap_ratio })
    h.cleanup(dir)
  end)

  it("msinsight level0 trace_view.json, two ranks, against step_trace_time.csv", function()
    local res = assert(timeline.run(L0, { jobs = 2 }))
    assert.equal(2, #res.ranks)
    for i, r in ipairs(res.ranks) do
      agrees(r, truth["text_level0_rank" .. (i - 1)])
      assert.equal("Overlap Analysis", r.op_util.source)
      assert.equal("Overlap Analysis", r.overlap.source)
    end
    -- the step is the ProfilerStep's wall time, the stage what the profiler calls Stage
    assert.near(136.89782, res.ranks[1].step.wall_ms, 1e-9)
  end)

  it("reads msprof's slices of a timeline together, the metadata in the first slice alone", function()
    local dir = h.tmpdir()
    local events = core.json.load(L0 .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
    events = events.traceEvents or events
    local slices, meta = { {}, {}, {} }, {}
    for _, e in ipairs(events) do
      if e.ph == "M" then meta[#meta + 1] = e end
    end
    local k = 0
    for _, e in ipairs(events) do
      if e.ph ~= "M" then
        k = k + 1
        table.insert(slices[math.min(3, 1 + k * 3 // (#events - #meta + 1))], e)
      end
    end
    for _, e in ipairs(meta) do table.insert(slices[1], e) end
    local out = dir .. "/rank0_ascend_pt/PROF_1/mindstudio_profiler_output"
    -- slice 10 comes last (numbers, not names, give the order), then slice 2
    for i, n in ipairs({ 0, 2, 10 }) do
      h.write(("%s/msprof_slice_%d_20250101.json"):format(out, n), core.json.encode(slices[i]))
    end
    local whole = analyse(L0 .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
    local sliced = analyse(dir)
    assert.truthy(sliced.trace:find("msprof_slice_0_20250101.json$"))
    assert.equal(whole.events, sliced.events)
    assert.same(whole.dashboard, sliced.dashboard)
    assert.equal(#whole.lanes, #sliced.lanes)
    -- a slice given by name brings its siblings too
    assert.same(whole.dashboard, analyse(out .. "/msprof_slice_2_20250101.json").dashboard)
    -- every slice is an input of the rank's unit: its bytes weigh the shards, a change to it is caught
    local plan = assert(timeline.plan(dir))
    assert.same({ out .. "/msprof_slice_0_20250101.json", out .. "/msprof_slice_2_20250101.json",
                  out .. "/msprof_slice_10_20250101.json" }, plan.units[1].files)
    h.cleanup(dir)
  end)

  it("one step: no step CV or communication jitter in the JSON, the report or the dashboard", function()
    local dir = h.tmpdir()
    local code, out = h.run("timeline", L0 .. "/rank0_ascend_pt", "-o", dir)
    assert.equal(0, code)
    assert.falsy(out:find("step_cv", 1, true))
    local m = core.json.load(dir .. "/timeline_metrics.json")
    assert.is_nil(m.jitter)
    assert.is_nil(m.comm_jitter)
    assert.is_nil(m.dashboard.step_cv)
    assert.is_nil(m.dashboard.comm_jitter)
    local md = h.read(dir .. "/timeline_report.md")
    assert.falsy(md:find("| step_cv", 1, true))
    assert.falsy(md:find("### 6 Jitter", 1, true))
    assert.truthy(md:find("- jitter: only 1 step(s): step CV needs at least 3", 1, true))
    assert.falsy(h.read(dir .. "/timeline_report.html"):find("step_cv</td>", 1, true))
    h.cleanup(dir)
  end)

  it("the 2024 trace (Task Type: Other): compute share against its Computing lane", function()
    local p = h.real .. "/mstt_msprof_analyze_tests/timeline_advice/trace_view.json"
    local t = truth.timeline_advice
    local r = analyse(p)
    assert.equal("Overlap Analysis", r.op_util.source)
    assert.near(t.computing / t.stage, r.dashboard.op_utilization, 0.01)
    -- without the lanes, the kernels typed Other are classed by name, and agree
    local dir = h.tmpdir()
    h.write(dir .. "/no_overlap.lua", [[return { lanes = { overlap = "^no such lane$" } }]])
    local r2 = analyse(p, { rules = dir .. "/no_overlap.lua" })
    assert.equal("tasks", r2.op_util.source)
    assert.near(t.computing / t.stage, r2.dashboard.op_utilization, 0.01)
    h.cleanup(dir)
  end)

  it("rl-insight mstx_data: only Overlap Analysis lanes, four roles", function()
    local res = assert(timeline.run(h.real .. "/rl-insight/mstx_data", { jobs = 2 }))
    local by = {}
    for _, r in ipairs(res.ranks) do by[r.role] = r end
    assert.near(1 - 23860 / 120642, by.agent_loop_rollout_replica_0.dashboard.overlap_ratio, 1e-12)
    assert.equal(0, by.actor_update.dashboard.overlap_ratio)
    -- Computing 145.623 us of a stage from the first Free (639877.2) to the last Communication (654692.5)
    assert.near(145.623 / (654692.5 - 639877.2), by.actor_update.dashboard.op_utilization, 1e-6)
    assert.truthy(by.actor_update.not_computed.critical_path)
    assert.is_nil(by.actor_update.dashboard.critical_path_ratio)
  end)

  it("takes rule overrides from a user file without rebuilding, and answers in Chinese", function()
    local dir = h.tmpdir()
    h.write(dir .. "/r.lua", [[return { rules = {
      { id = "overlap_low", value = 0.01 },                      -- only below 1% now
      { id = "lane_idle", disabled = true },
      { id = "many_lanes", metric = "max_lane_idle", op = ">", value = 0.25, severity = "error",
        finding = { en = "custom: %s", zh = "自定义：%s" } },
    } }]])
    local code, out = h.run("--lang", "zh", "timeline", L0 .. "/rank0_ascend_pt", "-o", dir, "--rules", dir .. "/r.lua")
    assert.equal(0, code)
    assert.falsy(out:find("⚠ overlap_low", 1, true))
    assert.falsy(out:find(" lane_idle:", 1, true)) -- disabled: neither a warning nor a note
    assert.truthy(out:find("many_lanes: 自定义：30.2%", 1, true))
    assert.truthy(out:find("critical_path_low: 计算、通信与拷贝仅占 step 的 77.8%", 1, true))
    h.write(dir .. "/bad.lua",
      [[return { rules = { { id = "x", metric = "op_utilization", op = "<<", value = 1, severity = "warning" } } }]])
    local code2, _, err2 = h.run("timeline", L0 .. "/rank0_ascend_pt", "-o", dir, "--rules", dir .. "/bad.lua")
    assert.equal(2, code2) -- a wrong rule file is a usage error
    assert.truthy(err2:find(dir .. '/bad.lua: rule x, key rules[1].op: "<<" is not one of "<", ">"', 1, true), err2)
    -- a misspelt metric or key would never fire: both are usage errors
    h.write(dir .. "/typo.lua", [[return { rules = { { id = "overlap_low", metric = "overlap_ratoi" } } }]])
    local code3, _, err3 = h.run("--lang", "en", "timeline", L0 .. "/rank0_ascend_pt", "-o", dir, "--rules",
      dir .. "/typo.lua")
    assert.equal(2, code3)
    assert.truthy(err3:find(dir .. '/typo.lua: rule overlap_low, key rules[1].metric: "overlap_ratoi" is not one of',
      1, true), err3)
    h.write(dir .. "/key.lua", [[return { rules = { { id = "overlap_low", vlaue = 0.5 } } }]])
    local code4, _, err4 = h.run("--lang", "en", "timeline", L0 .. "/rank0_ascend_pt", "-o", dir, "--rules",
      dir .. "/key.lua")
    assert.equal(2, code4)
    assert.truthy(err4:find(dir .. '/key.lua: rule overlap_low, key rules[1].vlaue: unknown key "vlaue"', 1, true), err4)
    h.cleanup(dir)
  end)

  it("a trace given on its own in a rank folder is that rank's, as the folder is", function()
    local dir = h.tmpdir()
    local _, file_out = h.run("timeline", L0 .. "/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", "-o",
      dir .. "/f", "-q")
    local _, folder_out = h.run("timeline", L0 .. "/rank1_ascend_pt", "-o", dir .. "/d", "-q")
    -- profiler_info_1.json: rank 1; the role is the folder above it, as for the folder
    assert.truthy(file_out:find("^rank 1 %(msinsight_pytorch_text_level0%): critical_path_ratio 73.2%%"), file_out)
    assert.equal(folder_out:match("^[^\n]*"), file_out:match("^[^\n]*"))
    -- a trace in no rank folder is rank 0
    h.copy(L0 .. "/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", dir .. "/loose/trace_view.json")
    local _, loose = h.run("timeline", dir .. "/loose/trace_view.json", "-o", dir .. "/l", "-q")
    assert.truthy(loose:find("^rank 0: critical_path_ratio 73.2%%"), loose)
    h.cleanup(dir)
  end)

  it("finds the traces of a tree without rank folders, each folder a rank 0 named by its path", function()
    local dir = h.tmpdir()
    local tree = h.real .. "/mstt_msprof_analyze_tests" -- timeline_advice/trace_view.json, no *_ascend_pt
    local code, out = h.run("timeline", tree, "-o", dir .. "/t", "-q")
    assert.equal(0, code)
    local _, direct = h.run("timeline", tree .. "/timeline_advice", "-o", dir .. "/d", "-q")
    assert.truthy(out:find("^rank 0 %(timeline_advice%): critical_path_ratio 15.9%%"), out)
    assert.equal(direct:match("^[^\n]*"), out:match("^[^\n]*"))
    -- two such folders: two ranks 0, by their paths
    h.copy(tree .. "/timeline_advice/trace_view.json", dir .. "/in/a/trace_view.json")
    h.copy(tree .. "/timeline_advice/trace_view.json", dir .. "/in/b/c/trace_view.json")
    local _, two = h.run("timeline", dir .. "/in", "-o", dir .. "/two", "-q")
    local ranks = {}
    for line in two:gmatch("[^\n]+") do ranks[#ranks + 1] = line:match("^rank 0 %((.-)%):") end
    assert.same({ "a", "b/c" }, ranks)
    h.cleanup(dir)
  end)

  it("writes timeline_metrics.json with the documented keys and a report with the dashboard", function()
    local dir = h.tmpdir()
    local code, out = h.run("timeline", L0 .. "/rank0_ascend_pt", "-o", dir)
    assert.equal(0, code)
    assert.truthy(out:find("⚠ overlap_low", 1, true))
    assert.truthy(out:find("ℹ lane_idle: a compute lane is idle 30.2%", 1, true), out) -- a note, not a warning
    local m = core.json.load(dir .. "/timeline_metrics.json")
    local t = truth.text_level0_rank0
    assert.near(1 - t.free / t.stage, m.critical_path.critical_path_ratio, 0.01)
    assert.near(t.computing / t.stage, m.op_util.op_utilization, 0.01)
    assert.near(t.overlapped / t.communication, m.overlap.overlap_ratio, 0.01)
    assert.truthy(#m.lanes > 5)
    -- every finding names its evidence
    assert.truthy(#m.findings > 0)
    for _, f in ipairs(m.findings) do
      assert.equal(50, f.evidence.step)
      assert.truthy(({ Timeline = true, Operator = true, Communication = true })[f.evidence.view])
    end
    local md = h.read(dir .. "/timeline_report.md")
    assert.truthy(md:find("### Metrics dashboard", 1, true))
    assert.truthy(md:find("| overlap_ratio | 0.0468 | 4.7% ⚠ |", 1, true))
    assert.falsy(md:find("| pp_bubble_ratio", 1, true))
    -- the 396 async_npu flows' gaps (python on the trace: the slices holding each end; 396 > 0,
    -- the widest 78638.709 us, 2770.687 ms summed: more than the step, so not shown summed)
    assert.truthy(md:find("along 396 flow edges: 396 device tasks start after their launch ended, the widest by "
      .. "78.639 ms", 1, true))
    assert.equal(2770.687088, m.alignment.total_ms)
    h.cleanup(dir)
  end)
end)

-- ids of the rules that fired, sorted
local function fired(r)
  local ids = {}
  for _, f in ipairs(r.findings) do ids[#ids + 1] = f.id end
  table.sort(ids)
  return ids
end

local function cv(list)
  local mean = 0
  for _, x in ipairs(list) do mean = mean + x / #list end
  local var = 0
  for _, x in ipairs(list) do var = var + (x - mean) ^ 2 / #list end
  return math.sqrt(var) / mean
end

describe("timeline rules on generated runs with known truth", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("a healthy run: no rule fires", function()
    local t = gen.healthy(dir .. "/healthy.json", 10)
    local r = analyse(dir .. "/healthy.json")
    assert.same({}, fired(r))
    assert.near(cv(t.times), r.dashboard.step_cv, 1e-12)
    assert.near(0.0198, r.dashboard.step_cv, 0.0001) -- sqrt(392) / 1000
    assert.same({}, r.jitter.long_tail)
    assert.near(1, r.dashboard.op_utilization, 1e-12)
    assert.near(1, r.dashboard.overlap_ratio, 1e-12)
    assert.near(0, r.dashboard.comm_jitter, 1e-12)
    assert.is_nil(r.compare) -- no long step to compare
  end)

  it("names no part as grown when the step compared is faster than the typical one", function()
    gen.healthy(dir .. "/h.json", 10)
    local r = analyse(dir .. "/h.json", { compare_step = 1 }) -- 972 us against the typical 1000 us
    local c = r.compare
    assert.equal(1, c.step)
    assert.is_nil(c.grew_most)
    for _, x in ipairs(c.categories) do assert.is_true(x.delta_ms <= 0, x.name) end
    local code = h.run("timeline", dir .. "/h.json", "-o", dir .. "/out", "--compare-step", "1", "--lang", "en")
    assert.equal(0, code)
    local md = h.read(dir .. "/out/timeline_report.md")
    assert.truthy(md:find("No part of the step grew.", 1, true))
    assert.falsy(md:find("Grew most", 1, true))
  end)

  it("a slow step with a data-loader stall: long tail, jitter from the compute side, and what grew", function()
    gen.dataloader_stall(dir .. "/stall.json", 5, 600)
    local r = analyse(dir .. "/stall.json")
    assert.same({ "compute_side_jitter", "long_tail", "step_jitter" }, fired(r))
    local times = {}
    for k = 1, 10 do times[k] = k == 5 and 1.6 or 1.0 end
    assert.near(cv(times), r.dashboard.step_cv, 1e-12)
    assert.equal(1, #r.jitter.long_tail)
    assert.equal("5", r.jitter.long_tail[1].step)
    -- the long step against the typical one: the host-only start grew by the stall
    local c = r.compare
    assert.equal(5, c.step)
    assert.equal("preparing", c.grew_most)
    for _, x in ipairs(c.categories) do
      if x.name == "preparing" then assert.near(0.6, x.delta_ms, 1e-9) end
      if x.name == "step" then assert.near(0.6, x.delta_ms, 1e-9) end
      if x.name == "compute" then assert.near(0, x.delta_ms, 1e-9) end
    end
    assert.equal("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", c.operators[1].name)
    assert.near(0.6, c.operators[1].delta_ms, 1e-9)
    -- the findings point at the long step and what grew in it
    for _, f in ipairs(r.findings) do
      assert.equal(5, tonumber(f.evidence.step))
      assert.equal(c.operators[1].name, f.evidence.operator)
    end
    -- --compare-step picks another step; one that is not there says so
    assert.equal(3, analyse(dir .. "/stall.json", { compare_step = 3 }).compare.step)
    assert.truthy(analyse(dir .. "/stall.json", { compare_step = 99 }).compare.error:find("not in the trace", 1, true))
  end)

  it("PP 4 stages x 6 micro-batches: the bubble is the union of receive waits, at the theory", function()
    local t = gen.pipeline(dir .. "/pp.json", 4, 6, 100, 200, 3)
    -- the profiler's split of the same run: its Bubble column is the receive time
    local rows = { "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Preparing" }
    for k = 1, 3 do rows[#rows + 1] = ("%d,1800,0,30,30,0,1800,%d,0"):format(k, t.bubble_us) end
    h.write(dir .. "/step_trace_time.csv", table.concat(rows, "\n") .. "\n")
    local r = analyse(dir .. "/pp.json", { pp = 4, microbatches = 6 })
    assert.near(t.bubble_us / 1000, r.pp_bubble.bubble_ms, 1e-12)
    assert.near(r.pp_bubble.profiler_bubble_ms, r.pp_bubble.bubble_ms, 1e-12)
    assert.near(t.bubble_us / t.step_us, r.dashboard.pp_bubble_ratio, 1e-12)
    assert.near(3 / 9, r.pp_bubble.theory, 1e-12)
    assert.near(0, r.pp_bubble.excess, 1e-12)
    -- the stage is the profiler's Stage (end-to-end - Bubble: 2700 - 900 us, the CSV's 1800), and
    -- the ratios are over it: compute 1800 us of it, nothing free
    assert.near(t.step_us / 1000, r.step.span_ms, 1e-12)
    assert.near(1.8, r.step.stage_ms, 1e-12)
    assert.near(1, r.dashboard.op_utilization, 1e-12)
    assert.near(1, r.dashboard.critical_path_ratio, 1e-12)
    -- the host launches during the wait, but the wait is the pipeline's, not the host's
    assert.equal(0, r.dashboard.host_launch_gap_ratio)
    assert.same({}, fired(r))
    -- with 12 micro-batches the theory is 3/15: the same bubble is now above it
    local r12 = analyse(dir .. "/pp.json", { pp = 4, microbatches = 12 })
    assert.same({ "bubble_above_theory" }, fired(r12))
    assert.near(1 / 3 - 3 / 15, r12.pp_bubble.excess, 1e-12)
  end)

  it("a receive wait is the pipeline's bubble: no communication to hide, no operator to optimise", function()
    -- 8 stages x 2 micro-batches: the 2100 us receive wait is the longest chain of the step
    gen.pipeline(dir .. "/pp8.json", 8, 2, 100, 200, 3)
    local r = analyse(dir .. "/pp8.json")
    assert.near(2.1, r.critical_path.composition.bubble, 1e-12)
    assert.near(0.01, r.critical_path.composition.p2p, 1e-12)
    assert.near(0.01 / 2.11, r.critical_path.comm_share, 1e-12)
    assert.same({}, fired(r))
    -- 5 x 5: the 600 us wait is the slowest operator by raw time, the compute stream's 750 us
    -- the longest chain
    gen.pipeline(dir .. "/pp5.json", 5, 5, 100, 50, 3)
    local r5 = analyse(dir .. "/pp5.json")
    assert.equal("hcom_receive_2", r5.raw_top)
    assert.near(0.75, r5.critical_path.longest_path_ms, 1e-12)
    assert.same({}, fired(r5))
  end)

  it("stream waits tie the critical path across streams: exposed communication on it, hidden not", function()
    gen.stream_waits(dir .. "/waits.json", 5, true)
    local r = analyse(dir .. "/waits.json")
    -- MatMul 300 -> (record) the all-reduce's notify wait 600 -> (record) ApplyAdam 100; without the
    -- waits the compute stream alone (990 us, its wait as sync) would be the path, with no
    -- communication on it
    assert.near(1.0, r.critical_path.longest_path_ms, 1e-12)
    assert.near(0.6, r.critical_path.comm_share, 1e-12)
    assert.equal(2, r.critical_path.wait_edges)
    assert.equal(0, r.critical_path.flow_edges)
    assert.near(0.4, r.critical_path.composition["compute:AI_CORE"], 1e-12)
    assert.is_true(fired(r)[1] == "comm_on_critical_path")
    -- the stream's notify wait is named by the operator that holds it, counted once
    assert.same({ "hcom_allReduce_3", 0.6, 1 }, { r.hotspots[1].name, r.hotspots[1].path_ms, r.hotspots[1].path_count })
    for _, f in ipairs(r.findings) do
      if f.id == "comm_on_critical_path" then assert.equal("hcom_allReduce_3", f.evidence.operator) end
    end
    gen.stream_waits(dir .. "/hidden.json", 5, false)
    local ok = analyse(dir .. "/hidden.json")
    assert.near(1.0, ok.critical_path.longest_path_ms, 1e-12)
    assert.equal(0, ok.critical_path.comm_share)
    assert.equal(1, ok.critical_path.wait_edges) -- the compute stream never waits
    assert.equal(1, ok.dashboard.overlap_ratio)
    for _, id in ipairs(fired(ok)) do assert.is_true(id ~= "comm_on_critical_path" and id ~= "overlap_low", id) end
  end)

  it("two groups at once: a stream's task on the path is its own group's operator", function()
    local reduce = { "hcom_allReduce_3", 0.6 }
    for variant, want in pairs({ longer = reduce, same_start = reduce, nested = reduce, touch = reduce,
                                 shared_stream = { "hcom_allGather_3", 0.5 } }) do
      gen.two_groups(dir .. "/two.json", 5, variant)
      local r = analyse(dir .. "/two.json")
      assert.near(1.0, r.critical_path.longest_path_ms, 1e-12)
      assert.same({ want[1], want[2], 1 }, { r.hotspots[1].name, r.hotspots[1].path_ms, r.hotspots[1].path_count }, variant)
      for _, f in ipairs(r.findings) do
        if f.id == "comm_on_critical_path" then assert.equal(want[1], f.evidence.operator, variant) end
      end
    end
  end)

  it("a stream wait of no length hands over to the task that starts with it", function()
    -- Stream 4's notify wait 0-300 us, then its record at 300; Stream 2 waits from 300 to 300,
    -- then MatMul 300-400 and 400-500. The record's edge goes to the first MatMul (the wait ends
    -- before a task that starts with it): the path is the whole 500 us, 200 of it compute
    local steps = {}
    local lanes = { { "Python", "Thread 1", steps }, { "Ascend Hardware", "Stream 2", {} },
                    { "Ascend Hardware", "Stream 4", {} } }
    for k = 0, 2 do
      local t = k * 1000
      steps[#steps + 1] = { "ProfilerStep#" .. (k + 1), t, 500 }
      table.insert(lanes[2][3], { "MatMul", t + 300, 100, "AI_CORE" })
      table.insert(lanes[2][3], { "MatMul", t + 400, 100, "AI_CORE" })
      table.insert(lanes[2][3], { "EVENT_WAIT", t + 300, 0, "EVENT_WAIT_SQE" })
      table.insert(lanes[3][3], { "Notify Wait", t, 300, "Notify Wait" })
      table.insert(lanes[3][3], { "EVENT_RECORD", t + 300, 0, "EVENT_RECORD_SQE" })
    end
    gen.write(dir .. "/zero.json", lanes)
    local r = analyse(dir .. "/zero.json")
    assert.equal(1, r.critical_path.wait_edges)
    assert.near(0.5, r.critical_path.longest_path_ms, 1e-12)
    assert.near(0.2, r.critical_path.composition["compute:AI_CORE"], 1e-12)
  end)

  it("exposed communication: overlap and the critical path say so, host-bound does not", function()
    gen.exposed_comm(dir .. "/exposed.json", 5)
    local r = analyse(dir .. "/exposed.json")
    assert.same({ "comm_on_critical_path", "lane_idle", "op_util_low", "overlap_low" }, fired(r))
    assert.equal(0, r.dashboard.overlap_ratio)
    -- compute 500 + all-reduce 600 + optimizer 10 us, tied by flows
    assert.near(1.11, r.critical_path.longest_path_ms, 1e-12)
    assert.near(600 / 1110, r.critical_path.comm_share, 1e-12)
    assert.near(510 / 1110, r.dashboard.op_utilization, 1e-12)
    assert.equal(0, r.dashboard.host_launch_gap_ratio)
    for _, f in ipairs(r.findings) do
      if f.id == "comm_on_critical_path" then
        assert.equal("Communication", f.evidence.view)
        assert.equal("HCCL/Group 0 Communication", f.evidence.lane)
      end
    end
  end)
end)

describe("timeline host-bound gaps must recur", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("fires when launch gaps are in most steps, not when they are in a few", function()
    gen.host_bound(dir .. "/hb.json", 5, { 1, 2, 3, 4, 5 })
    local r = analyse(dir .. "/hb.json")
    assert.same({ "host_bound" }, fired(r))
    assert.near(90 / 990, r.host.launch_gap_median, 1e-12)
    -- two of five steps: the typical step may show gaps, but they do not recur
    gen.host_bound(dir .. "/hb2.json", 5, { 2, 4 })
    local r2 = analyse(dir .. "/hb2.json", { step = 2 })
    assert.near(90 / 990, r2.dashboard.host_launch_gap_ratio, 1e-12)
    assert.equal(0, r2.host.launch_gap_median)
    assert.same({}, fired(r2))
  end)

  it("a gap before a kernel launched long before is the device's, not the host's", function()
    gen.device_bound(dir .. "/db.json", 5, true)
    local r = analyse(dir .. "/db.json")
    assert.equal(0, r.host.launch_gap_ms)
    for _, id in ipairs(fired(r)) do assert.not_equal("host_bound", id) end
    -- the same trace without its flows: the gaps under the host's launching count, as nothing
    -- says the kernels were queued (19 gaps of 3 us in the 1057 us stage)
    gen.device_bound(dir .. "/db2.json", 5, false)
    local r2 = analyse(dir .. "/db2.json")
    assert.near(19 * 3 / 1057, r2.dashboard.host_launch_gap_ratio, 1e-12)
    assert.same({ "host_bound" }, fired(r2))
  end)
end)

describe("timeline steps of a device that runs behind the host", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  -- by launch every step is 800 us of MatMuls in a 900 us run, then a 100 us all-reduce; host
  -- windows would hold the end of the step before (the first one no all-reduce at all)
  for _, lag in ipairs({ 0, 300, 600, 1500 }) do
    it(("gives each step the tasks it launched, %d us behind"):format(lag), function()
      gen.device_lagging(dir .. "/lag.json", 10, lag)
      local r = analyse(dir .. "/lag.json")
      assert.equal(5, r.step.id)
      assert.near(1.0, r.step.stage_ms, 1e-9)
      assert.near(0, r.step.preparing_ms, 1e-9)
      -- the picture is the step's own: from where its host-only time starts, not the step before's tasks
      assert.near(1.0, r.step.picture_ms, 1e-9)
      assert.near((4000 + lag) / 1000, r.step.start_ms, 1e-9)
      assert.near(0.8, r.dashboard.op_utilization, 1e-9)
      assert.near(0.9, r.dashboard.critical_path_ratio, 1e-9)
      -- the step's own ten launches, not those of the step before still running in its host time
      assert.equal(10, r.critical_path.flow_edges)
      assert.equal(10, r.alignment.edges)
      assert.equal(lag > 20 and 10 or 0, r.alignment.count)
      assert.near(0, r.comm_jitter.cv, 1e-9)
      for _, c in ipairs(r.jitter.series.comm) do assert.near(0.1, c, 1e-9) end
      assert.same({ "lane_idle", "overlap_low" }, fired(r))
    end)
  end

  -- a step of host work alone: the device is still running the step before, which keeps its
  -- end (the device side of a window that launched nothing starts as far behind as the one
  -- before did)
  for _, lag in ipairs({ 300, 600, 1500 }) do
    it(("leaves the step before a step that launched nothing its end, %d us behind"):format(lag), function()
      gen.device_lagging(dir .. "/idle.json", 10, lag, { [5] = true })
      local r = analyse(dir .. "/idle.json", { step = 4 })
      assert.near(1.0, r.step.stage_ms, 1e-9)
      assert.near((3000 + lag) / 1000, r.step.start_ms, 1e-9)
      assert.near(0.8, r.dashboard.op_utilization, 1e-9)
      local comm = r.jitter.series.comm
      for k = 1, 10 do assert.near(k == 5 and 0 or 0.1, comm[k], 1e-9) end
      local r6 = analyse(dir .. "/idle.json", { step = 6 })
      assert.near(1.0, r6.step.stage_ms, 1e-9)
      assert.near((5000 + lag) / 1000, r6.step.start_ms, 1e-9)
    end)
  end

  it("loads data serially only when the device computes nothing, the step before's tasks included", function()
    -- the host loads for 80 us at each step's start while the device, 150 or 600 us behind,
    -- still runs the step before's back-to-back MatMuls: no loading is serial
    for _, lag in ipairs({ 150, 600 }) do
      local lanes, fl, t = { { "Python", "Thread 1", {} }, { "Ascend Hardware", "Stream 2", {} },
                             { "HCCL", "Group 0 Communication", {} } }, {}, 0
      for k = 1, 10 do
        table.insert(lanes[1][3], { "ProfilerStep#" .. k, t, 1000 })
        table.insert(lanes[1][3], { "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t, 80 })
        for j = 0, 9 do
          table.insert(lanes[1][3], { "aclnnMatmul launch", t + 100 + j * 85, 20 })
          table.insert(lanes[2][3], { "MatMul", t + lag + j * 100, 100, "AI_CORE" })
          fl[#fl + 1] = { id = #fl + 1, from = { 1, t + 101 + j * 85 }, to = { 2, t + lag + j * 100 } }
        end
        table.insert(lanes[3][3], { "hcom_allReduce_" .. k, t + lag + 500, 200 })
        t = t + 1000
      end
      trace(dir .. "/loader.json", lanes, fl)
      local r = analyse(dir .. "/loader.json")
      assert.near((4000 + lag) / 1000, r.step.start_ms, 1e-9)
      assert.equal(0, r.host.dataloader_serial_ms)
      assert.same({}, fired(r))
    end
  end)

  it("takes a flow from a stream for a dependency, not a launch", function()
    -- 1500 us behind, each all-reduce hands over to the next step's first MatMul by a flow
    -- from the communication lane, which starts two host windows later than that MatMul's launch
    gen.device_lagging(dir .. "/dep.json", 10, 1500)
    local events = core.json.load(dir .. "/dep.json")
    local lines = {}
    for _, e in ipairs(events) do lines[#lines + 1] = core.json.encode(e) end
    for k = 1, 9 do
      local from, to = (k - 1) * 1000 + 2499, k * 1000 + 1500
      lines[#lines + 1] = ('{"ph":"s","name":"dep","cat":"dep","id":%d,"pid":30,"tid":3,"ts":"%d"}'):format(900 + k, from)
      lines[#lines + 1] = ('{"ph":"f","bp":"e","name":"dep","cat":"dep","id":%d,"pid":20,"tid":2,"ts":"%d"}'):format(900 + k, to)
    end
    h.write(dir .. "/dep.json", "[" .. table.concat(lines, ",\n") .. "]")
    local r = analyse(dir .. "/dep.json")
    assert.equal(5, r.step.id)
    assert.near(1.0, r.step.stage_ms, 1e-9)
    assert.near(5.5, r.step.start_ms, 1e-9)
    for _, c in ipairs(r.jitter.series.comm) do assert.near(0.1, c, 1e-9) end
  end)

  it("keeps the host's windows where no flow says what the host launched", function()
    -- the same trace without its flows: the first host window holds no all-reduce
    local lanes = core.json.load((function()
      gen.device_lagging(dir .. "/lag.json", 10, 600)
      return dir .. "/lag.json"
    end)())
    local kept = {}
    for _, e in ipairs(lanes) do
      if e.ph ~= "s" and e.ph ~= "f" then kept[#kept + 1] = core.json.encode(e) end
    end
    h.write(dir .. "/noflow.json", "[" .. table.concat(kept, ",\n") .. "]")
    local r = analyse(dir .. "/noflow.json")
    assert.equal(0, r.jitter.series.comm[1])
    assert.near(0.1, r.jitter.series.comm[2], 1e-9)
  end)

  it("holds the launches in fewer than 100 bytes of Lua heap each", function()
    -- 20 steps of `per` kernels, each launched 300 us before it runs (a flow each): the launch
    -- lists of the step windows and the queued time are the Lua heap that grows with them.
    -- The growth of the peak from 5000 launches to 20000, per launch.
    local function peak_kb(per)
      local lanes, fl, t = { { "Python", "Thread 1", {} }, { "Ascend Hardware", "Stream 2", {} } }, {}, 0
      for k = 1, 20 do
        table.insert(lanes[1][3], { "ProfilerStep#" .. k, t, per * 10 })
        for j = 0, per - 1 do
          table.insert(lanes[2][3], { "MatMul", t + 300 + j * 10, 8, "AI_CORE" })
          fl[#fl + 1] = { id = #fl + 1, from = { 1, t + j * 10 + 1 }, to = { 2, t + 300 + j * 10 } }
        end
        t = t + per * 10
      end
      trace(dir .. "/many.json", lanes, fl)
      lanes, fl = nil, nil -- luacheck: ignore 311
      collectgarbage()
      local before, peak = collectgarbage("count"), 0
      -- what is live, not what the collector has not come to yet
      debug.sethook(function()
        collectgarbage()
        peak = math.max(peak, collectgarbage("count"))
      end, "", 10000)
      local ok, r = pcall(analyse, dir .. "/many.json")
      debug.sethook()
      assert(ok, r)
      assert.near(0.3, r.step.start_ms - r.step.window_start_ms, 1e-9)
      return peak - before
    end
    peak_kb(250) -- the modules and rules loaded once
    local per_launch = (peak_kb(1000) - peak_kb(250)) * 1024 / 15000
    assert.is_true(per_launch < 100, ("%.0f bytes a launch"):format(per_launch))
  end)
end)

describe("timeline raw top operator off the critical path", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("fires for communication hidden under compute, not for an HCCL op's own stream tasks", function()
    -- ten different 90 us kernels in a row; a 300 us all-reduce runs under them: the slowest
    -- operator by raw time, and it costs the step nothing
    local k = {}
    for j = 0, 9 do k[#k + 1] = { "Kernel" .. j, j * 90, 90, "AI_CORE" } end
    trace(dir .. "/hidden.json", { { "Ascend Hardware", "Stream 1", k },
                                   { "HCCL", "Group 0 Communication", { { "hcom_allReduce_1", 100, 300 } } } })
    local r = analyse(dir .. "/hidden.json")
    assert.same({ "raw_top_off_path" }, fired(r))
    assert.equal("hcom_allReduce_1", r.findings[1].evidence.operator)
    assert.equal("Operator", r.findings[1].evidence.view)
    -- the .db's notify waits (raw top) sit under the hcom ops the path runs through
    local db = analyse(h.real .. "/msinsight_pytorch_db_level0")
    assert.equal("Notify Wait", db.raw_top)
    assert.is_false(db.raw_top_off_path)
  end)

  it("reads a .db's HCCL operator once, from COMMUNICATION_OP, with its launch; HCCL's own tasks by their type", function()
    -- msprof writes each allreduce once more as a task of type AI_CORE on stream 4, without
    -- COMPUTE_ or COMMUNICATION_TASK_INFO, its connectionId a COMMUNICATION_OP's (sqlite3:
    -- tasks 124, 365, 452, 539; connections 502, 528, 559, 927; hcom_allReduce__576_0_1 .. _3_1).
    -- The trace has no such task (its stream 4 holds HCCL's own tasks): left out, as counting
    -- it made each operator twice its time (150.15 ms for a 75.07 ms allreduce in a 138.67 ms step)
    local path = h.real .. "/msinsight_pytorch_db_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    local tl = assert(require("ascope.ascend.timeline").read_db(path))
    local stream4, ops, flows = {}, {}, {}
    for i = 1, tl.n do
      local lane, name = tl.lanes[tl.lane[i]], tl.name[i]
      if tl.ph[i] == "X" and lane == "Ascend Hardware/Stream 4" then stream4[name] = (stream4[name] or 0) + 1 end
      if tl.ph[i] == "X" and lane:find("^HCCL/Group ") then ops[#ops + 1] = { name, tl.ts[i], tl.dur[i] } end
      if tl.ph[i] == "f" and lane:find("^HCCL/Group ") then flows[#flows + 1] = { tl.flow[i], tl.ts[i] } end
    end
    -- COMMUNICATION_TASK_INFO's 296 tasks keep their task types, as the trace names them, and
    -- the stream's events theirs
    assert.same({ ["Notify Wait"] = 112, ["Write Value"] = 112, SDMA = 72, EVENT_RECORD = 8, EVENT_WAIT = 4 }, stream4)
    -- COMMUNICATION_OP (sqlite3): opName, startNs, endNs - startNs
    assert.same({ { "hcom_allReduce__576_0_1", 1736407067978150823, 75074220 },
                  { "hcom_allReduce__576_1_1", 1736407068053228824, 2241584 },
                  { "hcom_allReduce__576_2_1", 1736407068055473968, 2361388 },
                  { "hcom_allReduce__576_3_1", 1736407068057839476, 10203384 } }, ops)
    -- the launches of the four tasks end on their operators, as the trace's flows do
    assert.same({ { "502", 1736407067978150823 }, { "528", 1736407068053228824 }, { "559", 1736407068055473968 },
                  { "927", 1736407068057839476 } }, flows)
    -- and the operator's time is its own: once, as kernel_details.csv gives it for the text export
    local r = analyse(h.real .. "/msinsight_pytorch_db_level0")
    for _, hs in ipairs(r.hotspots) do
      if hs.name == "hcom_allReduce__576_0_1" then
        assert.equal(1, hs.raw_count)
        assert.near(75.07422, hs.raw_ms, 1e-9)
      end
    end
    -- without COMPUTE_TASK_INFO (and the other optional tables) the tasks are read all the same
    local bare = assert(require("ascope.ascend.timeline").read_db(h.fixtures .. "/hostile/no_compute_info.db"))
    local kinds = {}
    for i = 1, bare.n do
      if bare.ph[i] == "X" then kinds[bare.name[i]] = (kinds[bare.name[i]] or 0) + 1 end
    end
    -- 546 tasks and the 550 flow ends, the 4 operators on the HCCL lane; kernels by task type
    -- (KERNEL_AIVEC 149 of them), each operator once
    assert.same({ 1100, 149, 1, 112 }, { bare.n, kinds.KERNEL_AIVEC, kinds.hcom_allReduce__576_0_1, kinds["Notify Wait"] })
  end)

  it("reads a .db of odd kinds: text times, no-number and missing times named, keyless tables counted once", function()
    -- hostile/timeline_odd.db: db_level0's task tables with TASK.startNs declared TEXT (digits),
    -- 'abc' in rows 10-14, no endNs in rows 20-22, no streamId in rows 30-31, COMPUTE_TASK_INFO
    -- with each row twice and STRING_IDS without a key naming the task type AI_CORE twice
    local tl = assert(require("ascope.ascend.timeline").read_db(h.fixtures .. "/hostile/timeline_odd.db"))
    local slices, flows, ai_core = 0, 0, 0
    for i = 1, tl.n do
      if tl.ph[i] == "X" then
        slices = slices + 1
        if tl.task_type[i] == "AI_CORE" then ai_core = ai_core + 1 end
      else
        flows = flows + 1
      end
    end
    -- 550 tasks less the 8 without both times and the 4 operators' own tasks, and the 4 HCCL
    -- operators; the flow ends of every task with a start (545); as many AI_CORE tasks as in
    -- the plain file (5)
    assert.same({ 542, 545, 5 }, { slices, flows, ai_core })
    assert.same({ "8 start or end time(s) are no whole numbers or none, their rows are left out; first: table TASK, "
      .. "row 10, column startNs: 'abc'",
      "2 task(s) have no streamId: they share one lane, Ascend Hardware/Stream ?, as if one stream" }, tl.notes)
    -- and the command says so for the rank, with the file
    local _, _, err = h.run("timeline", h.fixtures .. "/hostile/timeline_odd.db", "-o", dir, "-q")
    assert.truthy(err:find("timeline_odd.db: 8 start or end time(s)", 1, true), err)
  end)
end)

describe("timeline long-tail bounds", function()
  local jitter = require "ascope.analysis.timeline.jitter"

  it("above 1.5 x median, or above the nearest-rank P95 and median x (1 + CV threshold)", function()
    local ids, times = {}, {}
    for k = 1, 20 do ids[k], times[k] = tostring(k), 100 end
    -- 20 steps: the nearest-rank P95 is the 19th smallest
    times[7], times[13] = 112, 108
    local long, med, p95 = jitter.long_tail(ids, times, 0.10, 1.5)
    assert.equal(100, med)
    assert.equal(108, p95)
    -- 112 > P95 and > 110: long; 108 is the P95 itself: not
    assert.equal(1, #long)
    assert.equal("7", long[1].step)
    -- 109.5 is above the P95 (109) but under median x 1.1 = 110: not long
    times[7], times[13], times[2] = 109.5, 109, 105
    assert.equal(0, #jitter.long_tail(ids, times, 0.10, 1.5))
    -- few steps: the P95 is the maximum, so only 1.5 x median counts
    local l2 = jitter.long_tail({ "a", "b", "c" }, { 100, 100, 149 }, 0.10, 1.5)
    assert.equal(0, #l2)
    local l3 = jitter.long_tail({ "a", "b", "c" }, { 100, 100, 151 }, 0.10, 1.5)
    assert.equal("c", l3[1].step)
  end)
end)

describe("timeline properties", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("the tags' union finds every name one of the tag patterns finds, and no union with a back-reference",
    function()
      local patterns = require "ascope.analysis.timeline.patterns"
      local rules = assert(timeline.rules())
      local re = assert(patterns.compile(rules))
      assert.truthy(re.any_tag)
      local names = { "hcom_allReduce__123_1_1", "HcomReceive_7", "hcom_send__9", "aclnnMatmul_launch",
                      "Dataloader._next_data", "prefill_step", "decode 3", "Request 42", "my request",
                      "MatMul_17", "ReduceSum", "", "p2p", "RECV", "torch_to_npu" }
      local tagged = 0
      for _, name in ipairs(names) do
        local any = false
        for _, tag in ipairs({ "p2p_wait", "p2p", "host_launch", "dataloader", "prefill", "decode", "request" }) do
          any = any or patterns.test(re.patterns[tag], name)
        end
        assert.equal(any, not not re.any_tag:find(name), name)
        tagged = tagged + (any and 1 or 0)
      end
      assert.equal(10, tagged) -- both kinds were among them ("my request": "^request" is anchored)
      assert.truthy(assert(patterns.compile({ patterns = { decode = { "(de)code" } } })).any_tag)
      assert.is_nil(assert(patterns.compile({ patterns = { decode = { "(de)code\\1" } } })).any_tag)
    end)

  it("a set's joined expression and the name-class prefilter answer what each expression answers", function()
    local patterns = require "ascope.analysis.timeline.patterns"
    local model = require "ascope.analysis.timeline.model"
    local rules = assert(timeline.rules())
    local re = assert(patterns.compile(rules))
    local names = { "hcom_allReduce__123_1_1", "HcomReceive_7", "MEMCPY_ASYNC_3", "event_wait_2", "Event_Record",
                    "MatMul_17", "", "Notify Wait", "aclnnMatmul_launch", "Ascend Hardware/Stream 3", "Python/Thread 1",
                    "NPU/Communication", "Overlap Analysis/Free", "my_allgather", "BROADCAST_x", "x" }
    local joined = 0
    for _, group in ipairs({ re.lanes, re.names, re.patterns }) do
      for key, set in pairs(group) do
        if set.any then joined = joined + 1 end
        for _, name in ipairs(names) do
          local one = false -- each expression on its own, as written
          for _, x in ipairs(set) do one = one or x:find(name) end
          assert.equal(one, patterns.test(set, name), key .. ": " .. name)
        end
      end
    end
    assert.is_true(joined >= 5) -- most sets have several expressions
    assert.truthy(re.narrow_names)
    local types = {}
    for _, cls in ipairs(model.CLASSES) do types[cls] = {} end
    local plain = setmetatable({ narrow_names = false }, { __index = re }) -- the prefilter off
    local classes = {}
    for _, name in ipairs(names) do
      local c = model.classify(nil, name, types, re)
      assert.equal(model.classify(nil, name, types, plain), c, name)
      classes[c] = true
    end
    assert.same({ comm = true, copy = true, sync = true, compute = true, other = true }, classes)
  end)

  it("the longest path never exceeds the stage (random traces with flows)", function()
    math.randomseed(12)
    for iter = 1, 25 do
      local lanes = { { "Python", "Thread 1", {} }, { "Ascend Hardware", "Stream 1", {} },
                      { "Ascend Hardware", "Stream 2", {} }, { "HCCL", "Group 0 Communication", {} } }
      local flows = {}
      for _ = 1, math.random(3, 12) do
        local lane = math.random(1, 4)
        local ts, dur = math.random(0, 300), math.random(1, 80)
        table.insert(lanes[lane][3], { lane == 4 and "hcom_allReduce_" or "op", ts, dur, lane ~= 1 and lane ~= 4 and "AI_CORE" or nil })
      end
      for k = 1, math.random(0, 6) do
        flows[k] = { id = k, from = { math.random(1, 4), math.random(0, 400) }, to = { math.random(1, 4), math.random(0, 400) } }
      end
      local p = ("%s/rand%d.json"):format(dir, iter)
      trace(p, lanes, flows)
      local r = analyse(p)
      if r.critical_path and r.critical_path.longest_path_ms then
        assert.is_true(r.critical_path.longest_path_ms <= r.step.stage_ms + 1e-12, p)
        assert.is_true(r.critical_path.off_path_ms >= -1e-12)
      end
    end
  end)

  it("nothing selected is nothing: no compute reads 0, a prefill-only trace has no decode time", function()
    local p = dir .. "/comm_only.json"
    trace(p, { { "Ascend Hardware", "Stream 1", { { "hcom_allReduce_1", 0, 50 } } } })
    local r = analyse(p)
    assert.equal(0, r.dashboard.op_utilization)
    local q = dir .. "/prefill.json"
    trace(q, { { "Ascend Hardware", "Stream 1", { { "prefill_attn", 0, 50, "AI_CORE" } } } })
    local ph = analyse(q).phases
    assert.near(0.05, ph.prefill_ms, 1e-12)
    assert.equal(0, ph.decode_ms)
    assert.is_nil(ph.tpot_ms)
  end)
end)

describe("timeline prefill/decode", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("TTFT and TPOT by the seed's formulas when request boundaries exist, else the approximation says so", function()
    -- two requests: prefill to 300 (resp. 2250) us, then 3 (resp. 1) decode steps
    local host = { { "request_1", 0, 1000 }, { "request_2", 2000, 600 } }
    local dev = { { "prefill_attn", 10, 290, "AI_CORE" }, { "decode_step", 400, 100, "AI_CORE" },
                  { "decode_step", 600, 100, "AI_CORE" }, { "decode_step", 800, 100, "AI_CORE" },
                  { "prefill_attn", 2000, 250, "AI_CORE" }, { "decode_step", 2300, 100, "AI_CORE" } }
    local p = dir .. "/serve.json"
    trace(p, { { "Python", "Thread 1", host }, { "Ascend Hardware", "Stream 1", dev } })
    local ph = analyse(p).phases
    assert.equal("request boundaries", ph.method)
    assert.equal(2, ph.requests)
    -- TTFT = first token - request start; TPOT = (latency - TTFT) / (tokens - 1)
    assert.near((300 + 250) / 2 / 1000, ph.ttft_ms, 1e-12)
    assert.near(((1000 - 300) / 3 + (600 - 250) / 1) / 2 / 1000, ph.tpot_ms, 1e-12)
    local q = dir .. "/no_requests.json"
    trace(q, { { "Ascend Hardware", "Stream 1", dev } })
    local ph2 = analyse(q).phases
    assert.equal("name-pattern approximation", ph2.method)
    assert.near(0.1, ph2.tpot_ms, 1e-12)
  end)

  it("counts, times, TTFT and TPOT are all the step's", function()
    -- step 1 holds request 1 (prefill 250 us, 3 decodes), step 2 request 2 (prefill 350 us, 2 decodes)
    local host = { { "ProfilerStep#1", 0, 1000 }, { "request_1", 0, 900 },
                   { "ProfilerStep#2", 1000, 1000 }, { "request_2", 1000, 800 } }
    local dev = { { "prefill_attn", 10, 250, "AI_CORE" }, { "decode_step", 300, 100, "AI_CORE" },
                  { "decode_step", 450, 100, "AI_CORE" }, { "decode_step", 600, 100, "AI_CORE" },
                  { "prefill_attn", 1000, 350, "AI_CORE" }, { "decode_step", 1400, 100, "AI_CORE" },
                  { "decode_step", 1550, 100, "AI_CORE" } }
    local p = dir .. "/steps.json"
    trace(p, { { "Python", "Thread 1", host }, { "Ascend Hardware", "Stream 1", dev } })
    local ph = analyse(p, { step = 2 }).phases
    assert.same({ 1, 2, 1 }, { ph.prefill_count, ph.decode_count, ph.requests })
    assert.near(0.35, ph.prefill_ms, 1e-12)
    assert.near(0.2, ph.decode_ms, 1e-12)
    assert.near(0.35, ph.ttft_ms, 1e-12)
    assert.near((800 - 350) / 2 / 1000, ph.tpot_ms, 1e-12)
    local ph1 = analyse(p, { step = 1 }).phases
    assert.same({ 1, 3, 1 }, { ph1.prefill_count, ph1.decode_count, ph1.requests })
    assert.near(0.26, ph1.ttft_ms, 1e-12)
  end)
end)

describe("timeline command line", function()
  local dir
  local L0 = h.real .. "/msinsight_pytorch_text_level0"
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("lane options are POSIX extended regular expressions; an invalid one exits 2 naming it", function()
    gen.exposed_comm(dir .. "/x.json", 3)
    local base = analyse(dir .. "/x.json")
    local same = analyse(dir .. "/x.json", { device_regex = "^Ascend Hardware/Stream [0-9]+$" })
    assert.equal(base.dashboard.op_utilization, same.dashboard.op_utilization)
    -- a regex that names no device lane: nothing measured, not 100%
    local none = analyse(dir .. "/x.json", { device_regex = "^NPU [0-9]{2}$" })
    assert.is_nil(none.dashboard.op_utilization)
    assert.truthy(none.not_computed.op_util:find("device lanes pattern", 1, true))
    local code, _, err = h.run("timeline", dir .. "/x.json", "-o", dir .. "/out", "--device-regex", "Stream (2|[")
    assert.equal(2, code)
    assert.truthy(err:find("--device-regex: invalid regular expression", 1, true), err)
    local code2, _, err2 = h.run("timeline", dir .. "/x.json", "-o", dir .. "/out", "--comm-regex", "HCCL(")
    assert.equal(2, code2)
    assert.truthy(err2:find("--comm-regex", 1, true), err2)
    h.write(dir .. "/r.lua", [[return { patterns = { p2p_wait = { "recv", "re(ceive" } } }]])
    local code3, _, err3 = h.run("timeline", dir .. "/x.json", "-o", dir .. "/out", "--rules", dir .. "/r.lua")
    assert.equal(2, code3)
    assert.truthy(err3:find(dir .. "/r.lua: key patterns.p2p_wait[2]: invalid regular expression", 1, true), err3)
  end)

  it("the same input gives the same bytes, twice", function()
    gen.dataloader_stall(dir .. "/in/stall.json", 5, 600)
    for _, input in ipairs({ L0, dir .. "/in/stall.json" }) do
      local ca, _, ea = h.run("timeline", input, "-o", dir .. "/a", "-j", "2")
      assert.equal(0, ca, ea)
      local cb, _, eb = h.run("timeline", input, "-o", dir .. "/b", "-j", "1")
      assert.equal(0, cb, eb)
      for _, f in ipairs({ "timeline_report.html", "timeline_report.md", "timeline_metrics.json" }) do
        assert.equal(h.read(dir .. "/a/" .. f), h.read(dir .. "/b/" .. f), f)
      end
    end
  end)

  it("a rank with only step_trace_time.csv gets its jitter; the other rank its full analysis", function()
    h.copy(L0 .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
      dir .. "/tree/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
    h.write(dir .. "/tree/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
      "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Preparing\n"
      .. "1,50,10,30,40,5,65,0,2\n2,50,10,30,40,5,65,0,2\n3,50,10,30,40,45,105,0,2\n4,50,10,30,40,5,65,0,2\n")
    local code, out = h.run("timeline", dir .. "/tree", "-o", dir .. "/out")
    assert.equal(0, code)
    local m = core.json.load(dir .. "/out/timeline_metrics.json")
    assert.equal(2, #m.ranks)
    local r1 = m.ranks[2]
    assert.equal(1, r1.rank)
    -- step time = Computing + Communication(Not Overlapped) + Free + Preparing
    assert.near(cv({ 67, 67, 107, 67 }), r1.jitter.cv, 1e-12)
    assert.equal(0, r1.comm_jitter.cv)
    assert.truthy(r1.not_computed.critical_path:find("no trace", 1, true))
    -- the overlap and utilisation of the step of the median time (step 2, the second of the
    -- three 67 us steps): the split's own Overlapped / Communication and Computing / Stage
    assert.equal(2, r1.step.id)
    assert.same({ 0.75, 50 / 65 }, { r1.overlap.overlap_ratio, r1.op_util.op_utilization })
    assert.truthy(out:find("rank 1 (tree): op_utilization 76.9%, overlap_ratio 75.0%, step_cv", 1, true), out)
    assert.truthy(m.ranks[1].dashboard.op_utilization)
    -- an analysis.db without StepTraceTime is no step split; a broken one is named, the other rank kept
    local out0 = dir .. "/tree/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
    h.copy(h.real .. "/msinsight_pytorch_db_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
      dir .. "/tree2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db")
    h.write(dir .. "/tree2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db", "")
    h.copy(out0 .. "trace_view.json", dir .. "/tree2/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
    h.write(dir .. "/tree2/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db", "not a database")
    local code2, out2, err2 = h.run("timeline", dir .. "/tree2", "-o", dir .. "/out2")
    assert.equal(1, code2)
    assert.truthy(out2:find("rank 0 (tree2): critical_path_ratio", 1, true))
    assert.truthy(err2:find("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db: not an SQLite database", 1, true), err2)
  end)
end)
