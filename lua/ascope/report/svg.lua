--- Small SVG charts for self-contained HTML reports: axes with ticks and units, line and step
-- series, horizontal bars, heat maps, swimlanes, legends, and tooltips through <title>. Long
-- series are reduced to the minimum and maximum of every pixel column, so a million points give
-- a crisp chart of a few thousand points.
--   local svg = require "ascope.report.svg"
--   local s = svg.lines({ title = "memory", x_label = "time", x_unit = "ms", y_label = "allocated", y_unit = "MB",
--                         series = { { name = "allocated", x = xs, y = ys, step = true } } })
local M = {}

-- twelve colours: memory_record.csv alone gives nine series (four components, three values)
local PALETTE = { "#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00", "#8c564b",
                  "#316395", "#b8860b", "#22aa99" }
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

--- "Nice" tick values covering [lo, hi], about n of them (integer steps when integer is set).
function M.ticks(lo, hi, n, integer)
  local t = M.scale(lo, hi, n, integer)
  local out = {}
  for _, v in ipairs(t.ticks) do if v >= lo - t.step * 1e-9 and v <= hi + t.step * 1e-9 then out[#out + 1] = v end end
  return out
end

--- An axis scale that starts and ends on a tick: {lo, hi, step, ticks} with lo <= a, hi >= b.
-- integer: an index axis (call number, step, core), whose ticks are whole numbers.
function M.scale(a, b, n, integer)
  n = n or 5
  if b <= a then b = a + 1 end
  local raw = (b - a) / math.max(n, 1)
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local step = mag * 10
  for _, m in ipairs({ 1, 2, 2.5, 5, 10 }) do
    if raw <= m * mag then
      step = m * mag
      break
    end
  end
  if integer then step = math.max(1, math.ceil(step)) end
  local lo = math.floor(a / step + 1e-9) * step
  local hi = math.ceil(b / step - 1e-9) * step
  if hi <= lo then hi = lo + step end
  local ticks, k = {}, 0
  while true do
    local v = lo + k * step
    if v > hi + step * 1e-9 or k > 1000 then break end
    ticks[#ticks + 1] = math.abs(v) < step * 1e-9 and 0 or v
    k = k + 1
  end
  return { lo = lo, hi = hi, step = step, ticks = ticks }
end

local function fmt_tick(v)
  local a = math.abs(v)
  if a ~= 0 and (a >= 1e6 or a < 1e-3) then return ("%.3g"):format(v) end
  if v == math.floor(v) then return ("%d"):format(v) end
  return (("%.3f"):format(v):gsub("0+$", ""):gsub("%.$", ""))
end
M.fmt_tick = fmt_tick

-- The characters of a text, a lead byte with its continuation bytes each: labels come from the
-- data, and a byte that is not UTF-8 must not stop a report.
local function characters(s)
  local out = {}
  for c in tostring(s):gmatch("[^\128-\191][\128-\191]*") do out[#out + 1] = c end
  return out
end

--- The width in pixels of a text at a font size: Latin about 0.62 em, characters of three or
-- four bytes (CJK, "…") 1 em (the charts lay their margins out with it; check-html measures the
-- result).
function M.text_width(s, size)
  local w = 0
  for _, c in ipairs(characters(s)) do w = w + (c:byte() >= 0xE2 and 1.0 or 0.62) end
  return w * (size or 11)
end
local width = M.text_width

--- The text shortened from the left with "…" to fit px pixels at the font size.
function M.fit(s, px, size)
  s = tostring(s)
  if width(s, size) <= px then return s end
  -- the characters from the end that fit beside the ellipsis
  local chars = characters(s)
  local budget, used, i = px - width("…", size), 0, #chars + 1
  while i > 1 do
    local cw = width(chars[i - 1], size)
    if used + cw > budget then break end
    used, i = used + cw, i - 1
  end
  return "…" .. table.concat(chars, "", i)
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

-- The chart's title on its first line and its legend below, wrapped to the width. Returns the
-- y where the plot may start.
local function heading(out, o, w, items)
  local y = 4
  if o.title and o.title ~= "" then
    out[#out + 1] = ('<text x="4" y="16" class="ctitle">%s</text>'):format(esc(M.fit(o.title, w - 8, 13)))
    y = 24
  end
  if items and #items > 0 then
    local x = 4
    y = y + 2
    for _, it in ipairs(items) do
      local iw = 20 + width(it.name, 11) + 12
      if x > 4 and x + iw > w - 4 then
        x = 4
        y = y + 16
      end
      out[#out + 1] = ('<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" class="legend">%s</text>')
        :format(x, y, it.colour, x + 16, y + 10, esc(M.fit(it.name, w - x - 24, 11)))
      x = x + math.floor(iw + 0.5)
    end
    y = y + 16
  end
  return y + 6
end

local function open_svg(w, h, o)
  return { ('<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img">')
    :format(w, h, w, h), ("<title>%s</title>"):format(esc(o.title or "")) }
end

local function label_of(name, unit) return (name or "") .. (unit and (" (" .. unit .. ")") or "") end

--- Line or step series. o: title, x_label, x_unit, y_label, y_unit, series = {{name, x, y, step}},
-- marks = {{x, label}} (vertical markers), y_min, y_max (the axis reaches at least these),
-- x_integer (an index axis: whole-number ticks), range_from_x (points left of it, such as a
-- warm-up call, do not set the y range: they are drawn at the edge when off scale).
function M.lines(o)
  local w, h = o.width or 900, o.height or 300
  local x0, x1, y0, y1 = math.huge, -math.huge, o.y_min or math.huge, o.y_max or -math.huge
  for _, s in ipairs(o.series) do
    for i = 1, #s.x do
      local x, y = s.x[i], s.y[i]
      if x and y then
        if x < x0 then x0 = x end
        if x > x1 then x1 = x end
        if not (o.range_from_x and x < o.range_from_x) then
          if y < y0 then y0 = y end
          if y > y1 then y1 = y end
        end
      end
    end
  end
  if x0 == math.huge then x0, x1 = 0, 1 end
  if y0 == math.huge then y0, y1 = 0, 1 end
  local ys = M.scale(y0, y1, o.y_ticks or 5)
  local xs = M.scale(x0, x1, o.x_ticks or 6, o.x_integer)
  -- margins from what they hold: the y tick labels and the rotated y title on the left, half of
  -- the last x tick label on the right
  local yw = 0
  for _, t in ipairs(ys.ticks) do yw = math.max(yw, width(fmt_tick(t), 11)) end
  local left = math.max(o.left or 0, math.ceil(26 + yw + 8))
  local right = math.max(20, math.ceil(width(fmt_tick(xs.hi), 11) / 2 + 6))
  local out = open_svg(w, h, o)
  local items = {}
  for k, s in ipairs(o.series) do items[k] = { name = s.name, colour = PALETTE[(k - 1) % #PALETTE + 1] } end
  local top = heading(out, o, w, items)
  local bottom = 46
  local pw, ph = w - left - right, h - top - bottom
  if ph < 60 then
    h = h + 60 - ph
    ph = 60
    out[1] = ('<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img">'):format(w, h, w, h)
  end
  -- fewer x ticks when their labels would touch
  local xw = 0
  for _, t in ipairs(xs.ticks) do xw = math.max(xw, width(fmt_tick(t), 11)) end
  while #xs.ticks > 2 and (#xs.ticks - 1) * (xw + 12) > pw do
    xs = M.scale(x0, x1, #xs.ticks - 2, o.x_integer)
  end
  local function sx(x) return left + (x - xs.lo) / (xs.hi - xs.lo) * pw end
  local function sy(y)
    y = math.max(ys.lo, math.min(ys.hi, y))
    return top + ph - (y - ys.lo) / (ys.hi - ys.lo) * ph
  end
  out[#out + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" class="plot"/>'):format(left, top, pw, ph)
  for _, t in ipairs(xs.ticks) do
    local x = sx(t)
    out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/><text x="%.1f" y="%d" class="tick" '
      .. 'text-anchor="middle">%s</text>'):format(x, top, x, top + ph, x, top + ph + 18, esc(fmt_tick(t)))
  end
  for _, t in ipairs(ys.ticks) do
    local y = sy(t)
    out[#out + 1] = ('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="grid"/><text x="%d" y="%.1f" class="tick" '
      .. 'text-anchor="end">%s</text>'):format(left, y, left + pw, y, left - 6, y + 4, esc(fmt_tick(t)))
  end
  out[#out + 1] = ('<text x="%.1f" y="%d" class="axis" text-anchor="middle">%s</text>'):format(left + pw / 2, h - 8,
    esc(M.fit(label_of(o.x_label, o.x_unit), w - 8, 12)))
  out[#out + 1] = ('<text x="14" y="%.1f" class="axis" text-anchor="middle" transform="rotate(-90 14 %.1f)">%s</text>')
    :format(top + ph / 2, top + ph / 2, esc(M.fit(label_of(o.y_label, o.y_unit), ph, 12)))
  for k, s in ipairs(o.series) do
    local dx, dy = M.downsample(s.x, s.y, xs.lo, xs.hi, math.floor(pw))
    local pts = {}
    for i = 1, #dx do
      local px, py = sx(dx[i]), sy(dy[i])
      if s.step and i > 1 then pts[#pts + 1] = ("%.1f,%.1f"):format(px, sy(dy[i - 1])) end
      pts[#pts + 1] = ("%.1f,%.1f"):format(px, py)
    end
    out[#out + 1] = ('<polyline class="series" stroke="%s" points="%s"><title>%s</title></polyline>'):format(
      PALETTE[(k - 1) % #PALETTE + 1], table.concat(pts, " "), esc(s.name))
  end
  for _, mk in ipairs(o.marks or {}) do
    local x = sx(mk.x)
    local to_left = x > left + pw / 2 -- labels right of the middle go to the left of the line
    out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="mark"><title>%s</title></line>'
      .. '<text x="%.1f" y="%d" class="marklabel" text-anchor="%s">%s</text>'):format(x, top, x, top + ph,
      esc(mk.label), to_left and x - 4 or x + 4, top + 12, to_left and "end" or "start", esc(mk.label))
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

--- Horizontal bars. o: title, labels, values, unit, value_label, highlight = {[i] = true}, tips.
function M.bars(o)
  local n = #o.labels
  local row = 22
  local w = o.width or 900
  local lw = 0
  for _, label in ipairs(o.labels) do lw = math.max(lw, width(label, 11)) end
  local left = math.min(math.max(o.left or 0, math.ceil(lw + 12)), math.floor(w * 0.45))
  local out = open_svg(w, 0, o)
  local top = heading(out, o, w)
  local mx = 0
  for _, v in ipairs(o.values) do if v > mx then mx = v end end
  local xs = M.scale(0, mx > 0 and mx or 1, 5, o.integer)
  local vw = 0
  for _, v in ipairs(o.values) do vw = math.max(vw, width(num(v) .. (o.unit and (" " .. o.unit) or ""), 11)) end
  local right = math.max(20, math.ceil(vw + 10 - 0))
  local pw = w - left - right
  local h = top + n * row + 44
  out[1] = ('<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img">'):format(w, h, w, h)
  local function sx(v) return left + v / xs.hi * pw end
  for _, t in ipairs(xs.ticks) do
    local x = sx(t)
    out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/><text x="%.1f" y="%d" class="tick" '
      .. 'text-anchor="middle">%s</text>'):format(x, top, x, top + n * row, x, top + n * row + 15, esc(fmt_tick(t)))
  end
  for i, label in ipairs(o.labels) do
    local v = o.values[i]
    local y = top + (i - 1) * row
    out[#out + 1] = ('<text x="%d" y="%d" class="label" text-anchor="end">%s<title>%s</title></text>'):format(left - 6,
      y + 15, esc(M.fit(label, left - 10, 11)), esc(label))
    out[#out + 1] = ('<rect x="%d" y="%d" width="%.1f" height="%d" class="%s"><title>%s: %s %s</title></rect>'):format(
      left, y + 3, v / xs.hi * pw, row - 6, o.highlight and o.highlight[i] and "bar hot" or "bar", esc(label), num(v),
      esc(o.unit or ""))
    out[#out + 1] = ('<text x="%.1f" y="%d" class="value">%s</text>'):format(sx(v) + 4, y + 15,
      esc(num(v) .. (o.unit and (" " .. o.unit) or "")))
  end
  out[#out + 1] = ('<text x="%.1f" y="%d" class="axis" text-anchor="middle">%s</text>'):format(left + pw / 2, h - 8,
    esc(M.fit(label_of(o.value_label, o.unit), w - 8, 12)))
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

local function heat(v, mx)
  return ("hsl(%d,80%%,45%%)"):format(math.floor(220 - 220 * math.min(v / mx, 1)))
end

--- Heat map. o: title, rows (labels), cols (labels), value(r, c) -> number or nil, unit,
-- value_label (what the colour means), x_label, y_label, col_name (a column's name in the
-- tooltips: "core"), na_label (the grey cells), in_scale(r, c) -> false for cells that must not
-- set the colour scale (a warm-up call): they take the top colour when above it.
function M.heatmap(o)
  local nr, nc = #o.rows, #o.cols
  local cw = math.max(4, math.min(24, math.floor(700 / math.max(nc, 1))))
  local rh = 18
  local lw = 0
  for _, label in ipairs(o.rows) do lw = math.max(lw, width(label, 11)) end
  local left = math.min(math.ceil(lw + 30), 300)
  local w = math.max(left + nc * cw + 40, 520)
  local out = open_svg(w, 0, o)
  local top = heading(out, o, w)
  local mx, above = 0, false
  for r = 1, nr do
    for c = 1, nc do
      local v = o.value(r, c)
      if v and (not o.in_scale or o.in_scale(r, c)) and v > mx then mx = v end
    end
  end
  if mx == 0 then mx = 1 end
  for r = 1, nr do
    for c = 1, nc do
      local v = o.value(r, c)
      if v and v > mx then above = true end
    end
  end
  local gy = top + nr * rh -- the bottom of the grid
  local h = gy + 38 + 44
  out[1] = ('<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img">'):format(w, h, w, h)
  for r = 1, nr do
    local label = o.rows[r]
    out[#out + 1] = ('<text x="%d" y="%d" class="label" text-anchor="end">%s<title>%s</title></text>'):format(left - 6,
      top + (r - 1) * rh + 13, esc(M.fit(label, left - 30, 11)), esc(label))
    for c = 1, nc do
      local v = o.value(r, c)
      out[#out + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s, %s%s: %s</title></rect>'):format(
        left + (c - 1) * cw, top + (r - 1) * rh, cw - 1, rh - 1, v and heat(v, mx) or "#eee", esc(o.rows[r]),
        o.col_name and (esc(o.col_name) .. " ") or "", esc(o.cols[c]),
        v and (num(v) .. (o.unit and (" " .. o.unit) or "")) or esc(o.na_label or "NA"))
    end
  end
  -- column ticks: every k-th column, so that the labels do not touch
  local cl = 0
  for _, c in ipairs(o.cols) do cl = math.max(cl, width(c, 11)) end
  local every = math.max(1, math.ceil((cl + 8) / cw))
  if every > 1 then every = M.scale(0, every, 1, true).hi end
  for c = 1, nc do
    if (c - 1) % every == 0 or (c == nc and (c - 1) % every >= every / 2) then
      local x = left + (c - 1) * cw + (cw - 1) / 2
      out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="tickmark"/><text x="%.1f" y="%d" class="tick" '
        .. 'text-anchor="middle">%s</text>'):format(x, gy, x, gy + 4, x, gy + 15, esc(o.cols[c]))
    end
  end
  out[#out + 1] = ('<text x="%.1f" y="%d" class="axis" text-anchor="middle">%s</text>'):format(left + nc * cw / 2,
    gy + 32, esc(M.fit(o.x_label or "", w - 8, 12)))
  if nr > 0 then
    out[#out + 1] = ('<text x="12" y="%.1f" class="axis" text-anchor="middle" transform="rotate(-90 12 %.1f)">%s</text>')
      :format(top + nr * rh / 2, top + nr * rh / 2, esc(M.fit(o.y_label or "", math.max(nr * rh, 40), 12)))
  end
  -- the colour legend: the scale from 0 to its top, NA in grey
  local ly, lx, steps = gy + 44, left, 10
  out[#out + 1] = ('<text x="%d" y="%d" class="legend" text-anchor="end">0</text>'):format(lx - 4, ly + 11)
  for i = 0, steps - 1 do
    out[#out + 1] = ('<rect x="%d" y="%d" width="16" height="12" fill="%s"/>'):format(lx + i * 16, ly, heat((i + 0.5) / steps * mx, mx))
  end
  local top_label = (above and "≥ " or "") .. fmt_tick(mx) .. (o.unit and (" " .. o.unit) or "")
  local tx = lx + steps * 16 + 4
  out[#out + 1] = ('<text x="%d" y="%d" class="legend">%s</text>'):format(tx, ly + 11, esc(top_label))
  tx = tx + math.ceil(width(top_label, 11)) + 16
  local na = o.na_label or "NA"
  out[#out + 1] = ('<rect x="%d" y="%d" width="12" height="12" fill="#eee" stroke="#ccc"/><text x="%d" y="%d" class="legend">%s</text>')
    :format(tx, ly, tx + 16, ly + 11, esc(na))
  tx = tx + math.ceil(width(na, 11)) + 32
  out[#out + 1] = ('<text x="%d" y="%d" class="legend">%s</text>'):format(tx, ly + 11,
    esc(M.fit(label_of(o.value_label or "value", o.unit), math.max(w - tx - 4, 40), 11)))
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

--- Swimlanes: o.lanes = {{name, intervals = {{s, e, kind, label}}}}, o.x0, o.x1 (same unit),
-- o.kinds = {kind -> colour}; the legend lists the kinds in name order.
function M.swimlanes(o)
  local n = #o.lanes
  local row = 20
  local w = o.width or 1000
  local lw = 0
  for _, lane in ipairs(o.lanes) do lw = math.max(lw, width(lane.name, 11)) end
  local left = math.min(math.ceil(lw + 12), math.floor(w * 0.4))
  local names = {}
  for kind in pairs(o.kinds or {}) do names[#names + 1] = kind end
  table.sort(names)
  local items = {}
  for i, kind in ipairs(names) do items[i] = { name = kind, colour = o.kinds[kind] } end
  local out = open_svg(w, 0, o)
  local top = heading(out, o, w, items)
  local h = top + n * row + 44
  out[1] = ('<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img">'):format(w, h, w, h)
  local xs = M.scale(0, (o.x1 - o.x0) > 0 and (o.x1 - o.x0) or 1, 8)
  local right = math.max(20, math.ceil(width(fmt_tick(xs.hi), 11) / 2 + 6))
  local pw = w - left - right
  local span = xs.hi
  for _, t in ipairs(xs.ticks) do
    local x = left + t / span * pw
    out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/><text x="%.1f" y="%d" class="tick" '
      .. 'text-anchor="middle">%s</text>'):format(x, top, x, top + n * row, x, top + n * row + 15, esc(fmt_tick(t)))
  end
  for i, lane in ipairs(o.lanes) do
    local y = top + (i - 1) * row
    out[#out + 1] = ('<text x="%d" y="%d" class="label" text-anchor="end">%s<title>%s</title></text>'):format(left - 6,
      y + 14, esc(M.fit(lane.name, left - 10, 11)), esc(lane.name))
    -- merge blocks closer than a pixel so a busy lane stays a small file
    local last_x, last_w
    local blocks = {}
    for _, iv in ipairs(lane.intervals) do
      local x = left + (iv[1] - o.x0) / span * pw
      local bw = math.max((iv[2] - iv[1]) / span * pw, 0.5)
      if last_x and x <= last_x + last_w + 0.5 and iv[3] == blocks[#blocks].kind then
        last_w = math.max(last_w, x + bw - last_x)
        blocks[#blocks].w = last_w
      else
        blocks[#blocks + 1] = { x = x, w = bw, kind = iv[3], label = iv[4] }
        last_x, last_w = x, bw
      end
    end
    for _, b in ipairs(blocks) do
      out[#out + 1] = ('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s">%s</rect>'):format(b.x, y + 3, b.w, row - 6,
        (o.kinds or {})[b.kind] or PALETTE[1], b.label and ("<title>" .. esc(b.label) .. "</title>") or "")
    end
  end
  out[#out + 1] = ('<text x="%.1f" y="%d" class="axis" text-anchor="middle">%s</text>'):format(left + pw / 2, h - 8,
    esc(M.fit(o.x_label or require("ascope.i18n").t("report.timeline.lanes_x"), w - 8, 12)))
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

return M
