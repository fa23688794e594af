local core = require "ascope_core"
local h = require "helper"
local timeline = require "ascope.timeline"

-- A Chrome trace from lanes {process, thread, {slices}} with slices {name, ts_us, dur_us,
-- task_type} and flows {id, from = {lane, ts}, to = {lane, ts}}; pid = lane index * 10.
local function trace(path, lanes, flows, extra)
  local ev = {}
  for i, l in ipairs(lanes) do
    local pid, tid = i * 10, i
    ev[#ev + 1] = ('{"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":"%s"}}'):format(pid, l[1])
    ev[#ev + 1] = ('{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":"%s"}}'):format(pid, tid, l[2])
    for _, s in ipairs(l[3]) do
      ev[#ev + 1] = ('{"ph":"X","name":"%s","pid":%d,"tid":%d,"ts":"%s","dur":%s%s}'):format(s[1], pid, tid,
        tostring(s[2]), tostring(s[3]), s[4] and (',"args":{"Task Type":"%s"}'):format(s[4]) or "")
    end
  end
  for _, f in ipairs(flows or {}) do
    ev[#ev + 1] = ('{"ph":"s","name":"async_npu","cat":"async_npu","id":%d,"pid":%d,"tid":%d,"ts":"%s"}'):format(
      f.id, f.from[1] * 10, f.from[1], tostring(f.from[2]))
    ev[#ev + 1] = ('{"ph":"f","bp":"e","name":"async_npu","cat":"async_npu","id":%d,"pid":%d,"tid":%d,"ts":"%s"}'):format(
      f.id, f.to[1] * 10, f.to[1], tostring(f.to[2]))
  end
  for _, e in ipairs(extra or {}) do ev[#ev + 1] = e end
  h.write(path, "[\n" .. table.concat(ev, ",\n") .. "\n]\n")
end

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
    local span = 165 -- device activity from 0 to 165 us
    local busy = count(cg, 0, span, function(t) return cg[t] end)
    assert.near(busy / span, r.dashboard.op_utilization, 1e-12)
    local act = count(cg, 0, span, function(t) return dg[t] or mg[t] end)
    assert.near(act / span, r.dashboard.critical_path_ratio, 1e-12)
    local comm_t = count(mg, 0, span, function(t) return mg[t] end)
    local hidden = count(mg, 0, span, function(t) return mg[t] and cg[t] end)
    assert.equal("intersection", r.overlap.source)
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
    -- A (host) launches B and C on two streams; B and C both feed D on a third stream.
    local p = dir .. "/diamond.json"
    trace(p, {
      { "Python", "Thread 1", { { "A", 0, 10 } } },
      { "Ascend Hardware", "Stream 1", { { "B", 15, 30, "AI_CORE" } } },
      { "Ascend Hardware", "Stream 2", { { "C", 12, 8, "AI_CORE" } } },
      { "Ascend Hardware", "Stream 3", { { "D", 50, 10, "AI_CORE" } } },
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

  it("measures the bubble of a 2-stage pipeline against the theory", function()
    -- stage 1 of a 2-stage pipeline, 2 micro-batches: forward, wait for recv, backward
    local p = dir .. "/pp.json"
    trace(p, {
      { "Ascend Hardware", "Stream 1", { { "fwd", 0, 20, "AI_CORE" }, { "fwd", 20, 20, "AI_CORE" },
                                           { "bwd", 70, 20, "AI_CORE" }, { "bwd", 100, 20, "AI_CORE" } } },
      { "HCCL", "Group P2P", { { "hcom_send_", 40, 5 }, { "hcom_receive_", 45, 25 }, { "hcom_recv_", 90, 10 } } },
    })
    local r = analyse(p, { pp = 2, microbatches = 2 })
    local cg = grid({ { 0, 40 }, { 70, 90 }, { 100, 120 } }, 0, 120)
    -- "hcom_receive_" does not match send|recv|p2p: only [40,45) and [90,100) count
    local p2p = grid({ { 40, 45 }, { 90, 100 } }, 0, 120)
    local bubble = count(cg, 0, 120, function(t) return not cg[t] and p2p[t] end)
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
    h.write(dir .. "/step_trace_time.csv", "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage\n"
      .. "1,50,10,30,40,5,100\n2,50,12,28,40,5,110\n3,50,30,10,40,5,180\n4,50,10,30,40,5,100\n")
    local r = analyse(p)
    assert.equal("Overlap Analysis", r.overlap.source)
    assert.near(1 - 10 / 40, r.dashboard.overlap_ratio, 1e-12)
    local t = { 100, 110, 180, 100 }
    local mean = (100 + 110 + 180 + 100) / 4
    local var = 0
    for _, x in ipairs(t) do var = var + (x - mean) ^ 2 end
    assert.near(math.sqrt(var / 4) / mean, r.dashboard.step_cv, 1e-12)
    local c = { 10, 12, 30, 10 }
    local cm = (10 + 12 + 30 + 10) / 4
    local cv = 0
    for _, x in ipairs(c) do cv = cv + (x - cm) ^ 2 end
    assert.near(math.sqrt(cv / 4) / cm, r.dashboard.comm_jitter, 1e-12)
    -- P95 = 180 - 0.15 * 70 = 169.5 and 1.5 x median = 157.5: step 3 is the long tail
    assert.equal(1, #r.jitter.long_tail)
    assert.equal("3", r.jitter.long_tail[1].step)
    local ids = {}
    for _, f in ipairs(r.findings) do ids[f.id] = true end
    assert.is_true(ids.step_jitter and ids.comm_jitter and ids.long_tail)
  end)

  it("says which dimensions it could not compute, and leaves them out of the dashboard", function()
    local p = dir .. "/host_only.json"
    trace(p, { { "Python", "Thread 1", { { "aten::mm", 0, 10 } } } })
    local r = analyse(p)
    assert.truthy(r.not_computed.critical_path:find("no device lanes", 1, true))
    assert.truthy(r.not_computed.op_util)
    assert.is_nil(r.dashboard.op_utilization)
    local code, out = h.run("timeline", p, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.falsy(out:find("op_utilization", 1, true))
    local md = h.read(dir .. "/out/timeline_report.md")
    assert.truthy(md:find("- op_util: no device lanes with tasks", 1, true))
    assert.falsy(md:find("| op_utilization", 1, true))
    assert.falsy(md:find("| critical_path_ratio", 1, true))
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

describe("timeline on real samples (values from an independent Python computation)", function()
  local L0 = h.real .. "/msinsight_pytorch_text_level0"

  it("msinsight level0, two ranks: overlap agrees with step_trace_time.csv", function()
    local res = assert(timeline.run(L0, { jobs = 2 }))
    assert.equal(2, #res.ranks)
    local r0, r1 = res.ranks[1], res.ranks[2]
    -- step_trace_time.csv rank 0: Overlapped 4001.282 / Communication 85516.889
    assert.near(4001.281999999992 / 85516.889, r0.dashboard.overlap_ratio, 1e-9)
    assert.equal("Overlap Analysis", r0.overlap.source)
    assert.near(0.7579900694728642, r0.dashboard.critical_path_ratio, 1e-12)
    assert.near(0.07308380150103233, r0.dashboard.op_utilization, 1e-12)
    assert.near(120.707993, r0.step.span_ms, 1e-9)
    assert.equal(50, r0.step.id)
    assert.near(0.7085397358294087, r1.dashboard.critical_path_ratio, 1e-12)
    assert.near(0.08377606850256597, r1.dashboard.op_utilization, 1e-12)
    assert.near(0.05815253570001677, r1.dashboard.overlap_ratio, 1e-12)
    assert.near(116.25125, r0.jitter.mean, 1e-9) -- Stage of step 50
    assert.equal(0, r0.jitter.cv)
    assert.near(0.997027309821556, r0.dashboard.max_lane_idle, 1e-12) -- Stream 3: 6 tasks in 3.4 ms
  end)

  it("the older timeline_advice trace (no Overlap Analysis lane)", function()
    local r = analyse(h.real .. "/mstt_msprof_analyze_tests/timeline_advice/trace_view.json")
    assert.near(0.1588704690549185, r.dashboard.critical_path_ratio, 1e-12)
    assert.near(0.029065608912647714, r.dashboard.op_utilization, 1e-12)
    assert.near(11.269917, r.step.span_ms, 1e-9)
  end)

  it("ascend_pytorch_profiler_0.db level0 and level2 give the same columns", function()
    local r0 = analyse(h.real .. "/msinsight_pytorch_db_level0")
    assert.near(0.7684204900707238, r0.dashboard.critical_path_ratio, 1e-12)
    assert.near(0.7588919903756597, r0.dashboard.op_utilization, 1e-12)
    assert.near(124.842634, r0.step.span_ms, 1e-9)
    local r2 = analyse(h.real .. "/msinsight_pytorch_db_level2")
    assert.near(0.7130624156271246, r2.dashboard.critical_path_ratio, 1e-12)
    assert.near(0.7050349770912291, r2.dashboard.op_utilization, 1e-12)
  end)

  it("rl-insight mstx_data: only Overlap Analysis lanes, four roles", function()
    local res = assert(timeline.run(h.real .. "/rl-insight/mstx_data", { jobs = 2 }))
    local by = {}
    for _, r in ipairs(res.ranks) do by[r.role] = r end
    assert.near(1 - 23860 / 120642, by.agent_loop_rollout_replica_0.dashboard.overlap_ratio, 1e-12)
    assert.equal(0, by.actor_update.dashboard.overlap_ratio)
    assert.is_nil(by.actor_update.dashboard.op_utilization)
    assert.truthy(by.actor_update.not_computed.op_util)
  end)

  it("takes rule overrides from a user file without rebuilding, and answers in Chinese", function()
    local dir = h.tmpdir()
    h.write(dir .. "/r.lua", [[return { rules = {
      { id = "overlap_low", value = 0.01 },                      -- only below 1% now
      { id = "lane_idle", disabled = true },
      { id = "many_lanes", metric = "max_lane_idle", op = ">", value = 0.5, severity = "error",
        finding = { en = "custom: %s", zh = "自定义：%s" } },
    } }]])
    local code, out = h.run("--lang", "zh", "timeline", L0 .. "/rank0_ascend_pt", "-o", dir, "--rules", dir .. "/r.lua")
    assert.equal(0, code)
    assert.falsy(out:find("⚠ overlap_low", 1, true))
    assert.falsy(out:find("⚠ lane_idle", 1, true))
    assert.truthy(out:find("many_lanes: 自定义：99.7%", 1, true))
    assert.truthy(out:find("critical_path_low: 关键路径仅占 step 的 75.8%", 1, true))
    h.write(dir .. "/bad.lua",
      [[return { rules = { { id = "x", metric = "op_utilization", op = "<<", value = 1, severity = "warning" } } }]])
    local code2, _, err2 = h.run("timeline", L0 .. "/rank0_ascend_pt", "-o", dir, "--rules", dir .. "/bad.lua")
    assert.equal(2, code2)
    assert.truthy(err2:find(dir .. '/bad.lua: rule x, key rules[1].op: "<<" is not one of "<", ">"', 1, true), err2)
    h.cleanup(dir)
  end)

  it("writes timeline_metrics.json with the documented keys and a report with the dashboard", function()
    local dir = h.tmpdir()
    local code, out = h.run("timeline", L0 .. "/rank0_ascend_pt", "-o", dir)
    assert.equal(0, code)
    assert.truthy(out:find("⚠ overlap_low", 1, true))
    local m = core.json.load(dir .. "/timeline_metrics.json")
    assert.near(0.7579900694728642, m.critical_path.critical_path_ratio, 1e-12)
    assert.near(0.07308380150103233, m.op_util.op_utilization, 1e-12)
    assert.near(4001.281999999992 / 85516.889, m.overlap.overlap_ratio, 1e-9)
    assert.equal(0, m.jitter.cv)
    assert.equal(0, m.comm_jitter.cv)
    assert.truthy(#m.lanes > 5)
    local md = h.read(dir .. "/timeline_report.md")
    assert.truthy(md:find("### Metrics dashboard", 1, true))
    assert.truthy(md:find("| overlap_ratio | 0.0468 | 4.7% ⚠ |", 1, true))
    assert.falsy(md:find("| pp_bubble_ratio", 1, true))
    h.cleanup(dir)
  end)
end)
