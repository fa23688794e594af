--- timeline_report.html: the timeline results drawn as the layout (rules/layout_timeline.lua) says.
local svg = require "ascope.report.svg"
local html = require "ascope.report.html"
local layout_mod = require "ascope.report.layout"
local analysis = require "ascope.analysis.timeline"
local fmt = require "ascope.fmt"
local i18n = require "ascope.i18n"

local M = {}
local esc = html.escape

local function name(r) return r.role ~= "" and ("%s rank %s"):format(r.role, r.rank) or ("rank " .. r.rank) end
local function pct(x) return x and fmt.pct(x) or "n/a" end

local KINDS = {}

function KINDS.rank_table(res)
  local header = { "rank" }
  for _, k in ipairs(analysis.DASHBOARD_KEYS) do header[#header + 1] = k end
  header[#header + 1] = "step span ms"
  local rows = {}
  for _, r in ipairs(res.ranks) do
    local row = { name(r) }
    for _, k in ipairs(analysis.DASHBOARD_KEYS) do row[#row + 1] = r.dashboard[k] and pct(r.dashboard[k]) or "" end
    row[#row + 1] = r.step and r.step.span_ms
    rows[#rows + 1] = row
  end
  local out = { html.table(header, rows) }
  for _, f in ipairs(res.failed) do
    out[#out + 1] = ('<p class="warn">failed: rank %s (%s): %s</p>'):format(esc(f.rank or "?"), esc(f.role or ""), esc(f.reason))
  end
  return table.concat(out)
end

function KINDS.findings(_, _, r)
  if #r.findings == 0 then return "<p>" .. esc(i18n.pick({ en = "No rule fired.", zh = "没有规则命中。" })) .. "</p>" end
  local rows = {}
  for i, f in ipairs(r.findings) do
    rows[i] = { "⚠ " .. f.id, f.severity, f.finding, f.action or "" }
  end
  return html.table({ "rule", "severity", "finding", "action" }, rows)
end

local KIND_COLOURS = { device = "#3366cc", comm = "#dc3912", host = "#109618", other = "#999999" }

function KINDS.swimlanes(_, sec, r)
  if not r.swimlanes or #r.swimlanes == 0 then return nil end
  local lanes = {}
  for i, l in ipairs(r.swimlanes) do
    local iv = {}
    for k = 1, #l.starts do iv[k] = { l.starts[k], l.ends[k], l.kind } end
    lanes[i] = { name = l.name, intervals = iv }
  end
  return svg.swimlanes({ title = i18n.pick(sec.title), lanes = lanes, x0 = 0, x1 = r.step.span_ms, kinds = KIND_COLOURS,
                         x_label = "time since the step's first device task (ms)" })
end

function KINDS.lane_idle(res, sec, r)
  local labels, values, hot = {}, {}, {}
  -- the bars drawn hot are the lanes the lane_idle rule would name: its limit, from the rules
  local idle_limit
  local rules = res.rules or require("ascope.rules").load("timeline") or {}
  for _, rule in ipairs(rules.rules or {}) do
    if rule.metric == "max_lane_idle" and rule.op == ">" then idle_limit = rule.value end
  end
  for i = 1, math.min(#r.lanes, sec.top or 20) do
    local l = r.lanes[i]
    labels[i] = l.name
    values[i] = l.idle_ratio * 100
    hot[i] = l.kind == "device" and idle_limit ~= nil and l.idle_ratio > idle_limit
  end
  if #labels == 0 then return nil end
  return svg.bars({ title = i18n.pick(sec.title), labels = labels, values = values, unit = "%", value_label = "idle ratio",
                    highlight = hot })
end

function KINDS.overlap(_, sec, r)
  local ov = r.overlap
  if not ov then return nil end
  local labels, values = {}, {}
  for _, k in ipairs({ { "computing", ov.computing_ms }, { "communication", ov.communication_ms },
                       { "communication not overlapped", ov.not_overlapped_ms }, { "free", ov.free_ms } }) do
    if k[2] then
      labels[#labels + 1] = k[1]
      values[#values + 1] = k[2]
    end
  end
  return ("<p>overlap_ratio %s, exposed communication %s (from %s).</p>"):format(pct(ov.overlap_ratio),
    pct(ov.exposed_ratio), esc(ov.source)) .. svg.bars({ title = i18n.pick(sec.title), labels = labels, values = values,
    unit = "ms", value_label = "time in the step" })
end

function KINDS.critical_path(_, sec, r)
  local cp = r.critical_path
  if not cp or not cp.composition then return nil end
  local labels, values = {}, {}
  for c, t in pairs(cp.composition) do
    labels[#labels + 1] = c
    values[#values + 1] = t
  end
  local order = {}
  for i = 1, #labels do order[i] = i end
  table.sort(order, function(a, b) return values[a] > values[b] end)
  local l2, v2 = {}, {}
  for i, k in ipairs(order) do l2[i], v2[i] = labels[k], values[k] end
  l2[#l2 + 1], v2[#v2 + 1] = "free", cp.free_ms
  return ("<p>critical_path_ratio %s; longest chain %.3f ms over %d tasks of a %.3f ms span.</p>"):format(
    pct(cp.critical_path_ratio), cp.longest_path_ms, cp.longest_path_tasks, cp.span_ms)
    .. svg.bars({ title = i18n.pick(sec.title), labels = l2, values = v2, unit = "ms", value_label = "time on the path" })
end

function KINDS.steps(_, sec, r)
  local j = r.jitter
  if not j or not j.series then return nil end
  local long = {}
  for _, s in ipairs(j.long_tail) do long[tostring(s.step)] = true end
  local labels, values, hot = {}, {}, {}
  for i, id in ipairs(j.series.ids) do
    labels[i] = "step " .. tostring(id)
    values[i] = j.series.times[i]
    hot[i] = long[tostring(id)] or false
  end
  local out = { ("<p>step CV %s; mean %.3f ms, P95 %.3f ms; long-tail steps in red.</p>"):format(pct(j.cv), j.mean, j.p95),
                svg.bars({ title = i18n.pick(sec.title), labels = labels, values = values, unit = "ms",
                           value_label = "step time", highlight = hot }) }
  if j.series.comm then
    out[#out + 1] = svg.bars({ title = "communication per step", labels = labels, values = j.series.comm, unit = "ms",
                               value_label = (r.comm_jitter and r.comm_jitter.column or "communication") .. " per step" })
  end
  return table.concat(out)
end

function KINDS.hotspots(_, _, r)
  if not r.hotspots or #r.hotspots == 0 then return nil end
  local rows = {}
  for i, h in ipairs(r.hotspots) do rows[i] = { h.path_rank, h.name, h.path_ms, h.path_count, h.raw_ms, h.raw_rank } end
  return html.table({ "path rank", "operator", "ms on path", "count on path", "raw ms", "raw rank" }, rows)
end

function KINDS.dashboard(_, _, r)
  local rows = {}
  local fired = {}
  for _, f in ipairs(r.findings) do fired[f.metric] = true end
  for _, k in ipairs(analysis.DASHBOARD_KEYS) do
    local v = r.dashboard[k]
    if v ~= nil then rows[#rows + 1] = { k, ("%.4f"):format(v), pct(v) .. (fired[k] and " ⚠" or "") } end
  end
  return html.table({ "key", "value", "" }, rows)
end

function M.render(res, layout)
  return layout_mod.render(res, layout, {
    name = "timeline", kinds = KINDS, rank_name = name,
    per_rank = function(kind) return kind ~= "rank_table" end, -- the table of all ranks is drawn once
    rank_id = function(r) return r.rank end,
    intro = ("<p>Input <code>%s</code>: %d rank(s).</p>"):format(esc(res.input), #res.ranks),
  })
end

function M.write(res, path, layout_file)
  return layout_mod.write("timeline", M.render, res, path, layout_file)
end

return M
