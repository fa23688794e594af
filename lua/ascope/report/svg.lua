--- Small SVG charts for self-contained HTML reports: axes with ticks and units, line and step
-- series, horizontal bars, heat maps, swimlanes, legends, and tooltips through <title>. Long
-- series are reduced to the minimum and maximum of every pixel column, so a million points give
-- a crisp chart of a few thousand points.
--   local svg = require "ascope.report.svg"
--   local s = svg.lines({ title = "memory", x_label = "time", x_unit = "ms", y_label = "allocated", y_unit = "MB",
--                         series = { { name = "allocated", x = xs, y = ys, step = true } } })
local M = {}

local PALETTE = { "#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00" }
M.PALETTE = PALETTE

function M.escape(s)
  return (tostring(s):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",
                                         ["'"] = "&#39;" }))
end
local esc = M.escape

local function num(x)
  if x == math.floor(x) and math.abs(x) < 1e15 then return ("%d"):format(x) end
  return ("%.2f"):format(x)
end

--- "Nice" tick values covering [lo, hi], about n of them.
function M.ticks(lo, hi, n)
  n = n or 5
  if hi <= lo then hi = lo + 1 end
  local raw = (hi - lo) / n
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local step = mag
  for _, m in ipairs({ 1, 2, 2.5, 5, 10 }) do
    if raw <= m * mag then
      step = m * mag
      break
    end
  end
  local out = {}
  local t = math.ceil(lo / step) * step
  while t <= hi + step * 1e-9 do
    out[#out + 1] = t
    t = t + step
  end
  return out
end

local function fmt_tick(v)
  local a = math.abs(v)
  if a ~= 0 and (a >= 1e6 or a < 1e-3) then return ("%.3g"):format(v) end
  if v == math.floor(v) then return ("%d"):format(v) end
  return (("%.3f"):format(v):gsub("0+$", ""):gsub("%.$", ""))
end

--- Reduce (x, y) to at most 2 points per pixel column (the min and max), keeping order.
function M.downsample(xs, ys, x0, x1, pixels)
  local n = #xs
  if n <= pixels * 2 then
    local ox, oy = {}, {}
    for i = 1, n do ox[i], oy[i] = xs[i], ys[i] end
    return ox, oy
  end
  local ox, oy = {}, {}
  local span = (x1 - x0) > 0 and (x1 - x0) or 1
  local cur, lo_i, hi_i = nil, nil, nil
  local function flush()
    if not cur then return end
    local a, b = lo_i, hi_i
    if a > b then a, b = b, a end
    ox[#ox + 1], oy[#oy + 1] = xs[a], ys[a]
    if b ~= a then ox[#ox + 1], oy[#oy + 1] = xs[b], ys[b] end
  end
  for i = 1, n do
    local y = ys[i]
    if y then
      local col = math.min(math.floor((xs[i] - x0) / span * pixels), pixels - 1)
      if col ~= cur then
        flush()
        cur, lo_i, hi_i = col, i, i
      else
        if y < ys[lo_i] then lo_i = i end
        if y > ys[hi_i] then hi_i = i end
      end
    end
  end
  flush()
  return ox, oy
end

local function frame(o)
  return {
    w = o.width or 900, h = o.height or 300, left = o.left or 70, right = o.right or 20, top = 30, bottom = 50,
  }
end

local function axes(out, f, x0, x1, y0, y1, o)
  local pw, ph = f.w - f.left - f.right, f.h - f.top - f.bottom
  local function sx(x) return f.left + (x - x0) / ((x1 - x0) > 0 and (x1 - x0) or 1) * pw end
  local function sy(y) return f.top + ph - (y - y0) / ((y1 - y0) > 0 and (y1 - y0) or 1) * ph end
  out[#out + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" class="plot"/>'):format(f.left, f.top, pw, ph)
  for _, t in ipairs(M.ticks(x0, x1, o.x_ticks or 6)) do
    if t >= x0 and t <= x1 then
      local x = sx(t)
      out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/><text x="%.1f" y="%d" class="tick" '
        .. 'text-anchor="middle">%s</text>'):format(x, f.top, x, f.top + ph, x, f.top + ph + 16, esc(fmt_tick(t)))
    end
  end
  for _, t in ipairs(M.ticks(y0, y1, o.y_ticks or 5)) do
    if t >= y0 and t <= y1 then
      local y = sy(t)
      out[#out + 1] = ('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="grid"/><text x="%d" y="%.1f" class="tick" '
        .. 'text-anchor="end">%s</text>'):format(f.left, y, f.left + pw, y, f.left - 6, y + 4, esc(fmt_tick(t)))
    end
  end
  out[#out + 1] = ('<text x="%.1f" y="%d" class="axis" text-anchor="middle">%s</text>'):format(f.left + pw / 2, f.h - 10,
    esc(o.x_label .. (o.x_unit and (" (" .. o.x_unit .. ")") or "")))
  out[#out + 1] = ('<text x="14" y="%.1f" class="axis" text-anchor="middle" transform="rotate(-90 14 %.1f)">%s</text>')
    :format(f.top + ph / 2, f.top + ph / 2, esc(o.y_label .. (o.y_unit and (" (" .. o.y_unit .. ")") or "")))
  return sx, sy, pw, ph
end

local function open_svg(f, o)
  return { ('<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img">')
    :format(f.w, f.h, f.w, f.h), ("<title>%s</title>"):format(esc(o.title or "")) }
end

local function legend(out, f, names)
  local x = f.left
  for i, name in ipairs(names) do
    out[#out + 1] = ('<rect x="%d" y="8" width="12" height="12" fill="%s"/><text x="%d" y="18" class="legend">%s</text>')
      :format(x, PALETTE[(i - 1) % #PALETTE + 1], x + 16, esc(name))
    x = x + 24 + #name * 7
  end
end

--- Line or step series. o: title, x_label, x_unit, y_label, y_unit, series = {{name, x, y, step}},
-- marks = {{x, label}} (vertical markers), y_min, y_max (the axis reaches at least these).
function M.lines(o)
  local f = frame(o)
  local x0, x1, y0, y1 = math.huge, -math.huge, o.y_min or math.huge, o.y_max or -math.huge
  for _, s in ipairs(o.series) do
    for i = 1, #s.x do
      local x, y = s.x[i], s.y[i]
      if x and y then
        if x < x0 then x0 = x end
        if x > x1 then x1 = x end
        if y < y0 then y0 = y end
        if y > y1 then y1 = y end
      end
    end
  end
  if x0 == math.huge then x0, x1, y0, y1 = 0, 1, 0, 1 end
  if y1 == y0 then y1 = y0 + 1 end
  local out = open_svg(f, o)
  local sx, sy, pw = axes(out, f, x0, x1, y0, y1, o)
  local names = {}
  for k, s in ipairs(o.series) do
    names[k] = s.name
    local xs, ys = M.downsample(s.x, s.y, x0, x1, math.floor(pw))
    local pts = {}
    for i = 1, #xs do
      local px, py = sx(xs[i]), sy(ys[i])
      if s.step and i > 1 then pts[#pts + 1] = ("%.1f,%.1f"):format(px, sy(ys[i - 1])) end
      pts[#pts + 1] = ("%.1f,%.1f"):format(px, py)
    end
    out[#out + 1] = ('<polyline class="series" stroke="%s" points="%s"><title>%s</title></polyline>'):format(
      PALETTE[(k - 1) % #PALETTE + 1], table.concat(pts, " "), esc(s.name))
  end
  for _, mk in ipairs(o.marks or {}) do
    local x = sx(mk.x)
    local left = x > f.left + pw / 2 -- labels right of the middle go to the left of the line
    out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="mark"><title>%s</title></line>'
      .. '<text x="%.1f" y="%d" class="marklabel" text-anchor="%s">%s</text>'):format(x, f.top, x, f.h - f.bottom,
      esc(mk.label), left and x - 4 or x + 4, f.top + 12, left and "end" or "start", esc(mk.label))
  end
  legend(out, f, names)
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

--- Horizontal bars. o: title, labels, values, unit, value_label, highlight = {[i] = true}, tips.
function M.bars(o)
  local n = #o.labels
  local row = 22
  local f = { w = o.width or 900, h = 60 + n * row, left = o.left or 320, right = 80, top = 30, bottom = 30 }
  local out = open_svg(f, o)
  local mx = 0
  for _, v in ipairs(o.values) do if v > mx then mx = v end end
  if mx == 0 then mx = 1 end
  local pw = f.w - f.left - f.right
  for _, t in ipairs(M.ticks(0, mx, 5)) do
    local x = f.left + t / mx * pw
    if t <= mx then
      out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/><text x="%.1f" y="%d" class="tick" '
        .. 'text-anchor="middle">%s</text>'):format(x, f.top, x, f.top + n * row, x, f.top + n * row + 16, esc(fmt_tick(t)))
    end
  end
  for i, label in ipairs(o.labels) do
    local v = o.values[i]
    local y = f.top + (i - 1) * row
    local short = #label > 48 and ("…" .. label:sub(-46)) or label
    out[#out + 1] = ('<text x="%d" y="%d" class="label" text-anchor="end">%s<title>%s</title></text>'):format(f.left - 6,
      y + 15, esc(short), esc(label))
    out[#out + 1] = ('<rect x="%d" y="%d" width="%.1f" height="%d" class="%s"><title>%s: %s %s</title></rect>'):format(
      f.left, y + 3, v / mx * pw, row - 6, o.highlight and o.highlight[i] and "bar hot" or "bar", esc(label), num(v),
      esc(o.unit or ""))
    out[#out + 1] = ('<text x="%.1f" y="%d" class="value">%s</text>'):format(f.left + v / mx * pw + 4, y + 15,
      esc(num(v) .. (o.unit and (" " .. o.unit) or "")))
  end
  out[#out + 1] = ('<text x="%.1f" y="%d" class="axis" text-anchor="middle">%s</text>'):format(f.left + pw / 2, f.h - 4,
    esc((o.value_label or "") .. (o.unit and (" (" .. o.unit .. ")") or "")))
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

--- Heat map. o: title, rows (labels), cols (labels), value(r, c) -> number or nil, unit.
function M.heatmap(o)
  local nr, nc = #o.rows, #o.cols
  local cw = math.max(4, math.min(24, math.floor(700 / math.max(nc, 1))))
  local rh = 18
  local f = { w = 280 + nc * cw + 80, h = 70 + nr * rh, left = 280, top = 30 }
  local out = open_svg(f, o)
  local mx = 0
  for r = 1, nr do
    for c = 1, nc do
      local v = o.value(r, c)
      if v and v > mx then mx = v end
    end
  end
  if mx == 0 then mx = 1 end
  for r = 1, nr do
    local label = o.rows[r]
    local short = #label > 40 and ("…" .. label:sub(-38)) or label
    out[#out + 1] = ('<text x="%d" y="%d" class="label" text-anchor="end">%s<title>%s</title></text>'):format(f.left - 6,
      f.top + (r - 1) * rh + 13, esc(short), esc(label))
    for c = 1, nc do
      local v = o.value(r, c)
      local fill = v and ("hsl(%d,80%%,%d%%)"):format(math.floor(220 - 220 * v / mx), 45) or "#eee"
      out[#out + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s, %s: %s</title></rect>'):format(
        f.left + (c - 1) * cw, f.top + (r - 1) * rh, cw - 1, rh - 1, fill, esc(o.rows[r]), esc(o.cols[c]),
        v and (num(v) .. " " .. (o.unit or "")) or "NA")
    end
  end
  out[#out + 1] = ('<text x="%d" y="%d" class="axis">%s</text>'):format(f.left, f.h - 12,
    esc((o.x_label or "") .. "; colour: " .. (o.value_label or "value") .. " (" .. (o.unit or "") .. "), max " .. num(mx)))
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

--- Swimlanes: o.lanes = {{name, intervals = {{s, e, kind, label}}}}, o.x0, o.x1 (same unit),
-- o.kinds = {kind -> colour}.
function M.swimlanes(o)
  local n = #o.lanes
  local row = 20
  local f = { w = o.width or 1000, h = 70 + n * row, left = 260, right = 20, top = 30, bottom = 40 }
  local out = open_svg(f, o)
  local pw = f.w - f.left - f.right
  local span = (o.x1 - o.x0) > 0 and (o.x1 - o.x0) or 1
  for _, t in ipairs(M.ticks(0, span, 8)) do
    local x = f.left + t / span * pw
    out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/><text x="%.1f" y="%d" class="tick" '
      .. 'text-anchor="middle">%s</text>'):format(x, f.top, x, f.top + n * row, x, f.top + n * row + 16, esc(fmt_tick(t)))
  end
  for i, lane in ipairs(o.lanes) do
    local y = f.top + (i - 1) * row
    out[#out + 1] = ('<text x="%d" y="%d" class="label" text-anchor="end">%s</text>'):format(f.left - 6, y + 14, esc(lane.name))
    -- merge blocks closer than a pixel so a busy lane stays a small file
    local last_x, last_w
    local blocks = {}
    for _, iv in ipairs(lane.intervals) do
      local x = f.left + (iv[1] - o.x0) / span * pw
      local w = math.max((iv[2] - iv[1]) / span * pw, 0.5)
      if last_x and x <= last_x + last_w + 0.5 and iv[3] == blocks[#blocks].kind then
        last_w = math.max(last_w, x + w - last_x)
        blocks[#blocks].w = last_w
      else
        blocks[#blocks + 1] = { x = x, w = w, kind = iv[3], label = iv[4] }
        last_x, last_w = x, w
      end
    end
    for _, b in ipairs(blocks) do
      out[#out + 1] = ('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s">%s</rect>'):format(b.x, y + 3, b.w, row - 6,
        (o.kinds or {})[b.kind] or PALETTE[1], b.label and ("<title>" .. esc(b.label) .. "</title>") or "")
    end
  end
  out[#out + 1] = ('<text x="%.1f" y="%d" class="axis" text-anchor="middle">%s</text>'):format(f.left + pw / 2, f.h - 8,
    esc(o.x_label or "time since the step start (ms)"))
  local x = f.left
  -- legend in name order: the same input gives the same bytes
  local kinds = {}
  for kind in pairs(o.kinds or {}) do kinds[#kinds + 1] = kind end
  table.sort(kinds)
  for _, kind in ipairs(kinds) do
    local colour = o.kinds[kind]
    out[#out + 1] = ('<rect x="%d" y="8" width="12" height="12" fill="%s"/><text x="%d" y="18" class="legend">%s</text>')
      :format(x, colour, x + 16, esc(kind))
    x = x + 30 + #kind * 7
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

return M
