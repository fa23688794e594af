--- memory_report.html: the memory results drawn as the layout (rules/layout_memory.lua) says.
local svg = require "ascope.report.svg"
local html = require "ascope.report.html"
local layout_mod = require "ascope.report.layout"
local fmt = require "ascope.fmt"
local i18n = require "ascope.i18n"
local analysis = require "ascope.analysis.memory"
local show = require("ascope.labels").show
local column = require("ascope_core").column

local M = {}
local esc = html.escape
local t = i18n.t
local header = html.header

local function rank_name(r) return ("%s rank %s"):format(r.role, r.rank) end

local RANK_COLUMNS = {
  role = function(r) return r.role end,
  rank = function(r) return r.rank end,
  events = function(r) return r.summary.events end,
  allocations = function(r) return r.summary.allocations end,
  releases = function(r) return r.summary.releases end,
  match_rate = function(r) return fmt.pct(r.summary.match_rate) end,
  suspect_matches = function(r) return r.summary.suspect_latest_matches end,
  peak_mb = function(r) return r.summary.peak and r.summary.peak.allocated_mb end,
  peak_component = function(r) return r.summary.peak and r.summary.peak.component end,
  peak_time_ms = function(r) return r.summary.peak and fmt.ms(r.summary.peak.time_ns) end,
  partial = function(r) return #r.problems > 0 and table.concat(r.problems, "; ") or "" end,
}

local function sites_chart(title, sites, whole_label)
  local labels, values = {}, {}
  for i, s in ipairs(sites) do
    labels[i] = fmt.label(show("call_site", s.call_site))
    values[i] = s.size_kb / 1024
  end
  if #labels == 0 then return '<p class="note">' .. esc(t("report.none")) .. "</p>" end
  return svg.bars({ title = title, labels = labels, values = values, unit = "MB", value_label = whole_label })
end

local KINDS = {}

function KINDS.rank_table(res, sec)
  local head, rows = {}, {}
  for i, c in ipairs(sec.columns) do
    if not RANK_COLUMNS[c] then error(t("layout.unknown_column", "memory", sec.id, c), 0) end
    head[i] = t("report.memory.col." .. c)
  end
  for _, r in ipairs(res.ranks) do
    local row = {}
    for i, c in ipairs(sec.columns) do row[i] = RANK_COLUMNS[c](r) end
    rows[#rows + 1] = row
  end
  local failed = {}
  for _, f in ipairs(res.failed) do
    failed[#failed + 1] = ('<p class="warn">%s</p>'):format(esc(t("report.failed_rank", tostring(f.rank or "?"), f.role,
      f.reason)))
  end
  return html.table(head, rows) .. table.concat(failed)
end

function KINDS.peak_bars(res, sec)
  if #res.ranks < 2 then return nil end
  local labels, values = {}, {}
  for i, r in ipairs(res.ranks) do
    local peak = r.summary.peak
    labels[i] = rank_name(r) .. (peak and " " .. peak.component or "")
    values[i] = peak and peak.allocated_mb or 0
  end
  return svg.bars({ title = i18n.t(sec.title), labels = labels, values = values, unit = "MB",
                   value_label = t("report.memory.peak_allocated") })
end

local SERIES = { allocated = "allocated_mb", reserved = "reserved_mb", active = "active_mb" }

-- the rank's first instant (operator rows and memory_record samples): time 0 of its charts
local function first_ns(r)
  local _, _, lo = r.start_ns:stats()
  if r.record then
    local _, _, rlo = r.record.ts_ns:stats()
    if rlo and (not lo or rlo < lo) then lo = rlo end
  end
  return lo or 0
end

-- series {name, x (ms since t0), y} of the given columns over some rows, reduced in C to the min
-- and max of each pixel column; a missing value is no point
local function series_of(ts, cols, rows, names, t0, prefix)
  local order = analysis.time_order(ts, rows)
  local out = {}
  for _, name in ipairs(names) do
    local col = cols[SERIES[name] or ""]
    if not col then return nil, name end
    local xs, ys = column.downsample(ts, col, order, 900)
    for k = 1, #xs do xs[k] = (xs[k] - t0) / 1e6 end
    if #xs > 0 then
      out[#out + 1] = { name = (prefix or "") .. t("report.memory.series." .. name), x = xs, y = ys, step = true }
    end
  end
  return out
end

local function caption(t0)
  return ('<p class="note">%s</p>'):format(esc(t("report.memory.time_zero", fmt.ms(t0))))
end

-- y from 0, with room above the highest line for the peak label
local function chart(title, series, marks, top_mb)
  return svg.lines({ title = title, x_label = t("report.memory.time_x"), x_unit = "ms", y_label = t("report.memory.memory_y"),
                     y_unit = "MB", series = series, marks = marks, y_min = 0, y_max = top_mb and top_mb * 1.15 })
end

local function highest(series)
  local hi
  for _, s in ipairs(series) do
    for _, y in ipairs(s.y) do if not hi or y > hi then hi = y end end
  end
  return hi
end

-- operator_memory.csv running totals, one chart per component (pool): the pools' totals are
-- separate numbers and drawn on one axis they would read as one jumping line
function KINDS.memory_over_time(_, sec, r)
  local t0 = first_ns(r)
  local out = {}
  for _, c in ipairs(r.summary.components) do
    local series, bad = series_of(r.start_ns, r, c.rows, sec.series, t0)
    if not series then error(t("layout.unknown_series", "memory", sec.id, bad), 0) end
    if #series > 0 then
      local marks = {}
      if c.peak then
        marks[1] = { x = (c.peak.time_ns - t0) / 1e6, label = t("report.memory.peak_mark", c.peak.allocated_mb) }
      end
      out[#out + 1] = chart(("%s - %s %s (operator_memory.csv)"):format(i18n.t(sec.title), rank_name(r), c.component),
        series, marks, highest(series))
    end
  end
  if #out == 0 then return '<p class="note">' .. esc(t("report.memory.no_totals")) .. "</p>" end
  return table.concat(out, "\n") .. caption(t0)
end

-- memory_record.csv: every component's samples on one chart (APP, PTA, GE, PTA+GE)
function KINDS.process_memory(_, sec, r)
  if not r.record or #r.summary.record == 0 then return nil end
  local t0 = first_ns(r)
  local series = {}
  for _, e in ipairs(r.summary.record) do
    local s, bad = series_of(r.record.ts_ns, r.record, e.rows, sec.series, t0, e.component .. " ")
    if not s then error(t("layout.unknown_series", "memory", sec.id, bad), 0) end
    for _, one in ipairs(s) do series[#series + 1] = one end
  end
  if #series == 0 then return nil end
  return chart(i18n.t(sec.title) .. " - " .. rank_name(r), series, {}, highest(series)) .. caption(t0)
end

local function top(list, n)
  local out = {}
  for i = 1, math.min(#list, n or 15) do out[i] = list[i] end
  return out
end

function KINDS.live_at_peak(_, sec, r)
  local out = {}
  for _, c in ipairs(r.summary.components) do
    local l = c.live_at_peak
    if c.peak then
      out[#out + 1] = ("<h4>%s</h4><p>%s</p>"):format(esc(c.component), esc(t("report.memory.peak_note", c.peak.allocated_mb,
        fmt.ms(c.peak.time_ns), l.count, l.size_kb / 1024, l.no_stack_kb / 1024, l.earlier_kb / 1024)
        .. (c.peak.at == "release" and " " .. t("report.memory.peak_at_release") or "")))
        .. sites_chart(i18n.t(sec.title) .. " - " .. c.component, top(l.sites, sec.top), t("report.memory.alive_at_peak"))
    end
  end
  if #out == 0 then return nil end
  return table.concat(out, "\n")
end

-- how far to trust the attribution: the allocated bytes without a call stack, per component
function KINDS.without_stack(_, sec, r)
  local rows = {}
  for _, c in ipairs(r.summary.components) do
    local ns = c.no_stack
    local names = {}
    for i, o in ipairs(top(ns.operators, sec.top or 5)) do names[i] = ("%s (%.1f MB)"):format(o.name, o.size_kb / 1024) end
    rows[#rows + 1] = { c.component, fmt.pct(ns.share), ns.size_kb / 1024, ns.count, table.concat(names, ", ") }
  end
  return html.table(header("report.memory.without_stack_header"), rows)
end

function KINDS.top_sites(_, sec, r)
  return sites_chart(i18n.t(sec.title), top(r.summary.top_call_sites.sites, sec.top), t("report.memory.bytes_allocated"))
end

function KINDS.leaks(_, sec, r)
  local l = r.summary.leak_suspects
  local rows = {}
  for i, s in ipairs(top(l.sites, sec.top)) do rows[i] = { fmt.label(show("call_site", s.call_site)), s.size_kb / 1024, s.count } end
  return "<p>" .. esc(t("report.memory.never_released", l.size_kb / 1024)) .. "</p>"
    .. html.table(header("report.memory.leaks_header"), rows)
end

local PER_RANK = { memory_over_time = true, process_memory = true, live_at_peak = true, without_stack = true,
                   top_sites = true, leaks = true }

function M.render(res, layout)
  return layout_mod.render(res, layout, {
    name = "memory", kinds = KINDS, per_rank = function(kind) return PER_RANK[kind] end, rank_name = rank_name,
    rank_id = function(r) return r.role .. "-" .. r.rank end,
    intro = "<p>" .. esc(t("report.memory.intro")):format("<code>" .. esc(res.input) .. "</code>",
      "<code>" .. esc(res.match) .. "</code>") .. "</p>",
  })
end

function M.write(res, path, layout_file)
  return layout_mod.write("memory", M.render, res, path, layout_file)
end

return M
