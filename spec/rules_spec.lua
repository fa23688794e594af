-- Rule files are strict data loaded in a sandbox: every bundled file fits its schema, and a user
-- file with a typo, an unknown metric or id, a wrong type, a bad pattern, or code that loops,
-- explodes or patches the host is a usage error naming the file (exit 2 from the command line).
local h = require "helper"
local core = require "ascope_core"
local rules = require "ascope.rules"
local errors = require "ascope.errors"
local sandbox = require "ascope.sandbox"
local pattern = require "ascope.pattern"

local NAMES = { "memory", "timeline", "plog", "graph", "opjitter", "win_layout", "layout_memory", "layout_timeline" }

describe("rule files", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  -- load rules NAME with a user file holding text; returns the error (a usage error value)
  local function refused(name, text)
    local path = dir .. "/user.lua"
    h.write(path, text)
    local r, err = rules.load(name, path)
    assert.is_nil(r)
    assert.is_true(errors.is_usage(err), tostring(err))
    local msg = tostring(err)
    assert.equal(path .. ":", msg:sub(1, #path + 1), msg)
    return msg
  end

  it("bundled: every file fits its schema and loads as plain data", function()
    for _, name in ipairs(NAMES) do
      local r, err = rules.load(name)
      assert.is_table(r, tostring(err))
      assert.is_nil(getmetatable(r))
    end
    local step_jitter
    for _, r in ipairs(assert(rules.load("timeline")).rules) do
      if r.id == "step_jitter" then step_jitter = r end
    end
    assert.equal(0.10, step_jitter.value)
  end)

  it("a healthy override changes only what it names", function()
    h.write(dir .. "/ok.lua", [[return { rules = { { id = "step_jitter", value = 0.2 },
      { id = "mine", metric = "op_utilization", op = "<", value = 0.3, severity = "info", finding = { en = "x %s" } } },
      top_n = 5 }]])
    local r = assert(rules.load("timeline", dir .. "/ok.lua"))
    local by = {}
    for _, x in ipairs(r.rules) do by[x.id] = x end
    assert.equal(0.2, by.step_jitter.value)
    assert.equal("step_cv", by.step_jitter.metric)
    assert.equal("mine", r.rules[#r.rules].id)
    assert.equal(5, r.top_n)
  end)

  it("a misspelt key names the file, the rule and the key", function()
    local msg = refused("timeline", [[return { rules = { { id = "step_jitter", valeu = 0.2 } } }]])
    assert.truthy(msg:find('rule step_jitter, key rules[1].valeu: unknown key "valeu"', 1, true), msg)
    msg = refused("memory", [[return { reprot = { top_n = 3 } }]])
    assert.truthy(msg:find('key reprot: unknown key "reprot" (known keys: components, input, match, output, report)', 1,
      true), msg)
  end)

  it("an unknown metric, a wrong type and an unknown id are refused", function()
    local msg = refused("timeline", [[return { rules = { { id = "mine", metric = "step_cvv", op = ">", value = 1,
      severity = "info", finding = { en = "%s" } } } }]])
    assert.truthy(msg:find('rule mine, key rules[1].metric: "step_cvv" is not one of', 1, true), msg)
    msg = refused("opjitter", [[return { tolerance = "0.5" }]])
    assert.truthy(msg:find('key tolerance: must be a number, not "0.5"', 1, true), msg)
    msg = refused("opjitter", [[return { tolerance = 0 }]])
    assert.truthy(msg:find("key tolerance: must be above 0", 1, true), msg)
    msg = refused("timeline", [[return { rules = { { id = "step_jiter", value = 0.2 } } }]])
    assert.truthy(msg:find('rule step_jiter, key rules[1]: unknown id "step_jiter"', 1, true), msg)
    assert.truthy(msg:find("step_jitter", 1, true))
    msg = refused("plog", [[return { classifiers = { { id = "mine", category = "x", title = { en = "t" } } } }]])
    assert.truthy(msg:find("rule mine, key classifiers[1]: needs a pattern or modules", 1, true), msg)
  end)

  it("malformed and costly patterns are refused, where a match would never reach them too", function()
    local msg = refused("plog", [[return { classifiers = { { id = "broken", pattern = "[unclosed" } } }]])
    assert.truthy(msg:find("rule broken, key classifiers[1].pattern", 1, true), msg)
    assert.truthy(msg:find("missing ']'", 1, true), msg)
    msg = refused("graph", [[return { card = { "rank_(%d+)%" } }]])
    assert.truthy(msg:find("key card[1]: bad pattern", 1, true), msg)
    -- eight lazy repetitions: a failing match costs the line length to the 8th power
    msg = refused("timeline", [[return { patterns = { step = "^(.-)(.-)(.-)(.-)(.-)(.-)(.-)(.-)x$" } }]])
    assert.truthy(msg:find("key patterns.step: bad pattern", 1, true), msg)
    assert.truthy(msg:find("8 repetitions", 1, true), msg)
    -- lane, name and tag patterns are extended regular expressions, checked by the regcomp that
    -- runs them, each element of a list on its own; never as Lua patterns
    msg = refused("timeline", [[return { lanes = { device = "NPU|AI (Core" } }]])
    assert.truthy(msg:find('key lanes.device: invalid regular expression "NPU|AI (Core"', 1, true), msg)
    msg = refused("timeline", [[return { names = { comm = { "^hcom_", "all(reduce" } } }]])
    assert.truthy(msg:find('key names.comm[2]: invalid regular expression "all(reduce"', 1, true), msg)
    h.write(dir .. "/ere.lua", [[return { lanes = { device = "Stream [0-9]{2}%" }, names = { sync = { "^event_(wait|record)" } } }]])
    assert.is_table(rules.load("timeline", dir .. "/ere.lua"))
    -- an edited copy of the folder (--rules-dir) must keep what the analysis reads
    local copy = dir .. "/copy"
    assert(require("ascope_core").fs.mkdirs(copy))
    h.write(copy .. "/timeline.lua", [[return { lanes = {}, task_types = {}, names = {}, patterns = {}, rules = {} }]])
    rules.set_dir(copy)
    local none, err = rules.load("timeline")
    rules.set_dir(nil)
    assert.is_nil(none)
    assert.truthy(tostring(err):find(copy .. '/timeline.lua: key patterns: the key "step" is missing', 1, true), tostring(err))
    assert.same({ true }, { pattern.check("kernel_name[=:]%s*([%w_%.%-]+)") })
    -- six repetitions, each followed by what it cannot take: the linear subset, no limit
    assert.equal(6, pattern.repeats("a%s*b%s*c%s*d%s*e%s*(%d+)"))
    assert.same({ true }, { pattern.check("a%s*b%s*c%s*d%s*e%s*(%d+)") })
    assert.is_false((pattern.check("a.-b.-c.-d.-e.-f")))
    assert.equal(3, pattern.repeats('"name"%s*:%s*"([^"]+)"'))
    assert.equal(0, pattern.repeats("%f[%w](E[ZEILK]%d%d%d%d)%f[%W]"))
  end)

  it("window layout sizes and offsets are bounded by the window before they reach C", function()
    local msg = refused("win_layout", [[return { layouts = { v2 = { window_bytes = -1 } } }]])
    assert.truthy(msg:find("key layouts.v2.window_bytes: -1 is below the least allowed", 1, true), msg)
    msg = refused("win_layout", [[return { layouts = { v2 = { dispatch = { info = { 768 * 1024, 2048 * 1024 } } } } }]])
    assert.truthy(msg:find("dispatch.info must be {start, end} with start < end <= window_bytes", 1, true), msg)
    msg = refused("win_layout", [[return { layouts = { v2 = { fields = { flag = 200 } } } }]])
    assert.truthy(msg:find("fields.flag: word 200 lies outside a block of 512 bytes", 1, true), msg)
    msg = refused("win_layout", [[return { socs = { ["950"] = { layout = "v9" } } }]])
    assert.truthy(msg:find('key socs.950.layout: "v9" is not one of the layouts (v2)', 1, true), msg)
  end)

  it("rule code cannot change the host's string library", function()
    local msg = refused("graph", [[getmetatable("").__index.format = function() return "pwned" end return {}]])
    assert.truthy(msg:find("getmetatable", 1, true), msg)
    -- its own copy is its own: changing it changes nothing outside
    assert.is_table(sandbox.run([[string.format = function() return "pwned" end
      assert(string.format("%d", 1) == "pwned") assert(("%d"):format(1) == "1") return {}]], "@own.lua"))
    assert.equal("1", ("%d"):format(1))
    assert.equal("1", string.format("%d", 1))
    for _, code in ipairs({ "load('x = 1')()", "debug.sethook()", "collectgarbage('stop')", "pcall(error)",
                            "require('os')", "io.write('x')", "os.exit(3)", "setmetatable({}, {})" }) do
      msg = refused("graph", code .. " return {}")
      assert.truthy(msg:find("attempt to ", 1, true), code .. ": " .. msg)
    end
  end)

  it("a rule file that loops, has a __pairs metamethod or explodes is stopped", function()
    local msg = refused("graph", "while true do end")
    assert.truthy(msg:find("runs more than", 1, true), msg)
    msg = refused("graph", "local n = 0 repeat n = n + 1 until n < 0 return {}")
    assert.truthy(msg:find("runs more than", 1, true), msg)
    -- without setmetatable no __pairs (or __index, __gc) can reach the host's pairs() later
    msg = refused("graph", "return setmetatable({}, { __pairs = function() while true do end end })")
    assert.truthy(msg:find("setmetatable", 1, true), msg)
    msg = refused("graph", "local s = 'x' while true do s = s .. s end")
    assert.truthy(msg:find("uses more than 64 MiB of memory", 1, true), msg)
    msg = refused("graph", "return { card = { ('x'):rep(1 << 40) } }")
    assert.truthy(msg:find("uses more than 64 MiB of memory", 1, true), msg)
    msg = refused("graph", "local t = {} for i = 1, 1e9 do t[i] = { i } end return t")
    assert.truthy(msg:find("more than", 1, true), msg)
  end)

  it("rule code's own pattern matching is held to the same limits", function()
    local msg = refused("graph", [[local x = ("a"):rep(30):find(".-.-.-.-.-.-.-.-.-.-b") return {}]])
    assert.truthy(msg:find("10 repetitions", 1, true), msg)
    msg = refused("graph", [[local x = ("a"):rep(5000):find("a*a*a*b") return {}]])
    assert.truthy(msg:find("too costly to match", 1, true), msg)
    assert.is_table(sandbox.run([[return { n = select(2, ("a,b,c"):gsub(",", ";")) }]], "@ok.lua"))
  end)

  it("only data comes back: no functions, no cycles", function()
    local msg = refused("graph", "return { filter = { function() end } }")
    assert.truthy(msg:find("filter[1]: a function; rule files hold data only", 1, true), msg)
    msg = refused("graph", "local t = {} t.filter = t return t")
    assert.truthy(msg:find("filter: a table that contains itself", 1, true), msg)
  end)

  it("the command line exits 2 naming the file, for every job's rule file and the layouts", function()
    local bad = dir .. "/bad.lua"
    h.write(bad, [[return { valeu = 1 }]])
    local empty = dir .. "/empty"
    assert(require("ascope_core").fs.mkdirs(empty))
    local runs = {
      { "memory", empty, "--rules", bad }, { "timeline", empty, "--rules", bad }, { "plog", empty, "--rules", bad },
      { "graph", empty, "--rules", bad }, { "opjitter", empty, "--rules", bad },
      { "moe", "TARGET_DIR=" .. empty, "SOC_VERSION=950", "--rules", bad },
      { "timeline", empty, "--layout", bad }, { "memory", empty, "--layout", bad },
    }
    for _, args in ipairs(runs) do
      args[#args + 1] = "-o"
      args[#args + 1] = dir .. "/out"
      local code, _, err = h.run("--lang", "en", table.unpack(args))
      assert.equal(2, code, table.concat(args, " ") .. ": " .. err)
      assert.truthy(err:find(bad .. ': key valeu: unknown key "valeu"', 1, true), err)
    end
    h.write(bad, "while true do end")
    local code, out, err = h.run("timeline", empty, "--rules", bad, "-o", dir .. "/out")
    assert.equal(2, code)
    assert.equal("", out)
    assert.truthy(err:find(bad .. ": the rule file runs more than", 1, true), err)
  end)
end)

describe("thresholds and field lists exist once, in rules/", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("the memory reader requires the columns the input check requires", function()
    local memory_csv = require "ascope.ascend.memory_csv"
    assert.same({ "Name", "Size(KB)", "Allocation Time(us)", "Duration(us)", "Allocation Total Allocated(MB)",
                  "Device Type" }, memory_csv.required())
    local p = dir .. "/operator_memory.csv"
    h.write(p, "Name,Size(KB),Allocation Time(us),Allocation Total Allocated(MB),Device Type\naten::x,1,5,1,NPU:0\n")
    local none, err = memory_csv.read(p)
    assert.is_nil(none)
    assert.truthy(err:find("Duration(us)", 1, true), err)
    -- a rule set that no longer requires Duration(us) reads the same file
    local r = assert(memory_csv.read(p, nil, { "Name", "Size(KB)", "Allocation Time(us)" }))
    assert.equal(1, r.n)
    assert.is_nil(r.dur_ns[1])
  end)

  it("the hidden communication jitter fact uses the jitter rules' limits", function()
    local findings = require "ascope.analysis.timeline.findings"
    local list = assert(rules.load("timeline")).rules
    local rank = { dashboard = { step_cv = 0.12, comm_jitter = 0.2 } }
    -- step CV 0.12 is above the bundled 0.10: the jitter shows, it is not hidden
    assert.equal(0, findings.metrics(rank, list).hidden_comm_jitter)
    h.write(dir .. "/r.lua", [[return { rules = { { id = "step_jitter", value = 0.15 } } }]])
    local raised = assert(rules.load("timeline", dir .. "/r.lua")).rules
    assert.equal(1, findings.metrics(rank, raised).hidden_comm_jitter)
    assert.equal(0, findings.metrics(rank, raised).compute_side_jitter)
    -- without a comm_jitter rule its limit is the bundled value, 0.15: 0.2 is still above it
    h.write(dir .. "/r2.lua", [[return { rules = { { id = "step_jitter", value = 0.15 }, { id = "comm_jitter", disabled = true } } }]])
    assert.equal(1, findings.metrics(rank, assert(rules.load("timeline", dir .. "/r2.lua")).rules).hidden_comm_jitter)
    h.write(dir .. "/r3.lua", [[return { rules = { { id = "comm_jitter", value = 0.25 } } }]])
    local calm = findings.metrics(rank, assert(rules.load("timeline", dir .. "/r3.lua")).rules)
    assert.equal(0, calm.hidden_comm_jitter)
    assert.equal(1, calm.compute_side_jitter)
  end)

  it("the long-tail bound is the rules' jitter.long_tail_median; a disabled step_jitter keeps its bundled limit", function()
    -- step times 67, 67, 67, 107 ms: 107 > 1.5 x 67 is long; at a factor of 2 it is not, and
    -- the P95 bound cannot make it long (it is the P95 itself)
    h.write(dir .. "/r/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
      "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Preparing\n"
      .. "1,50,10,30,40,5,65,0,2\n2,50,10,30,40,5,65,0,2\n3,50,10,30,40,5,65,0,2\n4,50,10,30,40,45,105,0,2\n")
    local function long_tail(rule_text)
      local args = { "timeline", dir .. "/r", "-o", dir .. "/out", "-q" }
      if rule_text then
        h.write(dir .. "/rules.lua", rule_text)
        args[#args + 1], args[#args + 2] = "--rules", dir .. "/rules.lua"
      end
      local code, _, err = h.run(table.unpack(args))
      assert.equal(0, code, err)
      return #core.json.load(dir .. "/out/timeline_metrics.json").ranks[1].jitter.long_tail
    end
    assert.equal(1, long_tail())
    assert.equal(0, long_tail("return { jitter = { long_tail_median = 2 } }"))
    assert.equal(1, long_tail("return { rules = { { id = \"step_jitter\", disabled = true } } }"))
    local jitter = require "ascope.analysis.timeline.jitter"
    assert.equal(0.10, jitter.cv_threshold({ rules = {} }))
    -- no number of the rules is repeated in the code that reads them
    for _, f in ipairs({ "lua/ascope/analysis/timeline/jitter.lua", "lua/ascope/analysis/timeline/findings.lua" }) do
      local src = h.read(f)
      for _, n in ipairs({ "0%.10", "0%.15", "1%.5" }) do assert.falsy(src:find(n), f .. " repeats " .. n) end
    end
  end)

  it("error_plog.csv has a column per field of the rules, in their field_order", function()
    local plog = require "ascope.plog"
    local base = assert(rules.load("plog"))
    assert.same({ "device_id", "stream_id", "report_stream_id", "task_id", "kernel_name", "origin_op_name", "error_code" },
      plog.field_names(base))
    h.write(dir .. "/f.lua", [[return { fields = { pid = { "pid=(%d+)" } } }]])
    local names = plog.field_names(assert(rules.load("plog", dir .. "/f.lua")))
    assert.equal("pid", names[#names])
    h.write(dir .. "/log/plog-1.log",
      "[ERROR] RUNTIME(1,python):2025-01-01-00:00:00.000.000 [a.cc:1]2 EE9999 pid=77 device_id=3\n")
    local code, _, err = h.run("plog", dir .. "/log", "--rules", dir .. "/f.lua", "-o", dir .. "/out", "-q")
    assert.equal(0, code, err)
    local rows, header = h.csv_rows(dir .. "/out/error_plog.csv")
    assert.equal("pid", header[#header])
    assert.equal("77", rows[1].pid)
    assert.equal("3", rows[1].device_id)
    h.write(dir .. "/g.lua", [[return { field_order = { "device_id", "pidd" } }]])
    local none, gerr = rules.load("plog", dir .. "/g.lua")
    assert.is_nil(none)
    assert.truthy(tostring(gerr):find('key field_order[2]: "pidd" is not one of the fields', 1, true), tostring(gerr))
  end)
end)

describe("the sandbox's own string library", function()
  it("cannot be turned against the checks that guard it", function()
    -- the rule replaces its string.sub (which the pattern checks use through string methods)
    -- and then asks for a costly pattern: still refused, and the host's sub is untouched
    local r, err = sandbox.run([[string.sub = function() return "" end
      string.find = function() return 1 end
      return { ("a"):rep(40):match(".-.-.-.-.-.-.-.-.-.-b") }]], "@evil.lua")
    assert.is_nil(r)
    assert.truthy(err:find("10 repetitions", 1, true), err)
    assert.equal("b", ("abc"):sub(2, 2))
  end)
end)

describe("the sandbox's memory cap", function()
  it("counts what a rule holds, not the garbage it leaves", function()
    -- 20,000 temporary strings of 10 KB (about 200 MB made, almost none held)
    local r, err = sandbox.run([[local n = 0
      for i = 1, 20000 do local s = ("x"):rep(10000) .. i n = n + #s end
      return { n = n }]], "@garbage.lua")
    assert.is_table(r, tostring(err))
    assert.is_true(r.n > 20000 * 10000)
  end)
end)
