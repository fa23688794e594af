local h = require "helper"
local mh = require "moe_helper"

describe("diagnose", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("runs moe, opjitter, plog and graph in order with one summary, most severe first", function()
    mh.write_card(dir .. "/dumps/0", mh.card(0, { missing = { combine = { [1] = { 0 } } } }), {}, "mc2")
    mh.write_card(dir .. "/dumps/1", mh.card(1), {}, "mc2")
    h.write(dir .. "/logs/device-0/plog-1.log",
      "[ERROR] GE(1,python):2024-06-01-10:00:00.000.000 [ge.cc:1]2 E19999: Inner Error!\n")
    h.write(dir .. "/graphs/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}, {"name": "MoeDistributeCombineV2_1"}]}')
    h.write(dir .. "/graphs/graph_1_device1.json", '{"op": [{"name": "MoeDistributeCombineV2_1"}, {"name": "MoeDistributeDispatchV2_1"}]}')
    local code, out = h.run("--lang", "en", "diagnose", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950",
      "PROFILING_PATH=" .. h.real .. "/msinsight_pytorch_text_level0", "PLOG_PATH=" .. dir .. "/logs",
      "GRAPH_PATH=" .. dir .. "/graphs", "-o", dir .. "/out")
    assert.equal(0, code)
    local order = {}
    for name in out:gmatch("%[INFO%] ======== (%a+) ========") do order[#order + 1] = name end
    assert.same({ "moe", "opjitter", "plog", "graph" }, order)
    local summary = out:match("summary: %d+ anomal%a+ ========\n(.*)$")
    local lines = {}
    for l in summary:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal("[ERROR] (moe 4) 4.2 card 0: 1 combine core(s) did not receive all their status slots: [1]", lines[1])
    assert.equal("[ERROR] (graph) card 0 vs card 1: same nodes in another order from index 0", lines[2])
    assert.equal("[WARNING] (plog ge_error) GE error (E1xxxx, E19999 inner error): 1 line(s)", lines[3])
    for _, f in ipairs({ "moe_summary.json", "win_data.csv", "profiling_all_data.csv", "error_plog.csv",
                         "graph_summary.json", "moe_report.html", "opjitter_report.html", "diagnose_report.html" }) do
      assert.truthy(require("ascope_core").fs.stat(dir .. "/out/" .. f), f)
    end
  end)

  it("exits 1 when an input cannot be read, after running the others", function()
    h.write(dir .. "/graphs/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}]}')
    local code, out = h.run("diagnose", "PLOG_PATH=" .. dir .. "/nowhere", "GRAPH_PATH=" .. dir .. "/graphs", "-o",
      dir .. "/out")
    assert.equal(1, code)
    assert.truthy(out:find("[ERROR] " .. dir .. "/nowhere: no such file or folder", 1, true))
    assert.truthy(out:find("======== graph ========", 1, true))
    local code2, _, err2 = h.run("diagnose", "-o", dir .. "/out")
    assert.equal(2, code2)
    assert.truthy(err2:find("needs at least one of", 1, true))
  end)
end)
