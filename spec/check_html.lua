-- `make check-html`: open the HTML reports in headless Chromium, take screenshots, and check
-- that they are not blank and that the page logged no console error.
--   ascope run spec/check_html.lua
local core = require "ascope_core"
local fs = core.fs

local dir = ("/tmp/ascope-check-html-%d"):format(os.time())
assert(fs.mkdirs(dir))
local bin = os.getenv("ASCOPE_BIN") or "build/ascope"
local real = "spec/fixtures/real"
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

local blank = dir .. "/blank.html"
fs.write(blank, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body></body></html>")
local blank_size = chromium(blank, dir .. "/blank.png")
check("chromium takes a screenshot", blank_size > 0, "is chromium installed? (apt-get install chromium)")

sh(("%s memory %s/msinsight_pytorch_text_level0 -o %s/memory -q --format html > /dev/null 2>&1"):format(bin, real, dir))
sh(("%s timeline %s/msinsight_pytorch_text_level0 -o %s/timeline -q --format html > /dev/null 2>&1"):format(bin, real, dir))
sh(("%s opjitter %s/msinsight_pytorch_text_level0 -o %s/opjitter -q --format html > /dev/null 2>&1"):format(bin, real, dir))
-- a dispatch hang on 4 generated cards: the moe page with its wait-for graph
package.path = "spec/?.lua;" .. package.path
local mh = require "moe_helper"
mh.write_cluster(dir .. "/dumps", (mh.cluster({ state = "dispatch_stuck", cards = 4, fault = 2 })), "mc2")
sh(("%s moe TARGET_DIR=%s/dumps SOC_VERSION=950 -o %s/moe -q --format html > /dev/null 2>&1"):format(bin, dir, dir))
for _, page in ipairs({ dir .. "/memory/memory_report.html", dir .. "/timeline/timeline_report.html",
                        dir .. "/opjitter/opjitter_report.html", dir .. "/moe/moe_report.html" }) do
  local name = page:match("([^/]+)$")
  check(name .. " exists", fs.stat(page) ~= nil)
  local size, log = chromium(page, page .. ".png")
  check(name .. " is not blank", size > 5 * math.max(blank_size, 1),
    ("screenshot %d bytes, blank page %d bytes"):format(size, blank_size))
  local console = {}
  for line in log:gmatch("[^\n]+") do
    if line:find("CONSOLE", 1, true) or line:find("Uncaught", 1, true) then console[#console + 1] = line end
  end
  check(name .. " logs no console error", #console == 0, table.concat(console, " | "))
end
fs.remove_tree(dir)
print(("%d passed, %d failed"):format(passed, failed))
return failed > 0 and 1 or 0
