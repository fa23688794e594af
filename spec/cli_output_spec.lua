-- One output style for every command: --json prints one document that parses back and holds
-- the same summary as the command's summary file; summaries and findings on stdout, problems
-- with the input and the step-by-step lines on stderr; the language from LANG unless --lang;
-- every output file byte-identical when the same input is analysed twice.
local core = require "ascope_core"
local h = require "helper"
local mh = require "moe_helper"

local REAL = h.real .. "/msinsight_pytorch_text_level0"

local function plog_tree(dir)
  local function line(level, time, msg)
    return ("[%s] RUNTIME(3975660,python):2024-06-01-10:%s.123.456 [device_error_proc.cc:816]3977663 %s"):format(level,
      time, msg)
  end
  h.write(dir .. "/device-0/plog-1_20240601100000.log", line("ERROR", "00:02", "errcode:(0x800000, 0, 0) device_id=0, "
    .. "stream_id=5, task_id=12, fault kernel_name=MoeDistributeDispatchV2_a1_mix_aiv, more") .. "\n")
  h.write(dir .. "/device-1/plog-2_20240601100000.log", line("ERROR", "00:03", "errcode:(0x800000, 0, 0) device_id=1, "
    .. "stream_id=7, task_id=99, fault kernel_name=MatMulV2_77_mix_aic, more") .. "\n")
end

local function atc(path, names)
  local ops = {}
  for i, n in ipairs(names) do ops[i] = ('{"name": "%s", "type": "X"}'):format(n) end
  h.write(path, '{"graph": [{"name": "g", "op": [' .. table.concat(ops, ", ") .. "]}]}")
end

local D, C = "MoeDistributeDispatchV2_1", "MoeDistributeCombineV2_1"

-- every command with an input in dir: name, arguments before -o, its summary file
local function commands(dir)
  mh.write_cluster(dir .. "/dumps", (mh.cluster({ state = "dispatch_stuck", cards = 4, fault = 2 })), "mc2")
  plog_tree(dir .. "/logs")
  atc(dir .. "/graphs/graph_1_device0.json", { D, C })
  atc(dir .. "/graphs/graph_1_device1.json", { C, D })
  return {
    { "memory", { "memory", REAL }, "memory_summary.json" },
    { "timeline", { "timeline", REAL }, "timeline_metrics.json" },
    { "opjitter", { "opjitter", REAL }, "opjitter_summary.json" },
    { "moe", { "moe", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950" }, "moe_summary.json" },
    { "plog", { "plog", dir .. "/logs" }, "plog_summary.json" },
    { "graph", { "graph", dir .. "/graphs" }, "graph_summary.json" },
    { "diagnose", { "diagnose", "PLOG_PATH=" .. dir .. "/logs", "GRAPH_PATH=" .. dir .. "/graphs" }, "diagnose_summary.json" },
  }
end

local function run(env, args, ...)
  local all = {}
  for _, a in ipairs(args) do all[#all + 1] = a end
  for i = 1, select("#", ...) do all[#all + 1] = select(i, ...) end
  if env then return h.run(env, table.unpack(all)) end
  return h.run(table.unpack(all))
end

describe("every command", function()
  local dir
  setup(function() dir = h.tmpdir() end)
  teardown(function() h.cleanup(dir) end)

  it("prints one JSON document with --json: the summary file's data and the findings", function()
    for _, c in ipairs(commands(dir)) do
      local out = dir .. "/json-" .. c[1]
      local code, stdout, stderr = run(nil, c[2], "-o", out, "--json", "-q")
      local doc = core.json.decode(stdout)
      assert.is_table(doc, c[1] .. ": " .. stdout .. stderr)
      assert.equal(c[1], doc.command)
      assert.equal(require "ascope.version", doc.version)
      assert.equal(code, doc.exit_code)
      assert.equal(out, doc.output)
      assert.same(core.json.load(out .. "/" .. c[3]), doc.summary, c[1])
      assert.is_table(doc.findings)
      for _, f in ipairs(doc.findings) do assert.truthy(({ ERROR = 1, WARNING = 1, INFO = 1, DETAIL = 1 })[f.severity], c[1]) end
    end
  end)

  it("puts the same findings in the JSON document as the text summary shows", function()
    local cs = commands(dir)
    -- moe: the four cards' ERROR and WARNING findings and the verdict
    local _, json = run(nil, cs[4][2], "-o", dir .. "/m1", "--json", "-q")
    local _, text = run(nil, cs[4][2], "-o", dir .. "/m2", "-q", "--lang", "en")
    local errors = 0
    for _, f in ipairs(core.json.decode(json).findings) do
      if f.severity == "ERROR" then
        errors = errors + 1
        assert.truthy(text:find("[ERROR] " .. f.message, 1, true), f.message)
      end
    end
    assert.equal(4, errors) -- 3.2 on cards 0, 1, 3 and the root card 2
    -- graph: the order divergence of card 1, and that two cards give no majority to judge by
    local _, gj = run(nil, cs[6][2], "-o", dir .. "/g1", "--json")
    local g = core.json.decode(gj)
    local sev = {}
    for _, f in ipairs(g.findings) do sev[#sev + 1] = f.severity end
    table.sort(sev)
    assert.same({ "ERROR", "WARNING" }, sev)
    assert.equal("order", g.summary.pairs[1].verdict)
    assert.equal(1, g.summary.reference.tie) -- the other groups as large as the reference's
    -- timeline: the rules that fired, each with its rank
    local _, tj = run(nil, cs[2][2], "-o", dir .. "/t1", "--json", "-q")
    local tdoc = core.json.decode(tj)
    local fired = 0
    for _, r in ipairs(core.json.load(dir .. "/t1/timeline_metrics.json").ranks) do fired = fired + #r.findings end
    assert.equal(fired, #tdoc.findings)
    assert.truthy(fired > 0)
    for _, f in ipairs(tdoc.findings) do assert.truthy(f.rank == 0 or f.rank == 1) end
  end)

  it("prints a JSON document when the run stops on an error, and for version", function()
    local code, out, err = h.run("memory", dir .. "/nowhere", "-o", dir .. "/x", "--json")
    assert.equal(1, code)
    local doc = core.json.decode(out)
    assert.same({ command = "memory", version = require "ascope.version", exit_code = 1,
                  error = dir .. "/nowhere: no such file or folder" }, doc)
    assert.truthy(err:find("no such file or folder", 1, true))
    local vcode, vout = h.run("--json", "version")
    assert.equal(0, vcode)
    assert.equal(require "ascope.version", core.json.decode(vout).summary.ascope)
    -- help is for people: the same text with or without --json
    local _, plain = h.run("help", "memory")
    local _, with = h.run("--json", "help", "memory")
    assert.equal(plain, with)
    assert.truthy(plain:find("memory_summary.json", 1, true))
  end)

  it("keeps stdout for summaries and findings, stderr for problems with the input and progress", function()
    local cs = commands(dir)
    -- a graph file whose card cannot be told: its error on stderr only; the finding on stdout only
    h.write(dir .. "/graphs/dynamo_original_graph_1.txt", 'node { name: "' .. D .. '" }\n')
    local code, out, err = h.run("--lang", "en", "graph", dir .. "/graphs", "-o", dir .. "/g")
    assert.equal(1, code)
    assert.truthy(out:find("[ERROR] card 0 vs card 1: same nodes in another order", 1, true))
    assert.falsy(err:find("card 0 vs card 1", 1, true))
    assert.truthy(err:find("[ERROR] " .. dir .. "/graphs/dynamo_original_graph_1.txt: cannot tell the card", 1, true), err)
    assert.falsy(out:find("dynamo_original_graph_1.txt", 1, true))
    os.remove(dir .. "/graphs/dynamo_original_graph_1.txt")
    -- an opjitter file that cannot be read
    h.write(dir .. "/prof/1/kernel_details.csv", "\"Name\",\"Type\n")
    h.copy(REAL .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", dir .. "/prof/0/kernel_details.csv")
    local ocode, oout, oerr = h.run("--lang", "en", "opjitter", dir .. "/prof", "-o", dir .. "/o")
    assert.equal(1, ocode)
    assert.truthy(oerr:find("[ERROR] " .. dir .. "/prof/1/kernel_details.csv", 1, true), oerr)
    assert.falsy(oout:find(dir .. "/prof/1/kernel_details.csv", 1, true))
    assert.truthy(oout:find("[INFO] card 0: " .. dir .. "/prof/0/kernel_details.csv", 1, true))
    -- moe: the card-by-card steps on stderr, the findings and the verdict on stdout; -q keeps stdout
    local _, mout, merr = run(nil, cs[4][2], "-o", dir .. "/m", "--lang", "en")
    assert.truthy(merr:find("[INFO] 3.1 dispatch run position per core", 1, true))
    assert.falsy(mout:find("3.1 dispatch run position", 1, true))
    assert.truthy(mout:find("[ERROR] 8. card 2 started the hang", 1, true))
    local _, qout, qerr = run(nil, cs[4][2], "-o", dir .. "/m", "--lang", "en", "-q")
    assert.equal(mout, qout)
    assert.equal("", qerr)
    -- memory and timeline: the summary on stdout, nothing on stderr with -q for a healthy input
    for _, c in ipairs({ cs[1], cs[2] }) do
      local _, sout, serr = run(nil, c[2], "-o", dir .. "/s-" .. c[1], "-q", "--lang", "en")
      assert.truthy(sout:find("results", 1, true), c[1])
      assert.equal("", serr, c[1])
    end
  end)

  it("speaks the language of LANG, and --lang wins over it", function()
    local cs = commands(dir)
    -- a line of each command's summary in both languages
    local said = {
      memory = { "memory: 2 rank(s)", "内存分析：2 个 rank" },
      timeline = { "timeline: 2 rank(s)", "timeline：2 个 rank" },
      opjitter = { "opjitter: results in", "opjitter：结果位于" },
      moe = { "[ERROR] 8. card 2 started the hang", "[ERROR] 8. 卡2是卡住的起点" },
      plog = { "plog: results in", "plog：结果位于" },
      graph = { "[INFO] 1 of 1 card pair(s) differ", "[INFO] 1/1 组卡对比存在差异" },
      diagnose = { "[INFO] ======== ", "[INFO] ======== " },
    }
    for _, c in ipairs(cs) do
      local en, zh = said[c[1]][1], said[c[1]][2]
      local _, zout = run({ LANG = "zh_CN.UTF-8", LC_ALL = false }, c[2], "-o", dir .. "/l-" .. c[1], "-q")
      assert.truthy(zout:find(zh, 1, true), c[1] .. " under LANG=zh_CN.UTF-8: " .. zout)
      local _, eout = run({ LANG = "en_US.UTF-8", LC_ALL = false }, c[2], "-o", dir .. "/l-" .. c[1], "-q")
      assert.truthy(eout:find(en, 1, true), c[1] .. " under LANG=en_US.UTF-8: " .. eout)
      local _, cout = run({ LANG = "C", LC_ALL = false }, c[2], "-o", dir .. "/l-" .. c[1], "-q")
      assert.truthy(cout:find(en, 1, true), c[1] .. " under LANG=C")
      local _, oout = run({ LANG = "zh_CN.UTF-8", LC_ALL = false }, c[2], "-o", dir .. "/l-" .. c[1], "-q", "--lang", "en")
      assert.truthy(oout:find(en, 1, true), c[1] .. " with --lang en under LANG=zh_CN")
      local _, lout = run({ LANG = "en_US.UTF-8", LC_ALL = "zh_CN.UTF-8" }, c[2], "-o", dir .. "/l-" .. c[1], "-q")
      assert.truthy(lout:find(zh, 1, true), c[1] .. ": LC_ALL wins over LANG")
    end
    -- diagnose's own summary line
    local _, dz = run({ LANG = "zh_CN.UTF-8", LC_ALL = false }, cs[7][2], "-o", dir .. "/dz", "-q")
    local _, de = run({ LANG = "en_US.UTF-8", LC_ALL = false }, cs[7][2], "-o", dir .. "/de", "-q")
    assert.truthy(dz:find(require("ascope.locale.zh")["diagnose.results"]:gsub("%%s.*", ""), 1, true), dz)
    assert.truthy(de:find(require("ascope.locale.en")["diagnose.results"]:gsub("%%s.*", ""), 1, true), de)
  end)

  it("writes every output file byte for byte the same for the same input", function()
    for _, c in ipairs(commands(dir)) do
      local a, b = dir .. "/same-a-" .. c[1], dir .. "/same-b-" .. c[1]
      run(nil, c[2], "-o", a, "-q")
      run(nil, c[2], "-o", b, "-q")
      local names = {}
      for _, e in ipairs(assert(core.fs.list(a))) do names[#names + 1] = type(e) == "table" and e.name or e end
      assert.truthy(#names > 0, c[1])
      for _, name in ipairs(names) do
        local pa = a .. "/" .. name
        local st = core.fs.stat(pa)
        if st and st.type ~= "dir" then
          assert.truthy(h.read(pa) == h.read(b .. "/" .. name), c[1] .. ": " .. name .. " differs between two runs")
        end
      end
    end
  end)
end)
