-- One command-line style for every command: help in three spellings that agree with the command
-- list, global options anywhere, "did you mean", an output path that is a file or empty, colour.
local h = require "helper"
local mh = require "moe_helper"
local main = require "ascope.main"
local cli = require "ascope.cli"
local fs = require("ascope_core").fs

local sorted_keys = h.sorted_keys

-- the files a run left in dir, sorted
local function files_in(dir)
  local names = {}
  for _, e in ipairs(assert(fs.list(dir))) do names[#names + 1] = type(e) == "table" and e.name or e end
  table.sort(names)
  return names
end

-- the outputs a command's spec promises for its default --format
local function promised(spec)
  local formats = {}
  for _, o in ipairs(spec.options) do
    if o[1] == "format" then for f in o.default:gmatch("[^,]+") do formats[f] = true end end
  end
  local names = {}
  for _, f in ipairs(spec.outputs) do
    if not f.format or formats[f.format] then names[#names + 1] = f[1] end
  end
  table.sort(names)
  return names
end

describe("one command-line style", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("lists exactly the commands it runs, and help, --help and -h agree for each", function()
    local code, overview = h.run("help")
    assert.equal(0, code)
    local listed = {}
    for name in ("\n" .. overview:match("\ncommands:\n(.-)\n\n")):gmatch("\n  (%a+) ") do listed[#listed + 1] = name end
    assert.same(main.command_names(), listed)
    assert.same({ "diagnose", "graph", "memory", "moe", "opjitter", "plog", "timeline", "merge", "run", "help", "version" }, listed)
    local _, bare = h.run()
    assert.equal(overview, bare)
    for _, name in ipairs(listed) do
      local c1, by_help, e1 = h.run("help", name)
      local c2, by_flag = h.run(name, "--help")
      local c3, by_short = h.run(name, "-h")
      assert.equal(0, c1, name .. ": " .. e1)
      assert.equal(0, c2, name)
      assert.equal(0, c3, name)
      assert.equal(by_help, by_flag, name)
      assert.equal(by_help, by_short, name)
      assert.truthy(by_help:find("usage: ascope " .. name, 1, true), name)
      -- every option of the command and every global option is in its help
      for _, o in ipairs(main.spec(name).options) do
        assert.truthy(by_help:find("--" .. o[1], 1, true), name .. " --" .. o[1])
      end
      local globals = by_help:match("\nglobal options:\n(.-)\n\n") or by_help:match("\nglobal options:\n(.*)$")
      for _, o in ipairs(cli.globals) do
        assert.truthy(globals:find("--" .. o[1], 1, true), name .. " global --" .. o[1])
      end
    end
    local _, help_help = h.run("help", "help")
    assert.truthy(help_help:find("usage: ascope help [COMMAND]", 1, true))
    local _, run_help = h.run("run", "--help")
    assert.truthy(run_help:find("usage: ascope run SCRIPT.lua [ARG ...]", 1, true))
  end)

  it("passes the words after a script to it untouched, global options included", function()
    local script = dir .. "/s.lua"
    h.write(script, "print(table.concat(arg, ' '))")
    local code, out = h.run("-q", "run", script, "--lang", "xx", "--help", "-h")
    assert.equal(0, code)
    assert.equal("--lang xx --help -h\n", out)
    local code2, _, err2 = h.run("help", "frobnicate")
    assert.equal(2, code2)
    assert.truthy(err2:find("unknown command 'frobnicate' (commands: ", 1, true))
  end)

  it("names every file a run writes in the command's help, html included", function()
    -- memory and timeline on real samples, diagnose with every input (its outputs are moe's,
    -- opjitter's, plog's and graph's and its own page)
    local L0 = h.real .. "/msinsight_pytorch_text_level0"
    assert.equal(0, (h.run("memory", L0, "-o", dir .. "/memory", "-q")))
    assert.equal(0, (h.run("timeline", L0 .. "/rank0_ascend_pt", "-o", dir .. "/timeline", "-q")))
    mh.write_card(dir .. "/dumps/0", mh.card(0), {}, "mc2")
    mh.write_card(dir .. "/dumps/1", mh.card(1), {}, "mc2")
    h.write(dir .. "/logs/plog-1.log", "[ERROR] GE(1,python):2024-06-01-10:00:00.000.000 [ge.cc:1]2 E19999: Inner Error!\n")
    h.write(dir .. "/graphs/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}]}')
    h.write(dir .. "/graphs/graph_1_device1.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}]}')
    assert.equal(0, (h.run("diagnose", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950", "PROFILING_PATH=" .. L0,
      "PLOG_PATH=" .. dir .. "/logs", "GRAPH_PATH=" .. dir .. "/graphs", "-o", dir .. "/diagnose", "-q")))
    for _, name in ipairs({ "memory", "timeline", "diagnose" }) do
      local spec = main.spec(name)
      assert.same(promised(spec), files_in(dir .. "/" .. name), name)
      local _, help = h.run("help", name)
      for _, f in ipairs(spec.outputs) do assert.truthy(help:find("\n  " .. f[1], 1, true), name .. ": " .. f[1]) end
    end
    -- the analyses diagnose ran promise what they wrote, each on its own
    local union = {}
    for _, name in ipairs({ "moe", "opjitter", "plog", "graph" }) do
      for _, f in ipairs(main.spec(name).outputs) do union[f[1]] = true end
    end
    union["diagnose_report.html"], union["diagnose_summary.json"] = true, true
    assert.same(sorted_keys(union), files_in(dir .. "/diagnose"))
    -- a details text that names output files names them all
    for _, name in ipairs(main.command_names()) do
      local spec = main.spec(name)
      local details = spec.details and spec.details.en or ""
      local named = 0
      for _, f in ipairs(spec.outputs or {}) do
        if details:find(f[1], 1, true) then named = named + 1 end
      end
      assert.truthy(named == 0 or named == #spec.outputs, name .. ": the details name some outputs but not all")
    end
  end)

  it("shows every option of every command on the README's usage lines", function()
    local readme = h.read("README.md")
    local usage = {}
    for block in readme:gmatch("```sh\n(.-)```") do
      -- a usage line continues on the indented lines below it
      for line in (block:gsub("\n%s+", " ")):gmatch("[^\n]+") do
        local name = line:match("^ascope (%a+)")
        if name then usage[name] = (usage[name] or "") .. " " .. line end
      end
    end
    for _, name in ipairs(main.command_names()) do
      local spec = main.spec(name)
      local text = usage[name]
      assert.truthy(text, "no usage line for ascope " .. name)
      local by_flag = {}
      for k, flag in pairs(spec.keys or {}) do by_flag[flag] = k end
      for _, o in ipairs(spec.options) do
        if not o.alias_of then
          local found = text:find(("--" .. o[1]):gsub("%-", "%%-") .. "%f[^%w-]") or (o[2] and text:find("%-" .. o[2] .. " "))
            or (by_flag[o[1]] and text:find(by_flag[o[1]] .. "=", 1, true))
          assert.truthy(found, ("README usage of ascope %s lacks --%s"):format(name, o[1]))
          if o[1] == "format" then
            local shown = text:match("%-%-format ([%w,|]+)") or ""
            for f in o.default:gmatch("[^,]+") do
              assert.truthy(shown:find(f, 1, true), ("README: ascope %s --format lacks %s"):format(name, f))
            end
          end
        end
      end
    end
  end)

  it("suggests the command, option or parameter a typo meant, and nothing for a word far from all", function()
    local cases = {
      { { "memroy" }, "unknown command 'memroy'; did you mean memory?" },
      { { "timelin", "x" }, "did you mean timeline?" },
      { { "memory", "x", "--formta", "csv" }, "unknown option --formta for 'ascope memory'; did you mean --format?" },
      { { "memory", "x", "--rank-lsit", "0" }, "did you mean --rank-list?" },
      { { "memory", "x", "--lnag", "en" }, "did you mean --lang?" },
      { { "--qiet", "memory", "x" }, "unknown option --qiet before the command; did you mean --quiet?" },
      { { "moe", "TARGET_DIR=x", "SOC_VERION=950" }, "unknown parameter SOC_VERION for 'ascope moe'; did you mean SOC_VERSION?" },
      { { "moe", "TARGET_DIR=x", "--soc-version", "951" }, "did you mean 950?" },
      { { "moe", "TARGET_DIR=x", "soc_version=950" }, "unknown parameter soc_version for 'ascope moe'; did you mean SOC_VERSION?" },
      { { "opjitter", "profiling_pth=x" }, "did you mean PROFILING_PATH?" },
    }
    for _, c in ipairs(cases) do
      local code, out, err = h.run(table.unpack(c[1]))
      assert.equal(2, code, table.concat(c[1], " "))
      assert.equal("", out)
      assert.truthy(err:find(c[2], 1, true), err)
      assert.equal(1, select(2, err:gsub("\n", "")), "one line: " .. err)
    end
    local _, _, err = h.run("frobnicate")
    assert.falsy(err:find("did you mean", 1, true))
    assert.is_nil(cli.suggest("zzzzzz", main.command_names()))
    assert.equal("plog", cli.suggest("plgo", main.command_names()))
  end)

  it("takes global options before the command as after it", function()
    mh.write_card(dir .. "/dumps/0", mh.card(0), {}, "mc2")
    mh.write_card(dir .. "/dumps/1", mh.card(1), {}, "mc2")
    local first = { h.run("--lang", "en", "-q", "moe", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950", "-o", dir .. "/a") }
    local last = { h.run("moe", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950", "-o", dir .. "/b", "--lang=en", "-q") }
    assert.equal(0, first[1])
    local at = dir:gsub("%p", "%%%0")
    assert.equal((first[2]:gsub(at .. "/a", "OUT")), (last[2]:gsub(at .. "/b", "OUT")))
    assert.truthy(first[2]:find("[INFO] 5. archive", 1, true))
    assert.falsy(first[2]:find("[\228-\233][\128-\191][\128-\191]"), "English throughout, no Chinese")
    local _, zh = h.run("--lang", "zh", "help")
    assert.truthy(zh:find("命令：", 1, true))
    local code, _, err = h.run("--lang", "fr", "help")
    assert.equal(2, code)
    assert.truthy(err:find("--lang takes one of zh, en", 1, true))
  end)

  it("stops before any work when the output path is a file", function()
    local file = dir .. "/taken"
    h.write(file, "keep me")
    local L0 = h.real .. "/msinsight_pytorch_text_level0"
    for _, case in ipairs({
      { file, "memory", L0, "-o", file }, { file .. "/sub", "timeline", L0, "-o", file .. "/sub" },
      { file, "opjitter", L0, "--output=" .. file }, { file, "memory", "--input-path", L0, "--output-path", file },
      { file, "diagnose", "PROFILING_PATH=" .. L0, "-o", file },
    }) do
      local code, out, err = h.run(table.unpack(case, 2))
      assert.equal(2, code, table.concat(case, " "))
      assert.equal("", out)
      assert.truthy(err:find("output folder " .. case[1], 1, true), err)
      assert.truthy(err:find(file .. " is a file, not a folder; nothing was read or written", 1, true), err)
      assert.equal(1, select(2, err:gsub("\n", "")), "one line, no stage line before it: " .. err)
    end
    assert.equal("keep me", h.read(file))
  end)

  it("stops before any work on an empty output folder or an empty --format, in the folder it runs in", function()
    -- an empty -o once wrote every output into the root folder ("/memory_events.csv")
    local L0 = h.real .. "/msinsight_pytorch_text_level0"
    local cases = {
      { "output folder is empty text", "memory", L0, "-o", "" },
      { "output folder is empty text", "timeline", L0, "--output=" },
      { "output folder is empty text", "diagnose", "PROFILING_PATH=" .. L0, "-o", "" },
      { "no output format given: --format takes one or more of csv, json", "memory", L0, "-o", dir .. "/o", "--format", " , " },
      { "no output format given", "timeline", L0, "-o", dir .. "/o", "--format=" },
    }
    for _, case in ipairs(cases) do
      local code, out, err = h.run(table.unpack(case, 2))
      assert.equal(2, code, table.concat(case, " "))
      assert.equal("", out)
      assert.truthy(err:find(case[1], 1, true), err)
    end
    assert.is_nil(fs.stat(dir .. "/o"))
  end)

  it("colours severities on a terminal only, and not with NO_COLOR", function()
    local input = h.real .. "/msinsight_legacy_2023_2024"
    h.write(dir .. "/g/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}, {"name": "MoeDistributeCombineV2_1"}]}')
    h.write(dir .. "/g/graph_1_device1.json", '{"op": [{"name": "MoeDistributeCombineV2_1"}, {"name": "MoeDistributeDispatchV2_1"}]}')
    local function on_terminal(env, ...)
      -- script(1) gives the command a pseudo-terminal and copies what it drew to our stdout
      local cmd = ("%s script -qec \"%s %s\" /dev/null"):format(env, h.bin, table.concat({ ... }, " "))
      local p = assert(io.popen(cmd))
      local drawn = p:read("a")
      p:close()
      return drawn
    end
    local warn = on_terminal("", "memory", input, "-o", dir .. "/m", "-q")
    assert.truthy(warn:find("\27[33m[WARNING]\27[0m trace_view.json is missing", 1, true), warn)
    local graph = on_terminal("", "graph", dir .. "/g", "-o", dir .. "/o")
    assert.truthy(graph:find("\27[1;31m[ERROR]\27[0m card 0 vs card 1", 1, true), graph)
    assert.truthy(graph:find("\27[36m[INFO]\27[0m graph files of 2 card(s)", 1, true), graph)
    local plain = on_terminal("NO_COLOR=1", "graph", dir .. "/g", "-o", dir .. "/o")
    assert.truthy(plain:find("[ERROR] card 0 vs card 1", 1, true))
    assert.falsy(plain:find("\27[", 1, true))
    local _, out, err = h.run("graph", dir .. "/g", "-o", dir .. "/o")
    assert.truthy(out:find("[ERROR] card 0 vs card 1", 1, true))
    assert.falsy((out .. err):find("\27", 1, true), "no escape codes into a pipe or file")
  end)

  it("writes out the control characters of names from the data, so they cannot act on the terminal", function()
    -- a role (profiler_metadata.json) with an escape sequence and a carriage return in it, and a
    -- missing trace, so that the role is on stdout and in a warning on stderr
    local rank = dir .. "/run/r/rank0_ascend_pt"
    local src = h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt"
    h.copy(src .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv", rank .. "/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    h.copy(src .. "/profiler_info_0.json", rank .. "/profiler_info_0.json")
    h.write(rank .. "/profiler_metadata.json", '{"role": "actor\\u001b[2J\\rfake\\tx"}')
    local code, out, err = h.run("memory", dir .. "/run", "-o", dir .. "/m")
    assert.equal(0, code, err)
    assert.falsy((out .. err):find("[\27\r]"), out .. err)
    assert.truthy(out:find("rank 0 (actor\\x1b[2J\\x0dfake\tx)", 1, true), out)
    assert.truthy(err:find("(actor\\x1b[2J\\x0dfake\tx)", 1, true), err)
    -- the files keep the role as it is
    assert.truthy(h.read(dir .. "/m/memory_events.csv"):find("actor\27[2J\rfake\tx", 1, true))
    -- and line ends stay line ends
    local log = require "ascope.log"
    assert.equal("a\nb\tc\nd\\x0d\\x00", log.visible("a\r\nb\tc\nd\r\0"))
  end)
end)
