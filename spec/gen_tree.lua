--- A generated multi-rank profiling tree for the sharding specs and `make slurm-check`:
--   ascope run spec/gen_tree.lua OUT [RANKS] [EVENTS]
-- Rank r lives in OUT/<role>/r<r>_ascend_pt/ (roles actor and critic alternate) with
-- profiler_info_<r>.json and ASCEND_PROFILER_OUTPUT/{trace_view.json, operator_memory.csv,
-- kernel_details.csv, step_trace_time.csv}. Ranks differ in size (1x to 5x EVENTS operators) so
-- that balancing by bytes differs from balancing by count; values come from a fixed LCG, so the
-- tree is the same on every machine.
local M = {}

local MEM_HEADER = "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),"
  .. "Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),"
  .. "Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),"
  .. "Release Total Active(MB),Stream Ptr,Device Type\n"
local KERNEL_HEADER = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),aiv_vec_time(us),aiv_scalar_time(us)\n"
local OPS = { "aten::empty", "aten::matmul", "aten::add", "aten::copy_" }
local KERNELS = { "MatMul", "Add", "MoeDistributeDispatchV2", "MoeDistributeCombineV2" }

local function write(path, text)
  os.execute(("mkdir -p '%s'"):format(path:match("^(.*)/[^/]+$")))
  local f = assert(io.open(path, "wb"))
  assert(f:write(text))
  assert(f:close())
end

local function lcg(seed)
  local s = seed
  return function(n)
    s = (s * 1103515245 + 12345) % 2147483648
    return s % n
  end
end

--- Write one rank's folder; returns its path.
function M.rank(out, rank, events)
  local role = rank % 2 == 0 and "actor" or "critic"
  local pt = ("%s/%s/r%d_ascend_pt"):format(out, role, rank)
  local rnd = lcg(rank + 1)
  local n = events * (1 + (rank * 7) % 5)
  local ev = {
    '{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"Python"}}',
    '{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"Thread 1"}}',
    '{"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"Ascend Hardware"}}',
    '{"ph":"M","name":"thread_name","pid":2,"tid":2,"args":{"name":"Stream 2"}}',
    '{"ph":"M","name":"process_name","pid":3,"tid":0,"args":{"name":"Communication"}}',
    '{"ph":"M","name":"thread_name","pid":3,"tid":3,"args":{"name":"Group 1"}}',
  }
  local mem, kern = { MEM_HEADER }, { KERNEL_HEADER }
  local ts, allocated = 1000000, 100
  for i = 1, n do
    local op = OPS[rnd(#OPS) + 1]
    local dur = 20 + rnd(200)
    local stack = ("model.py(%d): forward;\\r\\ntrain.py(%d): step;\\r\\nmain.py(1): main"):format(10 + rnd(30), 5 + rnd(3))
    ev[#ev + 1] = ('{"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":1,"ts":"%d.%03d","dur":%d,"args":{"Call stack":"%s"}}')
      :format(op, ts, rnd(1000), dur, stack)
    local k = KERNELS[rnd(#KERNELS) + 1]
    local kts, kdur = ts + 30, 10 + rnd(150)
    ev[#ev + 1] = ('{"ph":"X","name":"%s","pid":2,"tid":2,"ts":"%d.000","dur":%d,"args":{"Task Type":"AI_CORE"}}')
      :format(k, kts, kdur)
    if i % 5 == 0 then
      ev[#ev + 1] = ('{"ph":"X","name":"hcom_allReduce_%d","pid":3,"tid":3,"ts":"%d.000","dur":%d}')
        :format(i, kts + kdur // 2, 50 + rnd(300))
    end
    kern[#kern + 1] = ("1,%s_%d,%s,AI_VECTOR_CORE,%d.000,%d.%d,%d.0,1.0\n"):format(k, i, k, kts, kdur, rnd(10), 80 + rnd(40))
    local size = (1 + rnd(64)) * 512
    allocated = allocated + size / 1024
    local release = rnd(4) > 0 and tostring(ts + dur + rnd(500)) or ""
    mem[#mem + 1] = ("%s,%d,%d.%03d,%s,%s,,,%.3f,%.1f,%.3f,,,,1,NPU:%d\n"):format(op, size, ts + 1 + rnd(dur), rnd(1000),
      release, release, allocated, allocated + 512, allocated, rank)
    if release ~= "" then allocated = allocated - size / 2048 end
    ts = ts + dur + rnd(100)
  end
  write(("%s/profiler_info_%d.json"):format(pt, rank), ('{"rank_id": %d}'):format(rank))
  write(pt .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", "[\n" .. table.concat(ev, ",\n") .. "\n]\n")
  write(pt .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", table.concat(mem))
  write(pt .. "/ASCEND_PROFILER_OUTPUT/kernel_details.csv", table.concat(kern))
  return pt
end

--- The whole tree: ranks 0 .. ranks-1.
function M.tree(out, ranks, events)
  for r = 0, ranks - 1 do M.rank(out, r, events) end
  return out
end

if arg and arg[0] and arg[0]:match("gen_tree%.lua$") and arg[1] then
  M.tree(arg[1], tonumber(arg[2] or 12), tonumber(arg[3] or 200))
end

return M
