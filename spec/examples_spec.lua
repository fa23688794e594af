local h = require "helper"

describe("examples", function()
  it("top_allocators.lua runs under `ascope run` on the bundled data", function()
    local code, out = h.run("run", "examples/top_allocators.lua", "examples/data/msinsight_pytorch_text_level0", "2")
    assert.equal(0, code)
    -- largest row of rank 0's operator_memory.csv: aten::mm, 147456 KB (checked with Python)
    assert.truthy(out:find("largest: 144.0 MB by aten::mm at 1736405443909.93347 ms", 1, true))
    assert.truthy(out:find("sgd.py(293): _multi_tensor_sgd", 1, true))
  end)

  it("embed.lua measures the device stream lanes", function()
    local trace = "examples/data/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    local code, out = h.run("run", "examples/embed.lua", trace)
    assert.equal(0, code)
    -- tasks per stream and busy union in ms, computed independently with Python
    assert.truthy(out:find("Stream 2%s+219 tasks%s+busy%s+82%.155 ms"))
    assert.truthy(out:find("Stream 4%s+308 tasks%s+busy%s+85%.612 ms"))
  end)

  it("memory_layout.lua reorders and retitles the HTML report", function()
    local dir = h.tmpdir()
    local code = h.run("memory", "examples/data/rl-insight/memory_data", "--layout", "examples/memory_layout.lua", "-o", dir,
      "-q", "--format", "html")
    local page = h.read(dir .. "/memory_report.html")
    h.cleanup(dir)
    assert.equal(0, code)
    local a, b = page:find("Memory never given back", 1, true), page:find("<h2>Ranks</h2>", 1, true)
    assert.truthy(a and b and a < b)
    assert.falsy(page:find("Live at the peak", 1, true))
  end)

  it("memory_rules.lua changes the defaults without rebuilding", function()
    local dir = h.tmpdir()
    local code, out = h.run("memory", "examples/data/rl-insight/memory_data", "--rules", "examples/memory_rules.lua",
      "-o", dir, "-q")
    h.cleanup(dir)
    assert.equal(0, code)
    assert.truthy(out:find("(within-or-latest)", 1, true))
  end)
end)
