--- Self-contained HTML pages: inline CSS, inline SVG, no script, no font or file from a network,
-- so a report opens on an air-gapped login node.
local svg = require "ascope.report.svg"

local M = {}
local esc = svg.escape
M.escape = esc

M.CSS = [[
body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,"Noto Sans CJK SC","Microsoft YaHei",sans-serif;
  margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0;display:block;max-width:100%;overflow-x:auto}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.warn{color:#b00}.note{color:#666}
nav.toc ul{margin:4px 0;padding-left:20px}nav.toc li{margin:2px 0}nav.toc a{color:#2255aa}
svg.chart{display:block;margin:8px 0;max-width:100%;height:auto}
svg .plot{fill:#fcfcfc;stroke:#999}svg .grid{stroke:#e5e5e5}svg .tick{font-size:11px;fill:#555}
svg .axis{font-size:12px;fill:#222}svg .legend,svg .label,svg .value{font-size:11px;fill:#333}
svg .series{fill:none;stroke-width:1.3}svg .bar{fill:#3366cc}svg .bar.hot{fill:#dc3912}
svg .ctitle{font-size:13px;font-weight:600;fill:#222}svg .tickmark{stroke:#999}
svg .mark{stroke:#dc3912;stroke-dasharray:4 3}svg .marklabel{font-size:11px;fill:#dc3912}
]]

--- A table header from a locale entry "a|b|c": i18n.t(key, ...) split at the bars ("a|b|" has
-- an empty third column).
function M.header(key, ...)
  local out = {}
  for h in (require("ascope.i18n").t(key, ...) .. "|"):gmatch("([^|]*)|") do out[#out + 1] = h end
  return out
end

--- A table: header list and rows; numbers are right-aligned.
function M.table(header, rows)
  local out = { "<table><thead><tr>" }
  for _, h in ipairs(header) do out[#out + 1] = "<th>" .. esc(h) .. "</th>" end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(rows) do
    out[#out + 1] = "<tr>"
    for i = 1, #header do
      local v = r[i]
      if type(v) == "number" then
        -- a whole number as one, where it has an integer form (1e22 has none: %d would raise)
        local whole = math.tointeger(v)
        out[#out + 1] = '<td class="num">' .. esc(whole and ("%d"):format(whole) or ("%.3f"):format(v)) .. "</td>"
      else
        out[#out + 1] = "<td>" .. esc(v == nil and "" or v) .. "</td>"
      end
    end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</tbody></table>"
  return table.concat(out)
end

--- The page: title and a list of HTML fragments.
function M.page(title, parts, lang)
  return table.concat({ "<!DOCTYPE html>", ('<html lang="%s"><head><meta charset="utf-8">'):format(lang or "en"),
    "<title>" .. esc(title) .. "</title><style>" .. M.CSS .. "</style></head><body>",
    "<h1>" .. esc(title) .. "</h1>", table.concat(parts, "\n"), "</body></html>" }, "\n")
end

return M
