-- --fail-on error|warning: exit 3 when a command's findings reach that severity; 0, 1 and 2 keep
-- their meaning.
local core = require "ascope_core"
local h = require "helper"

describe("--fail-on", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("graph: identical graphs pass, a divergence exits 3 only when asked", function()
    local same = '{"op": [{"name": "MoeDistributeDispatchV2_1"}, {"name": "MoeDistributeCombineV2_1"}]}'
    h.write(dir .. "/g/graph_1_device0.json", same)
    h.write(dir .. "/g/graph_1_device1.json", same)
    assert.equal(0, (h.run("--fail-on", "error", "graph", dir .. "/g", "-o", dir .. "/out", "-q")))
    h.write(dir .. "/g/graph_1_device1.json", '{"op": [{"name": "MoeDistributeCombineV2_1"}]}')
    assert.equal(0, (h.run("graph", dir .. "/g", "-o", dir .. "/out", "-q")))
    assert.equal(3, (h.run("graph", dir .. "/g", "-o", dir .. "/out", "-q", "--fail-on", "error")))
    assert.equal(3, (h.run("graph", dir .. "/g", "-o", dir .. "/out", "-q", "--fail-on=warning")))
  end)

  it("timeline: exit 3 exactly when the expert rules found a warning or an error", function()
    local input = h.real .. "/msinsight_pytorch_text_level0"
    local code = h.run("--fail-on", "warning", "timeline", input, "-o", dir .. "/out", "--format", "json", "-q")
    local m = core.json.load(dir .. "/out/timeline_metrics.json")
    local worst = 0
    for _, r in ipairs(m.ranks) do
      for _, f in ipairs(r.findings) do
        if f.severity == "error" or f.severity == "warning" then worst = 3 end
      end
    end
    assert.equal(worst, code)
    assert.equal(0, (h.run("timeline", input, "-o", dir .. "/out", "--format", "json", "-q")))
  end)

  it("a bad level or a missing one is a usage error (exit 2)", function()
    local code, _, err = h.run("--fail-on", "info", "graph", dir, "-o", dir .. "/out")
    assert.equal(2, code)
    assert.truthy(err:find("--fail-on takes one of error, warning, not \"info\"", 1, true))
    assert.equal(2, (h.run("graph", dir, "--fail-on")))
  end)
end)
