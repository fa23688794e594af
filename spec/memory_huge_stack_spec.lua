-- One enormous call stack (the 100 MB stack of a real run, scaled down to a few MB): the run's
-- memory stays a small multiple of the stack, every label a person reads (Markdown, HTML and
-- its charts, the summary's call sites, the trace viewer's frame names and call_stack_top) is
-- capped at fmt.LABEL_MAX bytes on a character boundary, and memory_events.csv keeps the whole
-- stack (it is the data, as the reference tool writes it).
local H = require "spec.helper"
local core = require "ascope_core"
local fmt = require "ascope.fmt"

local MB = 1048576
-- one frame without separators, with multibyte characters so that a cut at 1000 bytes would
-- fall inside one: 2 + 3 * k bytes before the cut makes byte 1001 a continuation byte
local BIG_FRAME = "x." .. ("函数"):rep(700000) -- 4.2 MB
-- a deep recursion: 50000 frames of about 70 bytes, a short top frame
local DEEP_FRAMES = 50000
local function deep_stack()
  local frames = {}
  for k = 1, DEEP_FRAMES do
    frames[k] = ("/home/user/project/src/deep/recursion_module.py(%d): level_%07d"):format(k % 997, k)
  end
  return table.concat(frames, ";\r\n")
end

local function json_text(s) return core.json.encode(s):sub(2, -2) end

-- s is the label (a failure names lengths, not megabytes of text)
local function is_label(label, s, what)
  assert.truthy(s == label, ("%s: %s bytes, the label has %d"):format(what, s and #s or "nil", #label))
end

-- a rank with the two huge stacks and an ordinary one; the big frame's allocation is never
-- released (a leak suspect, and alive at the peak)
local function make_rank(dir, with_huge)
  local out = dir .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
  H.write(dir .. "/rank0_ascend_pt/profiler_info_0.json", '{"rank_id": 0}')
  local big = with_huge and BIG_FRAME or "x.py(1): big"
  local deep = with_huge and deep_stack() or "a.py(1): deep;\r\nmain.py(1): <module>"
  local ev = '{"ph": "X", "name": "%s", "pid": 7, "tid": 7, "ts": "%s", "dur": 5.0, "cat": "cpu_op", '
    .. '"args": {"Call stack": "%s"}}'
  H.write(out .. "trace_view.json", "[\n" .. table.concat({
    ev:format("aten::big", "1736405443000010.000", json_text(big)),
    ev:format("aten::deep", "1736405443000020.000", json_text(deep)),
    ev:format("aten::small", "1736405443000030.000", "a.py(1): f;\\r\\nmain.py(9): <module>"),
  }, ",\n") .. "\n]\n")
  H.write(out .. "operator_memory.csv", H.MEMORY_CSV_HEADER
    .. "aten::big,2048.0,1736405443000011.000\t,,,,,1002.0,2000.0,1002.0,,,,187650000,NPU:0\n"
    .. "aten::deep,1024.0,1736405443000021.000\t,1736405443000050.000\t,1736405443000050.000\t,29.000\t,29.000\t,"
    .. "1003.0,2000.0,1003.0,1002.0,2000.0,1002.0,187650000,NPU:0\n"
    .. "aten::small,10.0,1736405443000031.000\t,1736405443000032.000\t,1736405443000032.000\t,1.000\t,1.000\t,"
    .. "1003.01,2000.0,1003.01,1003.0,2000.0,1003.0,187650000,NPU:0\n")
  return big, deep
end

-- `ascope memory` in a child process, with -j 1 so that no output is written by a worker of its
-- own: the child reads its peak resident size (VmHWM) from /proc when the command is done
local PROBE = [[
local code = require("ascope.main").main({ "memory", arg[1], "-o", arg[2], "-q", "-j", "1" })
local f = assert(io.open("/proc/self/status"))
local hwm = f:read("a"):match("VmHWM:%s*(%d+) kB")
f:close()
io.write("exit ", code, " hwm ", hwm, "\n")
]]

local function peak_kb(dir, input, out)
  H.write(dir .. "/probe.lua", PROBE)
  -- under AddressSanitizer freed blocks are kept (quarantined) and would count as resident
  local env = os.getenv("ASAN_OPTIONS") and { ASAN_OPTIONS = "detect_leaks=0:quarantine_size_mb=0" } or {}
  local code, stdout, stderr = H.run(env, "run", dir .. "/probe.lua", input, out)
  assert.equal(0, code, stderr)
  local exit, hwm = stdout:match("exit (%d+) hwm (%d+)")
  assert.equal("0", exit, stdout .. stderr)
  return tonumber(hwm)
end

describe("ascope memory with one huge call stack", function()
  local dir, big, deep, huge_kb, small_kb
  setup(function()
    dir = H.tmpdir()
    big, deep = make_rank(dir .. "/huge", true)
    make_rank(dir .. "/small", false)
    huge_kb = peak_kb(dir, dir .. "/huge", dir .. "/out")
    small_kb = peak_kb(dir, dir .. "/small", dir .. "/out-small")
  end)
  teardown(function() H.cleanup(dir) end)

  it("stays within a small multiple of the stacks' size", function()
    local stacks_kb = (#big + #deep) / 1024 -- 8.4 MB in all
    assert.truthy(#big > 4 * MB and #deep > 3 * MB)
    -- the stacks are held once interned and once more while the scanner reads them; a copy per
    -- output, per ranking or per frame (as before: 30x) would break this
    local over = huge_kb - small_kb
    assert.truthy(over <= 4 * stacks_kb,
      ("peak %d KiB, %d KiB over the small rank's, for %.0f KiB of stacks"):format(huge_kb, over, stacks_kb))
  end)

  it("caps the labels of the Markdown and HTML reports and of the summary", function()
    local label = fmt.label(big)
    assert.equal(2 + 3 * 332 + #"…", #label) -- cut before the character that crosses byte 1000
    local md = H.read(dir .. "/out/memory_report.md")
    local html = H.read(dir .. "/out/memory_report.html")
    assert.truthy(md:find(label, 1, true), "the Markdown shows the frame's start")
    assert.truthy(html:find(label, 1, true), "the HTML shows the frame's start")
    local longer = big:sub(1, #label + 30)
    assert.falsy(md:find(longer, 1, true))
    assert.falsy(html:find(longer, 1, true))
    assert.truthy(#md < 64 * 1024 and #html < 256 * 1024, ("md %d, html %d bytes"):format(#md, #html))
    local summary = core.json.decode(H.read(dir .. "/out/memory_summary.json"))
    local rank = summary.ranks[1]
    is_label(label, rank.leak_suspects.top[1].call_site, "leak suspect")
    is_label(label, rank.components[1].live_at_peak.top[1].call_site, "live at peak")
    is_label(label, rank.top_call_sites.top[1].call_site, "top call site")
    -- the deep stack's top frame is short: it stays whole
    assert.equal("/home/user/project/src/deep/recursion_module.py(1): level_0000001", rank.top_call_sites.top[2].call_site)
  end)

  it("caps the trace viewer's frame names and call_stack_top, keeping every frame", function()
    local trace = core.json.decode(H.read(dir .. "/out/memory_trace.json"))
    local label = fmt.label(big)
    local names, longest = {}, 0
    for _, f in pairs(trace.stackFrames) do
      names[f.name] = true
      longest = math.max(longest, #f.name)
    end
    assert.truthy(names[label])
    assert.equal(#label, longest)
    -- the deep stack's frames, the big frame, the small stack's two, "(no call stack)"
    local n = 0
    for _ in pairs(trace.stackFrames) do n = n + 1 end
    assert.equal(DEEP_FRAMES + 1 + 2 + 1, n)
    local tops = {}
    for _, e in ipairs(trace.traceEvents) do
      if e.ph == "b" then tops[e.name] = e.args.call_stack_top end
    end
    is_label(label, tops["aten::big"], "call_stack_top")
    assert.equal("/home/user/project/src/deep/recursion_module.py(1): level_0000001", tops["aten::deep"])
  end)

  it("keeps the whole stack in memory_events.csv", function()
    local rows = H.csv_rows(dir .. "/out/memory_events.csv")
    local by_name = {}
    for _, r in ipairs(rows) do by_name[r.name] = r end
    is_label(big, by_name["aten::big"].call_stack, "call_stack")
    is_label(big, by_name["aten::big"].call_stack_top, "call_stack_top")
    is_label(deep, by_name["aten::deep"].call_stack, "deep call_stack")
  end)
end)
