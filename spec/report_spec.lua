local h = require "helper"
local memory = require "ascope.memory"
local timeline = require "ascope.timeline"
local memory_html = require "ascope.report.memory_html"
local timeline_html = require "ascope.report.timeline_html"
local layout = require "ascope.report.layout"
local svg = require "ascope.report.svg"

local function count(text, pat)
  local n = 0
  for _ in text:gmatch(pat) do n = n + 1 end
  return n
end

local function no_network(page)
  assert.falsy(page:find("https?://"), "an URL in the page")
  assert.falsy(page:find("<script", 1, true))
  assert.falsy(page:find("<link", 1, true))
  assert.falsy(page:find("@import", 1, true))
  assert.falsy(page:find("src=", 1, true))
end

describe("HTML reports", function()
  it("memory: every section, chart axes with units, numbers from the results, nothing from a network", function()
    local res = assert(memory.parse(h.real .. "/msinsight_pytorch_text_level0", { jobs = 1 }))
    local page = memory_html.render(res, assert(layout.load("memory")))
    no_network(page)
    -- per rank: memory over time and live at peak per pool (PTA, GE), process memory and top
    -- sites (charts); peaks side by side (chart)
    assert.equal(2 * (2 + 2 + 1 + 1) + 1, count(page, "<svg "))
    for _, id in ipairs({ "overview", "peaks", "over_time%-msinsight_pytorch_text_level0%-0", "live%-msinsight_pytorch_text_level0%-1",
                          "sites%-msinsight_pytorch_text_level0%-0", "leaks%-msinsight_pytorch_text_level0%-1" }) do
      assert.truthy(page:find('<section id="' .. id .. '"'), id)
    end
    assert.truthy(page:find("time since the first event (ms)", 1, true))
    assert.truthy(page:find("memory (MB)", 1, true))
    assert.truthy(page:find(">peak 1188.0 MB<", 1, true))
    assert.truthy(page:find(">peak 73.1 MB<", 1, true))
    assert.truthy(page:find("Peak 1188.0 MB at 1736405443921.18428 ms", 1, true))
    assert.truthy(page:find("Time 0 is the rank&#39;s first event, 1736405443756.3841 ms", 1, true))
    -- the overview table holds the summary's numbers
    local r0 = res.ranks[1].summary
    assert.truthy(page:find(('<td class="num">%d</td><td class="num">%d</td>'):format(r0.events, r0.allocations), 1, true))
    assert.truthy(page:find("<td>41.3%</td>", 1, true))
    assert.truthy(page:find('<td class="num">1187.981</td>', 1, true))
    -- the live-at-peak bars carry the sizes as tooltips
    local top = r0.components[1].live_at_peak.sites[1]
    assert.truthy(page:find(("%s: %.2f MB"):format(svg.escape(top.call_site), top.size_kb / 1024), 1, true))
  end)

  it("a layout file reorders, retitles and drops sections", function()
    local dir = h.tmpdir()
    h.write(dir .. "/l.lua", [[return { order = { "sites", "overview" },
      sections = { { id = "sites", title = { en = "Who allocates", zh = "谁申请" }, top = 3 } } }]])
    local res = assert(memory.parse(h.real .. "/rl-insight/memory_data", { jobs = 1 }))
    local page = memory_html.render(res, assert(layout.load("memory", dir .. "/l.lua")))
    local a, b = page:find("Who allocates", 1, true), page:find("<h2>Ranks</h2>", 1, true)
    assert.truthy(a and b and a < b)
    assert.falsy(page:find("Memory over time", 1, true))
    assert.equal(1, count(page, "<svg "))
    h.write(dir .. "/bad.lua", [[return { order = { "nope" } }]])
    local none, err = layout.load("memory", dir .. "/bad.lua")
    assert.is_nil(none)
    assert.truthy(err:find('order names section "nope"', 1, true))
    local code = h.run("memory", h.real .. "/rl-insight/memory_data", "-o", dir .. "/out", "-q", "--format", "html",
      "--layout", dir .. "/l.lua")
    assert.equal(0, code)
    assert.truthy(h.read(dir .. "/out/memory_report.html"):find("Who allocates", 1, true))
    h.cleanup(dir)
  end)

  it("timeline: swimlanes, idle bars, overlap, critical path, steps, dashboard", function()
    local res = assert(timeline.run(h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt", { jobs = 1 }))
    local page = timeline_html.render(res, assert(layout.load("timeline")))
    no_network(page)
    local r = res.ranks[1]
    -- swimlanes, idle, overlap, critical path; one step: no step times, no communication per step
    assert.equal(4, count(page, "<svg "))
    assert.falsy(page:find("step CV", 1, true))
    assert.truthy(page:find("time since the step start (ms)", 1, true))
    assert.truthy(page:find(("host-only %.3f ms before the %.3f ms stage"):format(r.step.preparing_ms, r.step.stage_ms), 1, true))
    assert.truthy(page:find("idle ratio (%)", 1, true))
    assert.truthy(page:find(("<td>%s</td><td>%.4f</td>"):format("overlap_ratio", r.dashboard.overlap_ratio), 1, true))
    assert.truthy(page:find("⚠ overlap_low", 1, true))
    assert.truthy(page:find(("Ascend Hardware/Stream 3: %.2f %%"):format(r.lanes[1].idle_ratio * 100), 1, true))
    assert.falsy(page:find("pp_bubble_ratio</td>", 1, true)) -- not measured, not shown
  end)

  it("downsamples long series to the min and max of each pixel column", function()
    local xs, ys = {}, {}
    for i = 1, 100000 do
      xs[i] = i
      ys[i] = (i % 1000 == 0) and 50 or (i % 7)
    end
    local ox, oy = svg.downsample(xs, ys, 1, 100000, 500)
    assert.truthy(#ox <= 1000)
    local peaks = 0
    for _, y in ipairs(oy) do if y == 50 then peaks = peaks + 1 end end
    assert.equal(100, peaks) -- every spike survives
  end)
end)

describe("HTML reports of the field diagnostics", function()
  local field_html = require "ascope.report.field_html"
  local html = require "ascope.report.html"

  it("opjitter: a heat map of jitter, durations per card, the aiv table", function()
    local res = assert(require("ascope.opjitter").run(h.real .. "/msinsight_pytorch_text_level0"))
    local page = html.page("t", field_html.opjitter_sections(res))
    no_network(page)
    assert.equal(1 + 3, count(page, "<svg "))
    assert.truthy(page:find("call index (0 = first call); colour: jitter = max - min over cards (us), max 6.6", 1, true))
    -- the worst operator's first call, card 0, as a tooltip of its cell
    local worst
    for _, a in ipairs(res.avg) do if not worst or (a.avg_jitter or -1) > (worst.avg_jitter or -1) then worst = a end end
    local at = assert(page:find(('<section id="durations-%s">'):format(svg.escape(worst.type)), 1, true))
    local section = page:sub(at, page:find("</section>", at, true))
    -- one line per card, a point per call of that type (2 calls on each of the 2 cards)
    local lines = {}
    for pts, name in section:gmatch('points="([^"]*)"><title>([^<]*)</title>') do
      local n = 0
      for _ in pts:gmatch("%S+") do n = n + 1 end
      lines[#lines + 1] = name .. ": " .. n
    end
    assert.same({ "card 0: " .. worst.calls, "card 1: " .. worst.calls }, lines)
    assert.equal(2, worst.calls)
  end)

  it("moe: the wait-for graph, a card x core grid per side and the run counts", function()
    local mh = require "moe_helper"
    local dir = h.tmpdir()
    local cards, truth = mh.cluster({ state = "combine_stuck", fault = 0 })
    mh.write_cluster(dir, cards, "mc2")
    local code, out, err = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950", "-o", dir .. "/out",
      "--format", "html")
    assert.equal(0, code, out:sub(-2000) .. err)
    local page = h.read(dir .. "/out/moe_report.html")
    no_network(page)
    assert.equal(5, count(page, "<svg "))
    assert.truthy(page:find("<title>card 1 (combine) waits for card 0</title>", 1, true))
    assert.truthy(page:find("root cards, first to fail first: 0", 1, true))
    -- card 1 core 0 misses the slots the generator left empty; card 0 is not waiting: nothing missing
    assert.truthy(page:find(("<title>card 1, core 0: %d slots</title>"):format(#cards[1].missing.combine[0]), 1, true))
    assert.truthy(page:find("<title>card 0, core 0: 0 slots</title>", 1, true))
    assert.equal(6, #truth.waits[1].cores)
    assert.truthy(page:find("did not receive all their status slots: [0,1,2,3,4,5]", 1, true))
    assert.falsy(require("ascope_core").fs.stat(dir .. "/out/win_data.csv")) -- only the html was asked for
    h.cleanup(dir)
  end)
end)

describe("outputs.write", function()
  local outputs = require "ascope.report.outputs"

  it("deals outputs into one group per job, heaviest first, each to the lightest group", function()
    local list = { { path = "csv", weight = 4 }, { path = "json", weight = 0.1 }, { path = "md", weight = 0.1 },
                   { path = "trace", weight = 3 }, { path = "html", weight = 1 } }
    local function names(groups)
      local out = {}
      for g, grp in ipairs(groups) do
        out[g] = {}
        for k, o in ipairs(grp) do out[g][k] = o.path end
      end
      return out
    end
    assert.same({ { "csv", "json" }, { "trace", "html", "md" } }, names(outputs.groups(list, 2)))
    assert.same({ { "csv" }, { "trace" }, { "html", "json", "md" } }, names(outputs.groups(list, 3)))
    assert.same({ { "csv", "trace", "html", "json", "md" } }, names(outputs.groups(list, 1)))
    assert.equal(5, #outputs.groups(list, 8))
  end)

  it("writes every output it can and names the ones it could not", function()
    local dir = h.tmpdir()
    local function file(name, text)
      return { path = dir .. "/" .. name, write = function(path) return h.write(path, text) or true end }
    end
    local bad = { path = dir .. "/bad.json", weight = 2, write = function() return nil, "bad.json: disk full" end }
    for _, jobs in ipairs({ 1, 2 }) do
      local ok, err = outputs.write({ bad, file("a.md", "A"), file("b.md", "B") }, jobs)
      assert.is_nil(ok)
      assert.equal("bad.json: disk full", err)
      assert.equal("A", h.read(dir .. "/a.md"))
      assert.equal("B", h.read(dir .. "/b.md"))
    end
    assert.is_true(outputs.write({ file("c.md", "C") }, 2))
    assert.equal("C", h.read(dir .. "/c.md"))
  end)
end)
