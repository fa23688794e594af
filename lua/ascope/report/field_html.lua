--- HTML pages of the field diagnostics: opjitter (jitter heat map, per-card durations of the
-- worst operators, aiv outliers), moe (card x core status grids, run counts) and diagnose (the
-- anomalies list with both).
local svg = require "ascope.report.svg"
local html = require "ascope.report.html"
local writer = require "ascope.report.writer"
local i18n = require "ascope.i18n"
local column = require("ascope_core").column

local M = {}
local esc = html.escape

local function section(id, title, body)
  return ('<section id="%s"><h2>%s</h2>%s</section>'):format(esc(id), esc(title), body)
end

--- opjitter sections: heat map of jitter (type x call), durations per card of the worst types.
function M.opjitter_sections(res, top_types, max_calls)
  top_types, max_calls = top_types or 30, max_calls or 200
  local avg = {}
  for _, a in ipairs(res.avg) do avg[#avg + 1] = a end
  table.sort(avg, function(a, b) return (a.avg_jitter or -1) > (b.avg_jitter or -1) end)
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
  parts[#parts + 1] = section("jitter", i18n.pick({ en = "Jitter by operator and call", zh = "各算子各次调用的抖动" }),
    #types == 0 and "<p>No operator.</p>" or svg.heatmap({ title = "jitter", rows = types, cols = cols, unit = "us",
      value_label = "jitter = max - min over cards", x_label = "call index (0 = first call)",
      value = function(r, c) return cell[r] and cell[r][c] end }))
  -- durations per card of the three worst operators, from the cards' columns: every call of the
  -- type on that card, reduced in C to what 900 pixels can show
  local worst = {}
  for i = 1, math.min(3, #types) do worst[i] = { type = types[i], series = {} } end
  local ranges = {}
  local function range(n) -- the call indexes 0 .. n-1 as a column, shared by series of one length
    if not ranges[n] then
      local t = {}
      for i = 1, n do t[i] = i - 1 end
      ranges[n] = column.new("integer", t)
    end
    return ranges[n]
  end
  for _, c in ipairs(res.cards) do
    if c.data and #worst > 0 then
      local _, values, rows = column.group(c.data.type)
      local rows_of = {}
      for i, v in ipairs(values) do if v[1] then rows_of[v[1]] = rows[i] end end
      for _, w in ipairs(worst) do
        local r = rows_of[w.type]
        if r then
          local xs, ys = column.downsample(range(#r), c.data.duration:take(r), nil, 900)
          w.series[#w.series + 1] = { name = "card " .. c.card, x = xs, y = ys }
        end
      end
    end
  end
  for _, w in ipairs(worst) do
    parts[#parts + 1] = section("durations-" .. w.type, i18n.pick({ en = "Durations per card: ", zh = "各卡耗时：" }) .. w.type,
      svg.lines({ title = w.type, x_label = "call index", y_label = "duration", y_unit = "us", series = w.series }))
  end
  local rows = {}
  for i, v in ipairs(res.aiv) do
    rows[i] = { v.card, v.type, v.call, v.column, v.value == nil and "NA" or v.value, v.mean, v.low, v.high, v.kind }
  end
  parts[#parts + 1] = section("aiv", i18n.pick({ en = "aiv outliers", zh = "aiv 指标异常" }),
    #rows == 0 and "<p>None.</p>" or html.table({ "card", "type", "call", "column", "value", "mean", "low", "high", "kind" },
      rows))
  local missing = {}
  for _, c in ipairs(res.missing) do missing[#missing + 1] = tostring(c) end
  if #missing > 0 then
    table.insert(parts, 1, ('<p class="warn">cards without profiling data: %s</p>'):format(esc(table.concat(missing, ", "))))
  end
  return parts
end

--- moe sections: per side a card x core grid (missing slots per core), run counts per card.
function M.moe_sections(res)
  local parts = {}
  for _, side in ipairs({ "dispatch", "combine" }) do
    local rows, maxc = {}, 0
    for i, c in ipairs(res.cards) do
      rows[i] = "card " .. c.card
      if c[side].cores > maxc then maxc = c[side].cores end
    end
    local cols = {}
    for k = 1, maxc do cols[k] = "core " .. (k - 1) end
    parts[#parts + 1] = section("grid-" .. side, i18n.pick({ en = "Status slots not arrived: ", zh = "未到达的状态位：" }) .. side,
      #rows == 0 and "<p>No card.</p>" or svg.heatmap({ title = side, rows = rows, cols = cols, unit = "slots",
        value_label = "slots not arrived (grey: core not in use)", x_label = "core",
        value = function(r, k)
          local s = res.cards[r][side]
          if k > s.cores then return nil end
          local miss = s.missing_slots and s.missing_slots[k - 1]
          return miss and #miss or 0
        end }))
  end
  local labels, d, cvals = {}, {}, {}
  for i, c in ipairs(res.cards) do
    labels[i] = ("card %d %s"):format(c.card, c.stuck_in and ("(" .. c.stuck_in .. ")") or "")
    d[i] = c.dispatch.run_count or 0
    cvals[i] = c.combine.run_count or 0
  end
  if #labels > 0 then
    parts[#parts + 1] = section("runs", i18n.pick({ en = "Run counts per card", zh = "各卡执行次数" }),
      svg.bars({ title = "dispatch", labels = labels, values = d, value_label = "dispatch run count" })
      .. svg.bars({ title = "combine", labels = labels, values = cvals, value_label = "combine run count" }))
  end
  return parts
end

--- The anomalies list: {severity, source, message} or moe's {severity, card, analysis, message}.
function M.anomalies_section(list)
  local rows = {}
  for _, a in ipairs(list) do
    if a.severity ~= "DETAIL" then
      rows[#rows + 1] = { a.severity, a.source or ("card " .. tostring(a.card or "-") .. " / " .. tostring(a.analysis)),
                          a.message }
    end
  end
  return section("anomalies", i18n.pick({ en = "Anomalies", zh = "异常汇总" }),
    #rows == 0 and "<p>None.</p>" or html.table({ "severity", "where", "message" }, rows))
end

function M.write(path, title, parts)
  local w, err = writer.open(path)
  if not w then return nil, err end
  w:write(html.page(title, parts, i18n.lang()))
  return w:close()
end

return M
