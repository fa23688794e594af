--- HTML pages of the field diagnostics: opjitter (jitter heat map, per-card durations of the
-- worst operators, aiv outliers), moe (card x core status grids, run counts) and diagnose (the
-- anomalies list with both), and the wait-for graph of moe.
local svg = require "ascope.report.svg"
local html = require "ascope.report.html"
local writer = require "ascope.report.writer"
local i18n = require "ascope.i18n"
local column = require("ascope_core").column
local jitter = require "ascope.analysis.opjitter"

local M = {}
local esc = html.escape
local t = i18n.t
local header = html.header

local function section(id, title, body)
  return ('<section id="%s"><h2>%s</h2>%s</section>'):format(esc(id), esc(title), body)
end

--- opjitter sections: heat map of jitter (type x call), durations per card of the worst types.
function M.opjitter_sections(res, top_types, max_calls)
  top_types, max_calls = top_types or 30, max_calls or 200
  local avg = {}
  for _, a in ipairs(res.avg) do avg[#avg + 1] = a end
  table.sort(avg, function(a, b)
    if (a.avg_jitter or -1) ~= (b.avg_jitter or -1) then return (a.avg_jitter or -1) > (b.avg_jitter or -1) end
    return a.type < b.type
  end)
  local types, type_index = {}, {}
  for i = 1, math.min(#avg, top_types) do
    types[i] = avg[i].type
    type_index[avg[i].type] = i
  end
  local cell, ncalls = {}, 0
  for _, r in ipairs(res.rows) do
    local ti = type_index[r.type]
    if ti and r.call < max_calls then
      cell[ti] = cell[ti] or {}
      cell[ti][r.call + 1] = r.jitter
      if r.call + 1 > ncalls then ncalls = r.call + 1 end
    end
  end
  local cols = {}
  for c = 1, ncalls do cols[c] = tostring(c - 1) end
  local parts = {}
  parts[#parts + 1] = section("jitter", i18n.t("report.field.jitter"),
    #types == 0 and "<p>" .. esc(t("report.no_operator")) .. "</p>" or svg.heatmap({ title = t("report.opjitter.heat_title"),
      rows = types, cols = cols, unit = "us", value_label = t("report.opjitter.jitter"), x_label = t("report.opjitter.heat_x"),
      y_label = t("report.opjitter.operator"), na_label = t("report.na"), col_name = t("report.opjitter.call"),
      in_scale = function(_, c) return c > 1 end, -- call 0 is the warm-up, left out of the statistics
      value = function(r, c) return cell[r] and cell[r][c] end }))
  -- durations per card of the three worst operators, from the cards' columns: every call of the
  -- type on that card, reduced in C to what 900 pixels can show
  local worst = {}
  for i = 1, math.min(3, #types) do worst[i] = { type = types[i], series = {} } end
  local ranges = {}
  local function range(n) -- the call indexes 0 .. n-1 as a column, shared by series of one length
    if not ranges[n] then
      local list = {}
      for i = 1, n do list[i] = i - 1 end
      ranges[n] = column.new("integer", list)
    end
    return ranges[n]
  end
  local is_worst = {}
  for _, w in ipairs(worst) do is_worst[w.type] = true end
  for _, c in ipairs(res.cards) do
    if c.data and #worst > 0 then
      local _, rows_of = jitter.rows_by_type(c.data, function(name) return is_worst[name] end)
      for _, w in ipairs(worst) do
        local r = rows_of[w.type]
        if r then
          local xs, ys = column.downsample(range(#r), c.data.duration:take(r), nil, 900)
          w.series[#w.series + 1] = { name = t("report.card", c.card), x = xs, y = ys }
        end
      end
    end
  end
  for _, w in ipairs(worst) do
    parts[#parts + 1] = section("durations-" .. w.type, i18n.t("report.field.durations") .. w.type,
      svg.lines({ title = w.type, x_label = t("report.opjitter.durations_x"), y_label = t("report.opjitter.duration"),
                  y_unit = "us", series = w.series, x_integer = true, range_from_x = 1 }))
  end
  local rows = {}
  for i, v in ipairs(res.aiv) do
    rows[i] = { v.card, v.type, v.call, v.column, v.value == nil and "NA" or v.value, v.mean, v.low, v.high, v.kind }
  end
  local more = {} -- the violations counted, not listed
  for _, g in ipairs(res.aiv_unlisted or {}) do
    more[#more + 1] = ("<li>%s</li>"):format(esc(jitter.unlisted_text(g)))
  end
  parts[#parts + 1] = section("aiv", i18n.t("report.field.aiv"),
    (#rows == 0 and "<p>" .. esc(t("report.none")) .. "</p>" or html.table(header("report.opjitter.aiv_header"), rows))
    .. (#more > 0 and "<ul>" .. table.concat(more) .. "</ul>" or ""))
  local missing = {}
  for _, c in ipairs(res.missing) do missing[#missing + 1] = tostring(c) end
  if #missing > 0 then
    table.insert(parts, 1, ('<p class="warn">%s</p>'):format(esc(t("report.opjitter.missing", table.concat(missing, ", ")))))
  end
  return parts
end

--- moe sections: who waits for whom, per side a card x core grid (missing slots per core), run
-- counts per card.
function M.moe_sections(res)
  local parts = { M.wait_for_section(res) }
  for _, side in ipairs({ "dispatch", "combine" }) do
    local rows, maxc = {}, 0
    for i, c in ipairs(res.cards) do
      rows[i] = t("report.card", c.card)
      if c[side].cores > maxc then maxc = c[side].cores end
    end
    local cols = {}
    for k = 1, maxc do cols[k] = tostring(k - 1) end
    parts[#parts + 1] = section("grid-" .. side, i18n.t("report.field.not_arrived") .. side,
      #rows == 0 and "<p>" .. esc(t("report.no_card")) .. "</p>" or svg.heatmap({ title = t("report.moe.grid_title", side),
        rows = rows, cols = cols, value_label = t("report.moe.slots"), x_label = t("report.moe.core"),
        y_label = t("report.moe.card"), na_label = t("report.not_in_use"), col_name = t("report.moe.core"),
        value = function(r, k)
          local s = res.cards[r][side]
          if k > s.cores then return nil end
          local miss = s.missing_slots and s.missing_slots[k - 1]
          return miss and #miss or 0
        end }))
  end
  local labels, d, cvals = {}, {}, {}
  for i, c in ipairs(res.cards) do
    labels[i] = t("report.card", c.card) .. (c.stuck_in and (" (" .. c.stuck_in .. ")") or "")
    d[i] = c.dispatch.ran ~= false and c.dispatch.run_count or 0
    cvals[i] = c.combine.ran ~= false and c.combine.run_count or 0
  end
  if #labels > 0 then
    parts[#parts + 1] = section("runs", i18n.t("report.field.runs"),
      svg.bars({ title = t("report.moe.runs_title", "dispatch"), labels = labels, values = d, integer = true,
                 value_label = t("report.moe.run_count", "dispatch") })
      .. svg.bars({ title = t("report.moe.runs_title", "combine"), labels = labels, values = cvals, integer = true,
                    value_label = t("report.moe.run_count", "combine") }))
  end
  return parts
end

local MAX_DRAWN = 64 -- cards drawn in the wait-for picture; beyond, the table alone

-- The wait-for graph as a picture: one box per card (red: a root card, amber: waiting), an
-- arrow from each waiting card to every card it waits for.
local function wait_for_svg(cards, edges, roots)
  local n = #cards
  local per_row = math.min(n, 8)
  local w, h = math.max(per_row * 130 + 40, 360), math.ceil(n / per_row) * 120 + 50
  local at, root, waiting = {}, {}, {}
  for _, r in ipairs(roots) do root[r] = true end
  for _, e in ipairs(edges) do waiting[e.card] = true end
  for i, card in ipairs(cards) do
    at[card] = { 20 + ((i - 1) % per_row) * 130 + 45, 100 + ((i - 1) // per_row) * 120 }
  end
  local title = t("report.moe.wait_title")
  local out = { ('<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img"><title>%s</title>'):format(w, h,
    w, h, esc(title)), ('<text x="4" y="16" class="ctitle">%s</text>'):format(esc(title)),
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
    .. 'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>' }
  for _, e in ipairs(edges) do
    local a = at[e.card]
    for _, peer in ipairs(e.waits_for) do
      local b = at[peer]
      if a and b and peer ~= e.card then
        -- an arc above the boxes, higher the farther apart the cards are
        local lift = 24 + math.abs(a[1] - b[1]) // 6 + math.abs(a[2] - b[2]) // 4
        local mx, my = (a[1] + b[1]) // 2, math.max(26, math.min(a[2], b[2]) - 18 - lift)
        out[#out + 1] = ('<path d="M%d,%d Q%d,%d %d,%d" fill="none" stroke="#555" stroke-width="1.5" '
          .. 'marker-end="url(#arrow)"><title>%s</title></path>'):format(a[1], a[2] - 18, mx, my, b[1] + 8, b[2] - 20,
          esc(t("report.moe.waits_for", e.card, e.side, peer)))
      end
    end
  end
  for _, card in ipairs(cards) do
    local p = at[card]
    local fill = root[card] and "#dc3912" or waiting[card] and "#ff9900" or "#dddddd"
    out[#out + 1] = ('<rect x="%d" y="%d" width="90" height="36" rx="6" fill="%s"><title>%s</title></rect>'
      .. '<text x="%d" y="%d" text-anchor="middle">%s</text>'):format(p[1] - 45, p[2] - 18, fill,
      esc(t(root[card] and "report.moe.root" or waiting[card] and "report.moe.waiting" or "report.moe.not_waiting")),
      p[1], p[2] + 5, esc(t("report.card", card)))
  end
  out[#out + 1] = "</svg>"
  return table.concat(out)
end

--- The wait-for section of moe: who waits for whom, drawn, with the root cards.
function M.wait_for_section(res)
  local cross = res.cross or {}
  local edges, roots = cross.wait_for or {}, cross.root_cards or {}
  local title = i18n.t("report.field.wait_for")
  if #edges == 0 then
    return section("wait-for", title, "<p>" .. esc(i18n.t("moe.verdict_healthy")) .. "</p>")
  end
  local cards, seen = {}, {}
  local function add(card) if not seen[card] then seen[card], cards[#cards + 1] = true, card end end
  for _, c in ipairs(res.cards) do add(c.card) end
  for _, e in ipairs(edges) do for _, p in ipairs(e.waits_for) do add(p) end end
  table.sort(cards)
  local rows = {}
  for i, e in ipairs(edges) do
    local peers = {}
    for _, p in ipairs(e.waits_for) do peers[#peers + 1] = tostring(p) end
    local cores = {}
    for _, c in ipairs(e.cores) do cores[#cores + 1] = tostring(c) end
    rows[i] = { e.card, e.side, table.concat(cores, ","), table.concat(peers, ","), e.slots }
  end
  local root_text = {}
  for _, r in ipairs(roots) do root_text[#root_text + 1] = tostring(r) end
  local body = ("<p>%s: %s</p>"):format(esc(i18n.t("report.field.root_cards")),
    esc(#roots > 0 and table.concat(root_text, ", ") or "-"))
  if #cards <= MAX_DRAWN then body = body .. wait_for_svg(cards, edges, roots) end
  return section("wait-for", title, body .. html.table(header("report.moe.wait_header"), rows))
end

--- The anomalies list: {severity, source, message} or moe's {severity, card, analysis, message}.
function M.anomalies_section(list)
  local rows = {}
  for _, a in ipairs(list) do
    if a.severity ~= "DETAIL" then
      rows[#rows + 1] = { a.severity, a.source or t("report.where_card", tostring(a.card or "-"), tostring(a.analysis)),
                          a.message }
    end
  end
  return section("anomalies", i18n.t("report.field.anomalies"),
    #rows == 0 and "<p>" .. esc(t("report.none")) .. "</p>" or html.table(header("report.anomalies_header"), rows))
end

function M.write(path, title, parts)
  local w, err = writer.open(path)
  if not w then return nil, err end
  w:write(html.page(title, parts, i18n.lang()))
  return w:close()
end

return M
