--- memory_report.html: the memory results drawn as the layout (rules/layout_memory.lua) says.
local svg = require "ascope.report.svg"
local html = require "ascope.report.html"
local layout_mod = require "ascope.report.layout"
local fmt = require "ascope.fmt"
local i18n = require "ascope.i18n"
local column = require("ascope_core").column

local M = {}
local esc = html.escape

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
  peak_time_ms = function(r) return r.summary.peak and fmt.ms(r.summary.peak.time_ns) end,
}

local function sites_chart(title, sites, whole_label)
  local labels, values = {}, {}
  for i, s in ipairs(sites) do
    labels[i] = s.call_site
    values[i] = s.size_kb / 1024
  end
  if #labels == 0 then return '<p class="note">' .. esc(i18n.pick({ en = "None.", zh = "无。" })) .. "</p>" end
  return svg.bars({ title = title, labels = labels, values = values, unit = "MB", value_label = whole_label })
end

local KINDS = {}

function KINDS.rank_table(res, sec)
  local header, rows = {}, {}
  for i, c in ipairs(sec.columns) do
    if not RANK_COLUMNS[c] then error(("layout memory: section %s: unknown column %q"):format(sec.id, c), 0) end
    header[i] = c
  end
  for _, r in ipairs(res.ranks) do
    local row = {}
    for i, c in ipairs(sec.columns) do row[i] = RANK_COLUMNS[c](r) end
    rows[#rows + 1] = row
  end
  local failed = {}
  for _, f in ipairs(res.failed) do
    failed[#failed + 1] = ('<p class="warn">failed: rank %s (%s): %s</p>'):format(esc(f.rank or "?"), esc(f.role), esc(f.reason))
  end
  return html.table(header, rows) .. table.concat(failed)
end

function KINDS.peak_bars(res, sec)
  if #res.ranks < 2 then return nil end
  local labels, values = {}, {}
  for i, r in ipairs(res.ranks) do
    labels[i] = rank_name(r)
    values[i] = r.summary.peak and r.summary.peak.allocated_mb or 0
  end
  return svg.bars({ title = i18n.pick(sec.title), labels = labels, values = values, unit = "MB", value_label = "peak allocated" })
end

local SERIES = { allocated = "allocated_mb", reserved = "reserved_mb", active = "active_mb" }

function KINDS.memory_over_time(_, sec, r)
  local order = r.start_ns:order()
  local t0 = r.start_ns[order[1]] or 0
  local series = {}
  for _, name in ipairs(sec.series) do
    local col = r[SERIES[name] or ""]
    if not col then error(("layout memory: section %s: unknown series %q"):format(sec.id, name), 0) end
    -- reduced in C to the min and max of each pixel column, then moved to ms from the start
    local xs, ys = column.downsample(r.start_ns, col, order, 900)
    for k = 1, #xs do xs[k] = (xs[k] - t0) / 1e6 end
    if #xs > 0 then series[#series + 1] = { name = name, x = xs, y = ys, step = true } end
  end
  if #series == 0 then return '<p class="note">no memory totals in operator_memory.csv</p>' end
  local marks = {}
  if r.summary.peak then
    marks[1] = { x = (r.summary.peak.time_ns - t0) / 1e6,
                 label = ("peak %.1f MB at %s ms"):format(r.summary.peak.allocated_mb, fmt.ms(r.summary.peak.time_ns)) }
  end
  return svg.lines({ title = i18n.pick(sec.title) .. " - " .. rank_name(r), x_label = "time since the first event",
                     x_unit = "ms", y_label = "memory", y_unit = "MB", series = series, marks = marks })
end

local function top(list, n)
  local out = {}
  for i = 1, math.min(#list, n or 15) do out[i] = list[i] end
  return out
end

function KINDS.live_at_peak(_, sec, r)
  local l = r.summary.live_at_peak
  if not r.summary.peak then return nil end
  return ("<p>%d allocation(s), %.1f MB alive at the peak (%.1f MB at %s ms).</p>"):format(l.count, l.size_kb / 1024,
    r.summary.peak.allocated_mb, fmt.ms(r.summary.peak.time_ns)) .. sites_chart(i18n.pick(sec.title), top(l.sites, sec.top),
    "size alive at the peak")
end

function KINDS.top_sites(_, sec, r)
  return sites_chart(i18n.pick(sec.title), top(r.summary.top_call_sites.sites, sec.top), "bytes allocated")
end

function KINDS.leaks(_, sec, r)
  local l = r.summary.leak_suspects
  local rows = {}
  for i, s in ipairs(top(l.sites, sec.top)) do rows[i] = { s.call_site, s.size_kb / 1024, s.count } end
  return ("<p>%.1f MB never released.</p>"):format(l.size_kb / 1024) .. html.table({ "call site", "MB", "count" }, rows)
end

local PER_RANK = { memory_over_time = true, live_at_peak = true, top_sites = true, leaks = true }

function M.render(res, layout)
  return layout_mod.render(res, layout, {
    name = "memory", kinds = KINDS, per_rank = function(kind) return PER_RANK[kind] end, rank_name = rank_name,
    rank_id = function(r) return r.role .. "-" .. r.rank end,
    intro = ("<p>Input <code>%s</code>; match mode <code>%s</code>.</p>"):format(esc(res.input), esc(res.match)),
  })
end

function M.write(res, path, layout_file)
  return layout_mod.write("memory", M.render, res, path, layout_file)
end

return M
