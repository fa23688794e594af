-- `make check-html`: open the HTML reports in headless Chromium, take screenshots, and check
-- that they are not blank, that the page logged no console error, and that no text of an SVG
-- chart runs outside its chart or overlaps another text of it (Chromium measures the boxes of
-- the laid-out page: a script added to a copy of the report writes them into the DOM, which
-- --dump-dom prints). ASCOPE_CHECK_HTML_KEEP=DIR keeps the reports and screenshots there.
--   ascope run spec/check_html.lua
local core = require "ascope_core"
local fs = core.fs

local dir = ("/tmp/ascope-check-html-%d"):format(os.time())
assert(fs.mkdirs(dir))
local bin = os.getenv("ASCOPE_BIN") or "build/ascope"
local passed, failed = 0, 0

local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    print("ok " .. name)
  else
    failed = failed + 1
    print("FAIL " .. name .. (detail and (": " .. detail) or ""))
  end
end

local function sh(cmd)
  local ok = os.execute(cmd)
  return ok
end

local function chromium(page, png)
  local log = png .. ".log"
  local cmd = ("chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 "
    .. "--window-size=1200,1600 --screenshot=%s file://%s > /dev/null 2> %s"):format(png, page, log)
  local t0 = os.time()
  sh(cmd)
  local f = io.open(log, "rb")
  local text = f and f:read("a") or ""
  if f then f:close() end
  local st = fs.stat(png)
  return st and st.size or 0, text, os.time() - t0
end

-- The laid-out boxes of every SVG text, compared in the page: "OUTSIDE\tchart\ttext" and
-- "OVERLAP\tchart\ttext\ttext" lines (a text's own words, not its tooltip).
local MEASURE = [[
<script>
(function () {
  var out = [];
  function words(t) {
    var s = "";
    t.childNodes.forEach(function (n) { if (n.nodeType === 3) s += n.textContent; });
    return s.trim();
  }
  document.querySelectorAll("svg.chart").forEach(function (svg, i) {
    var box = svg.getBoundingClientRect();
    var title = svg.querySelector("title");
    var name = (title && title.textContent) || ("chart " + (i + 1));
    var boxes = [];
    svg.querySelectorAll("text").forEach(function (t) {
      var w = words(t);
      if (w === "") return;
      var r = t.getBoundingClientRect();
      boxes.push({ w: w, l: r.left, r: r.right, t: r.top, b: r.bottom });
    });
    boxes.forEach(function (b) {
      if (b.l < box.left - 1 || b.r > box.right + 1 || b.t < box.top - 1 || b.b > box.bottom + 1)
        out.push("OUTSIDE\t" + name + "\t" + b.w);
    });
    for (var a = 0; a < boxes.length; a++) {
      for (var c = a + 1; c < boxes.length; c++) {
        var x = boxes[a], y = boxes[c];
        var ox = Math.min(x.r, y.r) - Math.max(x.l, y.l), oy = Math.min(x.b, y.b) - Math.max(x.t, y.t);
        if (ox > 1 && oy > 1) out.push("OVERLAP\t" + name + "\t" + x.w + "\t" + y.w);
      }
    }
  });
  var pre = document.createElement("pre");
  pre.id = "ascope-layout";
  pre.textContent = "charts " + document.querySelectorAll("svg.chart").length + "\n" + out.join("\n");
  document.body.appendChild(pre);
})();
</script>
]]

-- The layout problems of a page: number of charts measured, list of problem lines.
local function layout(page)
  local f = assert(io.open(page, "rb"))
  local text = f:read("a")
  f:close()
  local copy = page .. ".measure.html"
  assert(fs.write(copy, (text:gsub("</body>", function() return MEASURE .. "</body>" end))))
  local dom = copy .. ".dom"
  sh(("chromium --headless --no-sandbox --disable-gpu --window-size=1200,1600 --dump-dom file://%s > %s 2> /dev/null")
    :format(copy, dom))
  local df = io.open(dom, "rb")
  local out = df and df:read("a") or ""
  if df then df:close() end
  local pre = out:match('<pre id="ascope%-layout">(.-)</pre>')
  if not pre then return nil end
  pre = pre:gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&quot;", '"'):gsub("&amp;", "&")
  local charts = tonumber(pre:match("^charts (%d+)"))
  local problems = {}
  for line in pre:gmatch("[^\n]+") do
    if line:match("^OUTSIDE") or line:match("^OVERLAP") then problems[#problems + 1] = line end
  end
  return charts, problems
end

local blank = dir .. "/blank.html"
fs.write(blank, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body></body></html>")
local blank_size = chromium(blank, dir .. "/blank.png")
check("chromium takes a screenshot", blank_size > 0, "is chromium installed? (apt-get install chromium)")

-- the measuring itself: a chart made to have a label outside it and two labels on each other
local bad = dir .. "/bad.html"
fs.write(bad, '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><svg class="chart" viewBox="0 0 200 100" '
  .. 'width="200" height="100"><title>bad</title><text x="150" y="20">a label that runs out</text>'
  .. '<text x="10" y="60">overlap one</text><text x="14" y="62">overlap two</text></svg></body></html>')
local _, bad_problems = layout(bad)
local outside, overlap = false, false
for _, p in ipairs(bad_problems or {}) do
  outside = outside or p == "OUTSIDE\tbad\ta label that runs out"
  overlap = overlap or p == "OVERLAP\tbad\toverlap one\toverlap two"
end
check("the layout check sees a text outside its chart", outside, table.concat(bad_problems or { "not measured" }, " | "))
check("the layout check sees two texts on each other", overlap, table.concat(bad_problems or { "not measured" }, " | "))

package.path = "spec/?.lua;" .. package.path
-- the reports in both languages: the Chinese labels take more room
local pages = { en = require("report_pages").write(dir .. "/en", bin, "en"),
                zh = require("report_pages").write(dir .. "/zh", bin, "zh") }
-- a timeline page of 1,000 steps (with the step-time and communication charts), in both languages
local function steps_page(path, lang)
  require("ascope.i18n").set(lang)
  local ids, times, comm = {}, {}, {}
  for i = 1, 1000 do ids[i], times[i], comm[i] = i, 100 + (i * 37 % 23), 10 + (i * 11 % 7) end
  local rank = { role = "actor", rank = 0, findings = {}, comm_jitter = { column = "Communication(Not Overlapped)" },
                 jitter = { series = { ids = ids, times = times, comm = comm }, long_tail = { { step = 17 } }, cv = 0.05,
                            mean = 111, p95 = 121 } }
  local tl_layout = assert(require("ascope.report.layout").load("timeline"))
  local kept = {}
  for _, sec in ipairs(tl_layout.sections) do if sec.kind == "steps" then kept[#kept + 1] = sec end end
  tl_layout.sections = kept
  assert(fs.write(path, require("ascope.report.timeline_html").render({ input = "generated", ranks = { rank }, failed = {} },
    tl_layout)))
  return path
end
pages.en.steps = steps_page(dir .. "/en/steps_report.html", "en")
pages.zh.steps = steps_page(dir .. "/zh/steps_report.html", "zh")

local checked = {}
for _, report in ipairs(require("report_pages").NAMES) do checked[#checked + 1] = report end
checked[#checked + 1] = "steps"
for _, lang in ipairs({ "en", "zh" }) do for _, report in ipairs(checked) do
  local page = pages[lang][report]
  local name = lang .. "/" .. page:match("([^/]+)$")
  check(name .. " exists", fs.stat(page) ~= nil)
  local size, log = chromium(page, page .. ".png")
  check(name .. " is not blank", size > 5 * math.max(blank_size, 1),
    ("screenshot %d bytes, blank page %d bytes"):format(size, blank_size))
  local console = {}
  for line in log:gmatch("[^\n]+") do
    if line:find("CONSOLE", 1, true) or line:find("Uncaught", 1, true) then console[#console + 1] = line end
  end
  check(name .. " logs no console error", #console == 0, table.concat(console, " | "))
  local charts, problems = layout(page)
  check(name .. ": its charts were measured", charts and charts > 0, "no chart found or the page was not measured")
  check(name .. ": no chart text outside its chart or on another", problems and #problems == 0,
    table.concat(problems or {}, " | "))
end end
local keep = os.getenv("ASCOPE_CHECK_HTML_KEEP")
if keep and keep ~= "" then os.execute(("rm -rf '%s' && cp -r '%s' '%s'"):format(keep, dir, keep)) end
fs.remove_tree(dir)
print(("%d passed, %d failed"):format(passed, failed))
return failed > 0 and 1 or 0
