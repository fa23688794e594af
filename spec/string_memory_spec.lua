-- Past its memory (ASCOPE_STRING_MEMORY, in MiB) the string table spills text to a temporary
-- file and reads it back: ranks whose every operator has a call stack of its own give the same
-- outputs, byte for byte, with nothing kept in memory as with everything kept, in one process
-- and in forked workers; the table then holds a small part of the text it was given.
local H = require "spec.helper"

local T0 = 1736405440000000 -- us

-- stack of operator i of a rank: eight frames of its own, as long as a real one
local function stack_of(rank, i)
  local frames = {}
  for k = 1, 8 do
    frames[k] = ("/home/user/project/src/module_%d/file_%d.py(%d): function_%d_%07d"):format(k, k, 100 + k, rank, i)
  end
  return table.concat(frames, ";\r\n")
end

local OPS = 6000 -- 3.3 MB of stacks a rank: chunks of the table fill and spill, all but the last

local function make_rank(dir, rank)
  local out = ("%s/rank%d_ascend_pt/ASCEND_PROFILER_OUTPUT/"):format(dir, rank)
  H.write(("%s/rank%d_ascend_pt/profiler_info_%d.json"):format(dir, rank, rank), ('{"rank_id": %d}'):format(rank))
  local ev, rows = {}, {}
  for i = 1, OPS do
    local ts = T0 + i * 10
    ev[i] = ('{"ph": "X", "name": "aten::op%d", "pid": 7, "tid": 7, "ts": "%d.000", "dur": 5.0, "cat": "cpu_op", '
      .. '"args": {"Call stack": "%s"}}'):format(i % 7, ts, stack_of(rank, i):gsub("\r\n", "\\r\\n"))
    rows[i] = ("aten::op%d,%d.0,%d.000\t,%d.000\t,%d.000\t,3.000\t,3.000\t,%d.0,2000.0,%d.0,%d.0,2000.0,%d.0,1,NPU:%d")
      :format(i % 7, i % 97 + 1, ts + 1, ts + 4, ts + 4, 1000 + i % 89, 1000 + i % 89, 999, 999, rank)
  end
  H.write(out .. "trace_view.json", "[\n" .. table.concat(ev, ",\n") .. "\n]\n")
  H.write(out .. "operator_memory.csv", "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),"
    .. "Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),"
    .. "Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),"
    .. "Stream Ptr,Device Type\n" .. table.concat(rows, "\n") .. "\n")
end

describe("strings past the table's memory", function()
  local dir
  setup(function()
    dir = H.tmpdir()
    make_rank(dir .. "/in", 0)
    make_rank(dir .. "/in", 1)
  end)
  teardown(function() H.cleanup(dir) end)

  local function outputs(memory, out, jobs)
    local code, _, err = H.run({ ASCOPE_STRING_MEMORY = memory }, "memory", dir .. "/in", "-o", out, "-q", "-j", jobs)
    assert.are.equal(0, code, err)
    local files = H.files(out)
    for name, text in pairs(files) do files[name] = H.unpath(text, out) end
    return files
  end

  for _, jobs in ipairs({ "1", "2" }) do
    it("give every output byte for byte as in memory, -j " .. jobs, function()
      local kept = outputs("1024", ("%s/kept-%s"):format(dir, jobs), jobs)
      local spilled = outputs("0", ("%s/spilled-%s"):format(dir, jobs), jobs)
      assert.are.same(H.sorted_keys(kept), H.sorted_keys(spilled))
      for name, text in pairs(kept) do
        assert.truthy(text == spilled[name], name .. " differs")
      end
      -- the stacks are all there: the last operator's, whole, in the events of its rank
      assert.truthy(kept["./memory_events.csv"]:find(stack_of(1, OPS), 1, true))
    end)
  end

  it("take a stack's top frame from the chunk that leaves memory for it", function()
    local script = dir .. "/top.lua"
    H.write(script, [[
      local core = require "ascope_core"
      local stacks = core.column.new("string", { "x", "top;\r\n" .. ("f"):rep(3 << 20), "y.py(1): g;\r\nmain" })
      local top = core.stacktree.top(stacks)
      io.write(top[1], "|", top[2], "|", top[3], "|", #stacks[2], "\n")
    ]])
    local code, out, err = H.run({ ASCOPE_STRING_MEMORY = "0" }, "run", script)
    assert.are.equal(0, code, err)
    assert.are.equal(("x|top|y.py(1): g|%d\n"):format(6 + (3 << 20)), out)
  end)

  it("say when ASCOPE_STRING_MEMORY is no whole number of MiB, and keep 16", function()
    local script = dir .. "/nothing.lua"
    H.write(script, "")
    for _, v in ipairs({ "abc", "-1", "1.5", " 8", "+8", "99999999999999999999", "8", "" }) do
      local code, _, err = H.run({ ASCOPE_STRING_MEMORY = v }, "run", script)
      local warned = err:find("ASCOPE_STRING_MEMORY=" .. v .. " is no whole number of MiB: 16 MiB is used", 1, true)
      assert.are.equal(0, code, err)
      assert.are.equal(v ~= "8" and v ~= "", warned ~= nil, v .. ": " .. err)
    end
  end)

  it("keep a small part of the text in memory, and read every string back as it was", function()
    local script = dir .. "/read.lua"
    H.write(script, ([[
      local core = require "ascope_core"
      local trace = require "ascope.ascend.trace"
      local tr = assert(trace.call_stacks(%q))
      local count, bytes = core.column.strings():info()
      local text = 0
      for i = 1, tr.n do text = text + #tr.stack[i] end
      io.write(tr.n, " ", count, " ", bytes, " ", text, "\n")
      for i = 1, tr.n do io.write((tr.stack[i]:gsub("\r\n", "|")), "\n") end
    ]]):format(dir .. "/in/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"))
    local code, out, err = H.run({ ASCOPE_STRING_MEMORY = "0" }, "run", script)
    assert.are.equal(0, code, err)
    local n, count, bytes, text = out:match("^(%d+) (%d+) (%d+) (%d+)\n")
    assert.are.equal(OPS, tonumber(n))
    -- in memory: the chunk being filled (2 MiB) and the index, a few words a string; the
    -- chunks before it (64 KiB to 2 MiB, 4 MiB in all) went to the file
    assert.truthy(tonumber(text) > 3e6 and tonumber(bytes) < 2 * 1048576 + 64 * tonumber(count), out:sub(1, 80))
    local k = 0
    for line in out:gmatch("[^\n]*\n") do
      if k > 0 then assert.are.equal((stack_of(0, k):gsub("\r\n", "|")), line:sub(1, -2)) end
      k = k + 1
    end
    assert.are.equal(OPS + 1, k)
  end)
end)
