-- `make screenshots`: the pictures of the README, docs/screenshots/<report>.png, taken by headless
-- Chromium from the reports of spec/report_pages.lua. Each shows the top of the page with only the
-- sections named below (the rest hidden by a style added to a copy), in a 1000 x 640 window.
--   ascope run spec/screenshots.lua [OUT_DIR]
local core = require "ascope_core"
local fs = core.fs

package.path = "spec/?.lua;" .. package.path
local out = arg and arg[1] or "docs/screenshots"
local dir = ("/tmp/ascope-screenshots-%d"):format(os.time())
local bin = os.getenv("ASCOPE_BIN") or "build/ascope"
local pages = require("report_pages").write(dir, bin, "en")

-- the sections each picture shows (ids are prefixes: a per-rank section's id ends in its rank)
local SHOW = {
  memory = { "over_time-msinsight_pytorch_text_level0-0" },
  timeline = { "swimlanes-0", "idle-0" },
  opjitter = { "jitter" },
  moe = { "wait-for", "grid-dispatch" },
}

assert(fs.mkdirs(out))
local failed = 0
for _, name in ipairs(require("report_pages").NAMES) do
  local f = assert(io.open(pages[name], "rb"))
  local page = f:read("a")
  f:close()
  local shown = {}
  for i, id in ipairs(SHOW[name]) do shown[i] = ('body > section[id="%s"]'):format(id) end
  local style = "<style>body > section, body > nav, body > p { display: none } " .. table.concat(shown, ", ")
    .. " { display: block } body { margin: 12px 16px }</style>"
  local copy = pages[name] .. ".shot.html"
  assert(fs.write(copy, (page:gsub("</head>", function() return style .. "</head>" end, 1))))
  local png = ("%s/%s.png"):format(out, name)
  os.execute(("chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,640 "
    .. "--screenshot=%s file://%s > /dev/null 2>&1"):format(png, copy))
  local st = fs.stat(png)
  if st and st.size > 0 then
    print(("%s: %d bytes"):format(png, st.size))
  else
    failed = failed + 1
    print(png .. ": not written (is chromium installed?)")
  end
end
fs.remove_tree(dir)
return failed > 0 and 1 or 0
