-- Chrome traces for the timeline specs, built from lanes of slices, with generators of whole
-- runs whose true answers are known by construction (times in us).
local h = require "helper"

local M = {}

--- Write a trace: lanes {process, thread, {slices}} with slices {name, ts_us, dur_us, task_type};
-- flows {id, from = {lane, ts}, to = {lane, ts}}; pid = lane index * 10.
function M.write(path, lanes, flows, extra)
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

-- lanes of a training rank: host, compute stream, HCCL
local function rank_lanes()
  return { { "Python", "Thread 1", {} }, { "Ascend Hardware", "Stream 2", {} }, { "HCCL", "Group 0 Communication", {} } }
end
local HOST, STREAM, HCCL = 1, 2, 3

local function add(lanes, lane, name, ts, dur, tt) table.insert(lanes[lane][3], { name, ts, dur, tt }) end

--- A healthy data-parallel run: n steps of ~1000 us (within 3%, CV 2%); the host launches in
-- the first 20 us, ten MatMul kernels fill the stage, an all-reduce runs under them.
-- Truth: no rule fires; op_utilization 1, overlap_ratio 1.
function M.healthy(path, n)
  local lanes, t = rank_lanes(), 0
  local truth = { times = {} }
  for k = 1, n or 10 do
    local d = 1000 + ({ -28, 28, 0, 14, -14 })[(k - 1) % 5 + 1]
    add(lanes, HOST, "ProfilerStep#" .. k, t, d)
    add(lanes, HOST, "aclnnMatmul launch", t, 20)
    local kd = (d - 40) / 10
    for j = 0, 9 do add(lanes, STREAM, "MatMul", t + 20 + j * kd, kd, "AI_CORE") end
    add(lanes, HCCL, "hcom_allReduce_" .. k, t + 500, 200)
    truth.times[k] = d / 1000
    t = t + d
  end
  M.write(path, lanes)
  return truth
end

--- Ten healthy 1000 us steps, but step `slow` first waits `stall` us for the data loader (host
-- only) before its kernels. Truth: step `slow` is the long tail, its host-only start grew by
-- `stall`, the data loader operator grew most; communication is steady.
function M.dataloader_stall(path, slow, stall)
  local lanes, t = rank_lanes(), 0
  for k = 1, 10 do
    local wait = k == slow and stall or 0
    local d = 1000 + wait
    add(lanes, HOST, "ProfilerStep#" .. k, t, d)
    if wait > 0 then add(lanes, HOST, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t, wait) end
    add(lanes, HOST, "aclnnMatmul launch", t + wait, 20)
    for j = 0, 9 do add(lanes, STREAM, "MatMul", t + wait + 20 + j * 96, 96, "AI_CORE") end
    add(lanes, HCCL, "hcom_allReduce_" .. k, t + wait + 500, 200)
    t = t + d
  end
  M.write(path, lanes)
end

--- Stage 0 of a GPipe pipeline of p stages and m micro-batches (forward f us, backward b us),
-- `steps` identical steps: forwards back to back, then a receive wait for the first gradient,
-- then the backwards; the host keeps launching during the wait. Truth: the bubble (the union
-- of receive waits) is (p-1)(f+b) of a (p-1+m)(f+b) step, i.e. (p-1)/(p-1+m).
function M.pipeline(path, p, m, f, b, steps)
  local lanes, t = rank_lanes(), 0
  local step = (p - 1 + m) * (f + b)
  for k = 1, steps do
    add(lanes, HOST, "ProfilerStep#" .. k, t, step)
    for j = 0, m - 1 do
      add(lanes, STREAM, "fwd", t + j * f, f, "AI_CORE")
      add(lanes, HCCL, "hcom_send_" .. j, t + (j + 1) * f - 5, 5)
    end
    local wait0, wait1 = t + m * f, t + (m + p - 1) * f + (p - 1) * b
    add(lanes, HCCL, "hcom_receive_" .. k, wait0, wait1 - wait0)
    add(lanes, HOST, "aclnnMatmul launch", wait0, wait1 - wait0)
    for j = 0, m - 1 do add(lanes, STREAM, "bwd", wait1 + j * b, b, "AI_CORE") end
    t = t + step
  end
  M.write(path, lanes)
  return { bubble_us = (p - 1) * (f + b), step_us = step }
end

--- Exposed communication: each step computes 500 us, then waits for a 600 us all-reduce that
-- nothing hides, then a 10 us optimizer kernel (flows tie the three in order); the host
-- launches during the wait. Truth: overlap 0, communication 600 of the 1110 us path.
function M.exposed_comm(path, steps)
  local lanes, flows, t = rank_lanes(), {}, 0
  for k = 1, steps do
    local d = 1140
    add(lanes, HOST, "ProfilerStep#" .. k, t, d)
    add(lanes, HOST, "aclnnMatmul launch", t, 20)
    for j = 0, 9 do add(lanes, STREAM, "MatMul", t + 20 + j * 50, 50, "AI_CORE") end
    add(lanes, HCCL, "hcom_allReduce_" .. k, t + 520, 600)
    add(lanes, HOST, "aclrtSynchronizeStream", t + 520, 600)
    add(lanes, STREAM, "ApplyAdam", t + 1120, 10, "AI_CORE")
    flows[#flows + 1] = { id = 2 * k, from = { STREAM, t + 519 }, to = { HCCL, t + 520 } }
    flows[#flows + 1] = { id = 2 * k + 1, from = { HCCL, t + 1119 }, to = { STREAM, t + 1120 } }
    t = t + d
  end
  M.write(path, lanes, flows)
end

--- Compute and communication on two streams tied by stream waits only (no flow), as a profiler
-- writes them: the compute stream records an event, the communication stream's EVENT_WAIT
-- ends at it and its notify wait (the all-reduce, also on the HCCL operator lane) runs; its
-- record ends the compute stream's EVENT_WAIT. 1000 us steps.
-- exposed: MatMul 300 us, then the all-reduce 600 us with compute waiting, then the optimizer
--   100 us. Truth: the critical path is 1000 us, 600 of it communication (0.6).
-- otherwise the all-reduce (400 us) runs beside 900 us more of compute, which never waits.
--   Truth: the path is the compute stream's 1000 us, no communication on it.
function M.stream_waits(path, steps, exposed)
  local lanes = { { "Python", "Thread 1", {} }, { "Ascend Hardware", "Stream 2", {} },
                  { "Ascend Hardware", "Stream 4", {} }, { "HCCL", "Group 0 Communication", {} } }
  local t = 0
  for k = 1, steps do
    local rec, comm = exposed and 300 or 100, exposed and 600 or 400
    add(lanes, 1, "ProfilerStep#" .. k, t, 1000)
    add(lanes, 2, "MatMul", t, rec, "AI_CORE")
    add(lanes, 2, "EVENT_RECORD", t + rec, 0, "EVENT_RECORD_SQE")
    add(lanes, 3, "EVENT_WAIT", t + 20, rec - 20, "EVENT_WAIT_SQE")
    add(lanes, 3, "Notify Wait", t + rec, comm, "Notify Wait")
    add(lanes, 3, "EVENT_RECORD", t + rec + comm, 0, "EVENT_RECORD_SQE")
    add(lanes, 4, "hcom_allReduce_" .. k, t + rec, comm)
    if exposed then
      add(lanes, 2, "EVENT_WAIT", t + 310, 590, "EVENT_WAIT_SQE")
      add(lanes, 2, "ApplyAdam", t + 900, 100, "AI_CORE")
    else
      for j = 0, 8 do add(lanes, 2, "MatMul", t + 100 + j * 100, 100, "AI_CORE") end
    end
    t = t + 1000
  end
  M.write(path, lanes)
end

--- Two communication groups at once, 1000 us steps: MatMul 0-300 us on Stream 2 hands over (a
-- stream wait) to Stream 4, whose exposed operator on the path runs until 900 us, when
-- Stream 2's ApplyAdam (900-1000) waits for it. Truth: the path is 1000 us; its operator:
-- "longer": the all-reduce 300-900 (Group 0), while Group 1's all-gather runs 250-950 on
--   Stream 6 and holds the all-reduce's task too -> hcom_allReduce_k, 0.6 ms.
-- "same_start": as "longer", the all-gather 300-950 (it starts with the all-reduce, and is
--   longer) -> hcom_allReduce_k (Stream 4's tasks start and end with Group 0's operators).
-- "nested" / "touch": the all-reduce runs as two notify waits, 300-600 and 600-900; Group 1's
--   shorter all-gather runs 550-650 / 500-600 on Stream 6, holding the second one's start ->
--   hcom_allReduce_k (the all-gather starts with none of Stream 4's tasks; or is over).
-- "shared_stream": Stream 4 runs Group 0's all-reduces 300-350 and 350-400, then Group 1's
--   all-gather 400-900, which is on the path (an all-reduce's end holds its start) ->
--   hcom_allGather_k, 0.5 ms.
function M.two_groups(path, steps, variant)
  local lanes = { { "Python", "Thread 1", {} }, { "Ascend Hardware", "Stream 2", {} },
                  { "Ascend Hardware", "Stream 4", {} }, { "HCCL", "Group 0 Communication", {} },
                  { "Ascend Hardware", "Stream 6", {} }, { "HCCL", "Group 1 Communication", {} } }
  local t = 0
  for k = 1, steps do
    add(lanes, 1, "ProfilerStep#" .. k, t, 1000)
    add(lanes, 2, "MatMul", t, 300, "AI_CORE")
    add(lanes, 2, "EVENT_RECORD", t + 300, 0, "EVENT_RECORD_SQE")
    add(lanes, 2, "EVENT_WAIT", t + 310, 590, "EVENT_WAIT_SQE")
    add(lanes, 2, "ApplyAdam", t + 900, 100, "AI_CORE")
    add(lanes, 3, "EVENT_WAIT", t + 20, 280, "EVENT_WAIT_SQE")
    add(lanes, 3, "EVENT_RECORD", t + 900, 0, "EVENT_RECORD_SQE")
    if variant == "shared_stream" then
      add(lanes, 3, "Notify Wait", t + 300, 50, "Notify Wait")
      add(lanes, 3, "Notify Wait", t + 350, 50, "Notify Wait")
      add(lanes, 3, "Notify Wait", t + 400, 500, "Notify Wait")
      add(lanes, 4, "hcom_allReduce_a" .. k, t + 300, 50)
      add(lanes, 4, "hcom_allReduce_b" .. k, t + 350, 50)
      add(lanes, 6, "hcom_allGather_" .. k, t + 400, 500)
    else
      local span = ({ longer = { 250, 950 }, same_start = { 300, 950 }, nested = { 550, 650 },
                      touch = { 500, 600 } })[variant]
      if span[1] >= 500 then -- the all-reduce as two notify waits, the second held by the all-gather
        add(lanes, 3, "Notify Wait", t + 300, 300, "Notify Wait")
        add(lanes, 3, "Notify Wait", t + 600, 300, "Notify Wait")
      else
        add(lanes, 3, "Notify Wait", t + 300, 600, "Notify Wait")
      end
      add(lanes, 4, "hcom_allReduce_" .. k, t + 300, 600)
      add(lanes, 5, "Notify Wait", t + span[1], span[2] - span[1], "Notify Wait")
      add(lanes, 6, "hcom_allGather_" .. k, t + span[1], span[2] - span[1])
    end
    t = t + 1000
  end
  M.write(path, lanes)
end

--- Host-bound steps: 1000 us steps of ten 90 us kernels; in the steps listed in `gappy` each
-- kernel waits 10 us for its launch (the host is launching meanwhile), the others run back to
-- back. Truth: a gappy step's compute gaps under host launch are 90 us of its 990 us stage.
function M.host_bound(path, steps, gappy)
  local lanes, t = rank_lanes(), 0
  local is_gappy = {}
  for _, k in ipairs(gappy) do is_gappy[k] = true end
  for k = 1, steps do
    add(lanes, HOST, "ProfilerStep#" .. k, t, 1000)
    local at = t
    for j = 1, 10 do
      if is_gappy[k] and j > 1 then
        add(lanes, HOST, "aclnnMatmul launch", at, 10)
        at = at + 10
      end
      add(lanes, STREAM, "MatMul", at, 90, "AI_CORE")
      at = at + 90
    end
    t = t + 1000
  end
  M.write(path, lanes)
end

--- Device-bound steps: twenty 50 us kernels a step with 3 us between them; the host launches
-- each one 1000 us before it runs (a 50 us launch slice, back to back: the host is always
-- launching) with a flow from the launch to the kernel when `flows`. Truth: every kernel was on
-- the device's queue long before the gap before it, so no gap is the host's; without the flows
-- that cannot be told from the trace.
function M.device_bound(path, steps, flows)
  local lanes, fl, t = rank_lanes(), {}, 2000
  for k = 1, steps do
    add(lanes, HOST, "ProfilerStep#" .. k, t, 1060)
    for j = 0, 19 do
      local at = t + j * 53
      add(lanes, HOST, "aclnnMatmul launch", at - 1000, 50)
      add(lanes, STREAM, "MatMul", at, 50, "AI_CORE")
      if flows then fl[#fl + 1] = { id = #fl + 1, from = { HOST, at - 999 }, to = { STREAM, at } } end
    end
    t = t + 1060
  end
  M.write(path, lanes, fl)
end

--- A device running `lag` us behind the host: the host launches step k's ten 80 us MatMuls (one
-- every 90 us, a flow each) inside its 1000 us ProfilerStep, the device runs them `lag` us later,
-- then a 100 us all-reduce. So each host window holds the end of the step before and the start
-- of its own. Truth, by launch (as the profiler assigns tasks): every step the same, 900 us of
-- compute then 100 us of communication; no jitter of either. The steps of the set `idle` launch
-- nothing (the host works alone): no task of theirs, so none of their steps' ends either.
function M.device_lagging(path, steps, lag, idle)
  local lanes, fl, t = rank_lanes(), {}, 0
  for k = 1, steps do
    add(lanes, HOST, "ProfilerStep#" .. k, t, 1000)
    for j = 0, (idle or {})[k] and -1 or 9 do
      add(lanes, HOST, "aclnnMatmul launch", t + j * 90, 20)
      add(lanes, STREAM, "MatMul", t + lag + j * 90, 80, "AI_CORE")
      fl[#fl + 1] = { id = #fl + 1, from = { HOST, t + j * 90 + 1 }, to = { STREAM, t + lag + j * 90 } }
    end
    if not (idle or {})[k] then add(lanes, HCCL, "hcom_allReduce_" .. k, t + lag + 900, 100) end
    t = t + 1000
  end
  M.write(path, lanes, fl)
end

return M
