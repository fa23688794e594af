local core = require "ascope_core"
local h = require "helper"
local mh = require "moe_helper"

local function plog_line(time, msg)
  return ("[ERROR] RUNTIME(1,python):2024-06-01-10:00:%s.000.000 [rt.cc:1]2 %s"):format(time, msg)
end

-- The lines after the summary header, without the results line.
local function summary_lines(out)
  local summary = assert(out:match("summary: %d+ finding%(s%) ========\n(.*)$"), out)
  local lines = {}
  for l in summary:gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines
end

describe("diagnose", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("a healthy cluster: no ERROR or WARNING, an empty verdict, exit 0 even with --fail-on warning", function()
    mh.write_cluster(dir .. "/dumps", mh.cluster({ state = "healthy" }), "mc2")
    for card = 0, 1 do
      h.write(("%s/graphs/graph_1_device%d.json"):format(dir, card),
        '{"op": [{"name": "MoeDistributeDispatchV2_1"}, {"name": "MoeDistributeCombineV2_1"}]}')
    end
    local code, out = h.run("--lang", "en", "--fail-on", "warning", "diagnose", "TARGET_DIR=" .. dir .. "/dumps",
      "SOC_VERSION=950", "GRAPH_PATH=" .. dir .. "/graphs", "-o", dir .. "/out")
    assert.equal(0, code, out)
    assert.falsy(out:find("[WARNING]", 1, true))
    assert.falsy(out:find("[ERROR]", 1, true))
    assert.truthy(out:find("[INFO] ======== summary: 0 finding(s) ========", 1, true))
    assert.truthy(out:find("[INFO] verdict: no card is waiting for another; no root card", 1, true))
    local s = core.json.load(dir .. "/out/diagnose_summary.json")
    assert.equal(0, #s.anomalies)
    assert.equal(0, #s.verdict.root_cards)
    assert.equal(0, #s.verdict.wait_for)
    assert.same({ { card = 0, side = "combine", waiting_cores = 0 }, { card = 1, side = "combine", waiting_cores = 0 } },
      s.verdict.stuck)
  end)

  it("combine stuck: the verdict names the root card, its plog failure and the graph finding about it", function()
    local cards = mh.cluster({ state = "combine_stuck", fault = 0 })
    mh.write_cluster(dir .. "/dumps", cards, "mc2")
    h.write(dir .. "/logs/device-0/plog-1.log", plog_line("05", "Aicore kernel execute failed, device_id=0, stream_id=4, "
      .. "task_id=7, fault kernel_name=MoeDistributeCombineV2_ab_mix_aiv") .. "\n")
    h.write(dir .. "/logs/device-1/plog-1.log", plog_line("35", "[EI0002] notify wait timeout device_id=1") .. "\n")
    h.write(dir .. "/graphs/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}, {"name": "MoeDistributeCombineV2_1"}]}')
    h.write(dir .. "/graphs/graph_1_device1.json", '{"op": [{"name": "MoeDistributeCombineV2_1"}, {"name": "MoeDistributeDispatchV2_1"}]}')
    local args = { "--lang", "en", "diagnose", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950",
                   "PLOG_PATH=" .. dir .. "/logs", "GRAPH_PATH=" .. dir .. "/graphs", "-o", dir .. "/out" }
    local code, out = h.run(table.unpack(args))
    assert.equal(0, code, out)
    local order = {}
    for name in out:gmatch("%[INFO%] ======== (%a+) ========") do order[#order + 1] = name end
    assert.same({ "moe", "plog", "graph" }, order)
    local lines = summary_lines(out)
    -- most severe first, each with the analysis it came from; the root ordered by the first plog error
    assert.equal("[ERROR] (moe 4) 4.2 card 1: 6 waiting combine core(s) did not receive all their status slots: [0,1,2,3,4,5]",
      lines[1])
    assert.equal("[ERROR] (graph) card 0 vs card 1: same nodes in another order from index 0", lines[2])
    assert.equal("[ERROR] (moe 8) 8. card 0 started the hang: other cards wait for it and it waits for nobody; first to fail "
      .. "(2024-06-01-10:00:05.000.000, first plog error)", lines[3])
    assert.equal("[WARNING] (moe 2) 2. card 1: stuck in combine: 6 core(s) waiting", lines[4])
    assert.truthy(out:find("[ERROR] root card 0 (first to fail: 2024-06-01-10:00:05.000.000, first plog error)", 1, true))
    assert.truthy(out:find("  also pointing at card 0: (graph) card 0 vs card 1", 1, true))
    local s = core.json.load(dir .. "/out/diagnose_summary.json")
    assert.same({ 0 }, s.verdict.root_cards)
    assert.equal("plog", s.verdict.first_fail_from)
    assert.same({ card = 1, side = "combine", waits_for = { 0 }, cores = { 0, 1, 2, 3, 4, 5 }, slots = 12,
                  unresolved_slots = 0 }, s.verdict.wait_for[1])
    assert.same({ card = 0, side = "combine", waiting_cores = 0 }, s.verdict.stuck[1])
    assert.same({ card = 1, side = "combine", waiting_cores = 6 }, s.verdict.stuck[2])
    assert.same({ card = 0, kernel_name = "MoeDistributeCombineV2_ab_mix_aiv", stream_id = "4", task_id = "7",
                  time = "2024-06-01-10:00:05.000.000" }, s.verdict.plog_failures[1])
    assert.equal("graph", s.verdict.related[1].source)
    assert.equal(0, s.verdict.related[1].card)
    local first = s.anomalies[1]
    assert.same({ source = "moe 4", severity = "ERROR", card = 1, analysis = "4",
                  message = "4.2 card 1: 6 waiting combine core(s) did not receive all their status slots: [0,1,2,3,4,5]" },
      first)
    for _, f in ipairs({ "moe_summary.json", "win_data.csv", "error_plog.csv", "graph_summary.json", "moe_report.html",
                         "diagnose_report.html", "diagnose_summary.json" }) do
      assert.truthy(core.fs.stat(dir .. "/out/" .. f), f)
    end
    local page = h.read(dir .. "/out/diagnose_report.html")
    assert.truthy(page:find("<title>card 1 (combine) waits for card 0</title>", 1, true))
    -- a CI gate: --fail-on error exits 3 on these findings
    table.insert(args, 1, "--fail-on=error")
    assert.equal(3, (h.run(table.unpack(args))))
  end)

  it("two cards that sent nothing: the dump times order them in moe, the first plog errors in diagnose", function()
    local cards, truth = mh.cluster({ state = "dispatch_stuck", cards = 4, fault = { 1, 3 } })
    mh.write_cluster(dir .. "/dumps", cards, "mc2")
    assert.same({ 1, 3 }, truth.roots) -- card 1 dumped first
    local code = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950", "-o", dir .. "/moe", "-q")
    assert.equal(0, code)
    local m = core.json.load(dir .. "/moe/moe_summary.json")
    assert.same({ 1, 3 }, m.root_cards)
    local roots = {}
    for _, a in ipairs(m.anomalies) do if a.analysis == "8" then roots[#roots + 1] = a.severity .. " " .. a.card end end
    assert.same({ "ERROR 1", "WARNING 3" }, roots) -- the first to fail started it; the other is a candidate
    local waits = {}
    for _, e in ipairs(m.wait_for) do waits[e.card] = e.waits_for end
    assert.same({ [0] = { 1, 3 }, [2] = { 1, 3 } }, waits)
    -- but card 3 logged its first [ERROR] before card 1 did
    h.write(dir .. "/logs/device-1/plog-1.log", plog_line("20", "EZ9999 device_id=1") .. "\n")
    h.write(dir .. "/logs/device-3/plog-1.log", plog_line("10", "EZ9999 device_id=3") .. "\n")
    local code2, out = h.run("--lang", "en", "diagnose", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950",
      "PLOG_PATH=" .. dir .. "/logs", "-o", dir .. "/out")
    assert.equal(0, code2, out)
    local s = core.json.load(dir .. "/out/diagnose_summary.json")
    assert.same({ 3, 1 }, s.verdict.root_cards)
    assert.equal("2024-06-01-10:00:10.000.000", s.verdict.first_fail["3"])
    assert.truthy(out:find("[ERROR] (moe 8) 8. card 3 started the hang: other cards wait for it and it waits for nobody; "
      .. "first to fail (2024-06-01-10:00:10.000.000, first plog error)", 1, true))
    assert.truthy(out:find("[WARNING] (moe 8) 8. card 1 is also waited for and waits for nobody "
      .. "(2024-06-01-10:00:20.000.000, first plog error)", 1, true))
    -- the moe step said it by dump time as it ran; the summary and the verdict say it by plog
    assert.falsy(out:match("summary: %d+ finding.*$"):find("dump time", 1, true))
  end)

  it("orders root cards by plog times only where the logs' device numbers can be the cards' ranks", function()
    local cards = mh.cluster({ state = "dispatch_stuck", cards = 4, fault = { 1, 3 } }) -- card 1 dumped first
    mh.write_cluster(dir .. "/dumps", cards, "mc2")
    local function diagnose(logs)
      h.cleanup(dir .. "/logs")
      for path, time in pairs(logs) do
        h.write(dir .. "/logs/" .. path, plog_line(time, "EZ9999 vector error") .. "\n")
      end
      local code, out = h.run("--lang", "en", "diagnose", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950",
        "PLOG_PATH=" .. dir .. "/logs", "-o", dir .. "/out")
      assert.equal(0, code, out)
      return core.json.load(dir .. "/out/diagnose_summary.json"), out
    end
    local function warnings(s)
      local out = {}
      for _, a in ipairs(s.anomalies) do if a.source == "diagnose" then out[#out + 1] = a.severity .. " " .. a.message end end
      return out
    end
    -- one node's debug and run logs: device 3 failed first, the plog times order the roots
    local s = diagnose({ ["n0/log/debug/device-1/device-9_1.log"] = "20", ["n0/log/run/device-3/device-9_2.log"] = "10",
                         ["n0/log/debug/device-3/device-9_3.log"] = "30" })
    assert.equal("plog", s.verdict.first_fail_from)
    assert.same({ 3, 1 }, s.verdict.root_cards)
    assert.same({}, warnings(s))
    -- two nodes both have a device 3: node 1's device 3 (the earliest error) is not rank 3, the dump
    -- times order the roots
    local out
    s, out = diagnose({ ["n0/log/debug/device-1/device-9_1.log"] = "10", ["n0/log/debug/device-3/device-9_2.log"] = "20",
                        ["n1/log/debug/device-3/device-9_3.log"] = "05" })
    assert.equal("dump", s.verdict.first_fail_from)
    assert.same({ 1, 3 }, s.verdict.root_cards)
    local clash = "WARNING root cards ordered by dump time, not by the first plog errors: device 3 is in the logs under "
      .. dir .. "/logs/n0/log/ and under " .. dir .. "/logs/n1/log/"
    assert.equal(clash, warnings(s)[1]:sub(1, #clash))
    assert.truthy(out:find("[WARNING] (diagnose) " .. clash:sub(9), 1, true))
    assert.truthy(out:find("[ERROR] root card 1 (first to fail: ", 1, true))
    -- the second root is a candidate, a WARNING, as in the anomaly list
    assert.truthy(out:find("[WARNING] root card 3 (first to fail: ", 1, true), out)
    assert.falsy(out:find("[ERROR] root card 3", 1, true), out)
    assert.truthy(out:find("dump time)", 1, true))
    -- a root card with no [ERROR] line under its number: the dump times, and why
    s = diagnose({ ["device-3/plog-1.log"] = "10" })
    assert.equal("dump", s.verdict.first_fail_from)
    assert.same({ 1, 3 }, s.verdict.root_cards)
    assert.same({ "WARNING root cards ordered by dump time, not by the first plog errors: root card(s) 1 have no plog "
      .. "[ERROR] line under their number (plog numbers cards by device, moe by rank)" }, warnings(s))
  end)

  it("runs opjitter on the profiling data with the others", function()
    h.write(dir .. "/graphs/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}]}')
    local code, out = h.run("--lang", "en", "diagnose", "PROFILING_PATH=" .. h.real .. "/msinsight_pytorch_text_level0",
      "GRAPH_PATH=" .. dir .. "/graphs", "-o", dir .. "/out")
    assert.equal(0, code, out)
    local order = {}
    for name in out:gmatch("%[INFO%] ======== (%a+) ========") do order[#order + 1] = name end
    assert.same({ "opjitter", "graph" }, order)
    for _, f in ipairs({ "profiling_all_data.csv", "opjitter_report.html", "diagnose_report.html" }) do
      assert.truthy(core.fs.stat(dir .. "/out/" .. f), f)
    end
  end)

  it("exits 1 when an input cannot be read, after running the others", function()
    h.write(dir .. "/graphs/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}]}')
    local code, out, err = h.run("diagnose", "PLOG_PATH=" .. dir .. "/nowhere", "GRAPH_PATH=" .. dir .. "/graphs", "-o",
      dir .. "/out")
    assert.equal(1, code)
    assert.truthy(err:find("[ERROR] " .. dir .. "/nowhere: no such file or folder", 1, true))
    assert.truthy(out:find("======== graph ========", 1, true))
    local code2, _, err2 = h.run("diagnose", "-o", dir .. "/out")
    assert.equal(2, code2)
    assert.truthy(err2:find("needs at least one of", 1, true))
  end)
end)
