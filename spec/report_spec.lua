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

describe("timeline steps", function()
  local LAYOUT = { title = "t", sections = { { id = "steps", kind = "steps", title = "Step times" } } }
  local function rank(n, long)
    local ids, times, comm = {}, {}, {}
    for i = 1, n do ids[i], times[i], comm[i] = 100 + i, 10 + (i % 7), 2 + (i % 3) end
    local tail = {}
    for i, s in ipairs(long) do tail[i] = { step = s } end
    return { role = "", rank = 0, findings = {}, comm_jitter = { column = "Communication" },
             jitter = { series = { ids = ids, times = times, comm = comm }, long_tail = tail, cv = 0.2, mean = 13, p95 = 16 } }
  end

  it("draws a bar per step while they fit, the long-tail steps in red", function()
    local page = timeline_html.render({ input = "x", ranks = { rank(40, { 107 }) }, failed = {} }, LAYOUT)
    local _, bars = page:gsub('class="bar"', "")
    local _, hot = page:gsub('class="bar hot"', "")
    assert.equal(2 * 40 - 1, bars) -- 40 step times and 40 communication times, one step hot
    assert.equal(1, hot)
    assert.truthy(page:find(">step 107<title>", 1, true))
  end)

  it("draws 1,000 steps as a line over the step ids, with the long-tail steps named", function()
    local page = timeline_html.render({ input = "x", ranks = { rank(1000, { 150, 900 }) }, failed = {} }, LAYOUT)
    assert.falsy(page:find('class="bar', 1, true))
    local _, lines = page:gsub("<polyline", "")
    assert.equal(2, lines) -- step time and communication
    assert.truthy(page:find("1000 steps drawn as a line; long-tail steps: 150, 900.", 1, true))
    local x = {}
    for v in page:gmatch('class="tick" text%-anchor="middle">([^<]*)</text>') do x[#x + 1] = v end
    assert.same({ "0", "200", "400", "600", "800", "1000", "1200" }, { table.unpack(x, 1, #x / 2) }) -- ids 101 .. 1100
    for _, v in ipairs(x) do assert.truthy(math.tointeger(tonumber(v)), v) end
  end)
end)

describe("a report in Chinese", function()
  -- what may stay as it is in a zh page: metric and column ids, units, pool and component names
  local KEEP = { rank = true, MB = true, ms = true, Host = true, PTA = true, GE = true, APP = true, ["PTA+GE"] = true,
                 dispatch = true, combine = true }
  local function kept(text)
    return text:find("[\228-\233]") -- a CJK character (UTF-8 lead bytes of U+4E00-U+9FFF)
      or text:find("^[%l%d]+_[%l%d_]+$") -- a metric or column id: critical_path_ratio
      or text:find("^[%d%.%s]*%a*$") and not text:find("%a%a%a%a") -- a number with a unit: 6.6 us
      or KEEP[text]
  end

  it("is Chinese throughout: headings, table headers, axis titles, chart titles, legends", function()
    local dir = h.tmpdir()
    local pages = require("report_pages").write(dir, h.bin, "zh")
    for name, path in pairs(pages) do
      local page = h.read(path)
      local english = {}
      local function check(text)
        text = text:gsub("<[^>]+>", ""):gsub("^%s+", ""):gsub("%s+$", "")
        if text ~= "" and not kept(text) then english[#english + 1] = text end
      end
      for _, tag in ipairs({ "h1", "h2", "h3", "h4", "th" }) do
        for text in page:gmatch("<" .. tag .. "[^>]*>(.-)</" .. tag .. ">") do check(text) end
      end
      for text in page:gmatch('class="axis"[^>]*>([^<]*)<') do check(text) end
      for text in page:gmatch('class="legend"[^>]*>([^<]*)<') do check(text) end
      assert.same({}, english, name)
      assert.truthy(page:find('<html lang="zh">', 1, true), name)
    end
    h.cleanup(dir)
  end)

  it("writes the Markdown reports in Chinese too", function()
    local dir = h.tmpdir()
    local real = h.real .. "/msinsight_pytorch_text_level0"
    assert.equal(0, (h.run("--lang", "zh", "timeline", real, "-o", dir .. "/t", "-q", "--format", "md")))
    assert.equal(0, (h.run("--lang", "zh", "memory", real, "-o", dir .. "/m", "-q", "--format", "md")))
    local tmd, mmd = h.read(dir .. "/t/timeline_report.md"), h.read(dir .. "/m/memory_report.md")
    for _, want in ipairs({ "# ascope 时间线分析报告\n", "\n## 各 rank\n", "\n### 诊断结论\n", "\n### 1 关键路径 ⚠\n",
                            "\n### 指标看板\n", "| 指标 | 值 |  |" }) do
      assert.truthy(tmd:find(want, 1, true), want)
    end
    for _, english in ipairs({ "Findings", "Metrics dashboard", "Critical path", "Input `", "Slowest rank" }) do
      assert.falsy(tmd:find(english, 1, true), english)
    end
    for _, want in ipairs({ "# ascope 内存分析报告\n", "\n### 进程内存（memory_record.csv）\n", "| 角色 | rank | 组件 |",
                            "\n### 申请内存最多的调用点（共 " }) do
      assert.truthy(mmd:find(want, 1, true), want)
    end
    for _, english in ipairs({ "Process memory", "Top call sites", "Never released", "Input:" }) do
      assert.falsy(mmd:find(english, 1, true), english)
    end
    h.cleanup(dir)
  end)
end)

describe("the README's pictures", function()
  it("are the four reports' PNGs that make screenshots writes, small", function()
    local readme = h.read("README.md")
    local seen = {}
    for path in readme:gmatch("%((docs/screenshots/[%w_]+%.png)%)") do seen[#seen + 1] = path end
    table.sort(seen)
    assert.same({ "docs/screenshots/memory.png", "docs/screenshots/moe.png", "docs/screenshots/opjitter.png",
                  "docs/screenshots/timeline.png" }, seen)
    for _, path in ipairs(seen) do
      local png = h.read(path)
      assert.equal("\137PNG\r\n\26\n", png:sub(1, 8), path)
      -- IHDR: width and height, big-endian, at bytes 17-24: the window make screenshots uses
      assert.equal(1000, string.unpack(">I4", png, 17), path)
      assert.equal(640, string.unpack(">I4", png, 21), path)
      assert.truthy(#png < 150 * 1024, path .. " is " .. #png .. " bytes")
    end
  end)
end)

describe("svg charts", function()
  local function ticks_of(chart, anchor)
    local out = {}
    for v in chart:gmatch('class="tick" text%-anchor="' .. anchor .. '">([^<]*)</text>') do out[#out + 1] = v end
    return out
  end

  it("starts and ends every axis on a tick; index axes have whole-number ticks", function()
    assert.same({ lo = 110, hi = 180, step = 10, ticks = { 110, 120, 130, 140, 150, 160, 170, 180 } }, svg.scale(115, 171, 6))
    local s = svg.scale(0, 2, 6, true)
    assert.same({ 0, 1, 2 }, s.ticks)
    local chart = svg.lines({ title = "t", x_label = "call", y_label = "us", x_integer = true,
                              series = { { name = "a", x = { 0, 1, 2 }, y = { 3.2, 7.9, 5 } } } })
    assert.same({ "0", "1", "2" }, ticks_of(chart, "middle"))
    assert.same({ "3", "4", "5", "6", "7", "8" }, ticks_of(chart, "end"))
    -- the title is drawn, not only a tooltip
    assert.truthy(chart:find('<text x="4" y="16" class="ctitle">t</text>', 1, true))
  end)

  it("leaves a warm-up point out of the y range and a warm-up cell out of the colour scale", function()
    local chart = svg.lines({ title = "t", x_label = "call", y_label = "us", x_integer = true, range_from_x = 1,
                              series = { { name = "a", x = { 0, 1, 2, 3 }, y = { 1000, 10, 12, 11 } } } })
    local y = ticks_of(chart, "end")
    assert.equal("10", y[1])
    assert.equal("12", y[#y])
    local heat = svg.heatmap({ title = "h", rows = { "op" }, cols = { "0", "1", "2" }, unit = "us", col_name = "call",
                               value = function(_, c) return ({ 100, 5, 2 })[c] end,
                               in_scale = function(_, c) return c > 1 end })
    assert.truthy(heat:find('class="legend">≥ 5 us</text>', 1, true))
    -- call 0 takes the top colour, as call 1 (the largest in the scale) does
    local c0 = heat:match('fill="([^"]+)"><title>op, call 0: 100 us</title>')
    local c1 = heat:match('fill="([^"]+)"><title>op, call 1: 5 us</title>')
    assert.equal(c1, c0)
    assert.equal("hsl(0,80%,45%)", c0)
    local healthy = svg.heatmap({ title = "h", rows = { "op" }, cols = { "0", "1" }, unit = "us",
                                  value = function(_, c) return ({ 1, 5 })[c] end, in_scale = function(_, c) return c > 1 end })
    assert.truthy(healthy:find('class="legend">5 us</text>', 1, true))
    assert.falsy(healthy:find("≥", 1, true))
  end)

  it("fits lane labels into the margin and lists the legend in name order", function()
    local long = ("Ascend Hardware/Stream "):rep(6) .. "7"
    local chart = svg.swimlanes({ title = "lanes", x0 = 0, x1 = 10, kinds = { host = "#0a0", comm = "#d00", device = "#00d" },
                                  lanes = { { name = long, intervals = { { 0, 5, "host" } } },
                                            { name = "short", intervals = { { 5, 10, "comm" } } } } })
    local legend = {}
    for name in chart:gmatch('class="legend">([^<]*)</text>') do legend[#legend + 1] = name end
    assert.same({ "comm", "device", "host" }, legend)
    local shown = chart:match('class="label" text%-anchor="end">([^<]*)<title>' .. long:gsub("%p", "%%%0") .. "</title>")
    assert.truthy(shown and shown:find("^…"), shown)
    local left = tonumber(chart:match('<text x="(%d+)" y="%d+" class="label"'))
    assert.truthy(svg.text_width(shown, 11) <= left - 4)
    assert.truthy(chart:find('<text x="%d+" y="%d+" class="label" text%-anchor="end">short<title>short</title>'))
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
    -- the colour legend: from 0 to the largest jitter of calls 1.. (call 0 is the warm-up), the axes named
    assert.truthy(page:find('class="legend">6.6 us</text>', 1, true))
    assert.truthy(page:find("call index (call 0, the warm-up, does not set the colour scale)", 1, true))
    assert.truthy(page:find('transform="rotate%(%-90 12 [%d.]+%)">operator</text>'))
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
    assert.truthy(page:find(("<title>card 1, core 0: %d</title>"):format(#cards[1].missing.combine[0]), 1, true))
    assert.truthy(page:find("<title>card 0, core 0: 0</title>", 1, true))
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
    h.cleanup(dir)
  end)
end)
