local h = require "helper"

describe("the ascope executable", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("lists its commands and teaches each one", function()
    local code, out = h.run("help")
    assert.equal(0, code)
    assert.truthy(out:find("memory", 1, true))
    assert.truthy(out:find("run", 1, true))
    local code2, out2 = h.run("help", "memory")
    assert.equal(0, code2)
    assert.truthy(out2:find("usage: ascope memory INPUT", 1, true))
    assert.truthy(out2:find("--rank-list LIST", 1, true))
    local code3, out3 = h.run("memory", "--help")
    assert.equal(0, code3)
    assert.equal(out2, out3)
  end)

  it("prints the versions it was built with", function()
    local code, out = h.run("version")
    assert.equal(0, code)
    assert.truthy(out:find("Lua 5.4", 1, true))
    assert.truthy(out:find("LPeg 1%.%d"))
    assert.truthy(out:find("yajl 2%.%d"))
    assert.truthy(out:find("libcsv 3%.%d"))
    assert.truthy(out:find("SQLite 3%.%d+"))
  end)

  it("rejects an unknown command with exit code 2", function()
    local code, _, err = h.run("frobnicate")
    assert.equal(2, code)
    assert.truthy(err:find("unknown command 'frobnicate'", 1, true))
  end)

  it("runs a user script with the API preloaded and arg set as lua does", function()
    local script = dir .. "/s.lua"
    h.write(script, [[
      local ascope = require "ascope"
      local s = ascope.interval.union({0, 5}, {10, 20})
      print(arg[0], arg[1], arg[2], s:total())
      return 3
    ]])
    local code, out = h.run("run", script, "x", "--quiet")
    assert.equal(3, code)
    assert.equal(script .. "\tx\t--quiet\t20\n", out)
  end)

  it("shows one line for an error and a traceback only with --debug", function()
    local script = dir .. "/boom.lua"
    h.write(script, "local function f() error('kaput') end\nf()\n")
    local code, _, err = h.run("run", script)
    assert.equal(1, code)
    assert.truthy(err:find("kaput", 1, true))
    assert.falsy(err:find("stack traceback", 1, true))
    local _, _, err2 = h.run("--debug", "run", script)
    assert.truthy(err2:find("stack traceback", 1, true))
  end)

  it("loads edited Lua modules from ASCOPE_PATH before the bundled ones", function()
    h.write(dir .. "/lua/ascope/report/md.lua", "return { table = function() return 'EDITED TABLE\\n' end }")
    local cmd = ("ASCOPE_PATH=%s/lua %s memory %s -o %s/out -q --format md"):format(dir, h.bin,
      h.real .. "/rl-insight/memory_data", dir)
    assert.is_true(os.execute(cmd .. " >/dev/null 2>&1"))
    assert.truthy(h.read(dir .. "/out/memory_report.md"):find("EDITED TABLE", 1, true))
  end)

  it("with ASCOPE_PATH set, still prints its warnings and errors and speaks the language asked", function()
    -- the modules are loaded anew from the path: the log and the language must be those
    local fs = require("ascope_core").fs
    fs.mkdirs(dir .. "/empty")
    local rank = dir .. "/bad/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    fs.mkdirs(rank)
    h.write(rank .. "/operator_memory.csv", "garbage\n")
    local code, _, err = h.run({ ASCOPE_PATH = dir .. "/empty" }, "memory", dir .. "/bad", "-o", dir .. "/o3", "-q")
    assert.equal(1, code)
    assert.truthy(err:find("[ERROR] rank 0 (bad): operator_memory.csv lacks required columns", 1, true), err)
    assert.truthy(err:find("[ERROR] 1 rank(s) could not be read", 1, true), err)
    local code2, out2 = h.run({ ASCOPE_PATH = dir .. "/empty" }, "--lang", "zh", "memory", h.real .. "/rl-insight/memory_data",
      "-o", dir .. "/o4", "-q")
    assert.equal(0, code2)
    assert.truthy(out2:find("内存分析", 1, true), out2)
  end)

  it("applies a user rule file and a rules folder without rebuilding", function()
    local rules = dir .. "/my_rules.lua"
    h.write(rules, [[return { report = { top_n = 1 }, match = { default_mode = "within" } }]])
    local code = h.run("memory", h.real .. "/msinsight_pytorch_text_level0", "-o", dir .. "/out", "-q",
      "--rules", rules, "--format", "json")
    assert.equal(0, code)
    local s = require("ascope_core").json.load(dir .. "/out/memory_summary.json")
    assert.equal("within", s.match_mode)
    assert.equal(1, #s.ranks[1].top_call_sites.top)
    h.write(dir .. "/rules/memory.lua", "return { input = 'broken' }")
    local code2, _, err2 = h.run("--rules-dir", dir .. "/rules", "memory", h.real .. "/rl-insight", "-o", dir .. "/o2")
    assert.equal(2, code2)
    assert.truthy(err2:find(dir .. "/rules/memory.lua: key input: must be a list, not string", 1, true), err2)
  end)

  it("answers in Chinese with --lang zh", function()
    local code, out = h.run("--lang", "zh", "memory", h.real .. "/rl-insight/memory_data", "-o", dir, "-q")
    assert.equal(0, code)
    assert.truthy(out:find("内存分析", 1, true))
  end)

  it("draws a progress bar on a terminal, stage lines elsewhere, nothing with --quiet", function()
    local input = h.real .. "/rl-insight/memory_data"
    -- script(1) gives the command a pseudo-terminal and copies what it drew to our stdout
    local cmd = ("script -qec \"%s memory %s -o %s\" /dev/null"):format(h.bin, input, dir)
    local p = assert(io.popen(cmd))
    local drawn = p:read("a")
    p:close()
    assert.truthy(drawn:find("trace_view.json [", 1, true))
    assert.truthy(drawn:find("] 100%", 1, true))
    assert.truthy(drawn:find("/s", 1, true))
    assert.truthy(drawn:find("\r\27%[K"), "the bar is redrawn in place")

    local code, _, err = h.run("memory", input, "-o", dir)
    assert.equal(0, code)
    assert.truthy(err:find("[ascope] ", 1, true))
    assert.falsy(err:find("\r", 1, true), "no bar when stderr is not a terminal")

    -- --quiet silences stages and progress; warnings about the data still reach the user
    code, _, err = h.run("memory", h.real .. "/msinsight_legacy_2023_2024", "-o", dir, "--quiet")
    assert.equal(0, code)
    assert.falsy(err:find("[ascope]", 1, true))
    assert.truthy(err:find("[WARNING] trace_view.json is missing", 1, true), err)
  end)
end)
