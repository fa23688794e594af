--- timeline_report.html: the timeline results drawn as the layout (rules/layout_timeline.lua) says.
local svg = require "ascope.report.svg"
local html = require "ascope.report.html"
local layout_mod = require "ascope.report.layout"
local analysis = require "ascope.analysis.timeline"
local report = require "ascope.report.timeline"
local fmt = require "ascope.fmt"
local i18n = require "ascope.i18n"

local M = {}
local esc = html.escape

local t = i18n.t
local header = html.header

local function name(r) return r.role ~= "" and ("%s rank %s"):format(r.role, r.rank) or ("rank " .. r.rank) end
local function pct(x) return x and fmt.pct(x) or "n/a" end

-- more steps than this are drawn as a line (one point per step) rather than a bar each
local MAX_STEP_BARS = 60

local KINDS = {}

function KINDS.rank_table(res)
  local head = { t("report.timeline.rank") }
  for _, k in ipairs(analysis.DASHBOARD_KEYS) do head[#head + 1] = k end
  head[#head + 1] = t("report.timeline.step_ms")
  local rows = {}
  for _, r in ipairs(res.ranks) do
    local row = { name(r) }
    for _, k in ipairs(analysis.DASHBOARD_KEYS) do row[#row + 1] = r.dashboard[k] and pct(r.dashboard[k]) or "" end
    row[#row + 1] = report.step_ms(r)
    rows[#rows + 1] = row
  end
  local out = { html.table(head, rows) }
  for _, f in ipairs(res.failed) do
    out[#out + 1] = ('<p class="warn">%s</p>'):format(esc(t("report.failed_rank", tostring(f.rank or "?"), f.role or "",
      f.reason)))
  end
  return table.concat(out)
end

local function value_text(v)
  if type(v) ~= "number" then return tostring(v) end
  if v == math.floor(v) and math.abs(v) < 1e15 then return ("%d"):format(v) end
  return ("%.4g"):format(v)
end

-- Every rule that fired, once, with the ranks it fired on (and each rank's value); the finding,
-- action and evidence are those of the first of them.
function KINDS.findings(res)
  local by, order, roles, nroles = {}, {}, {}, 0
  for _, r in ipairs(res.ranks) do
    if not roles[r.role] then roles[r.role], nroles = true, nroles + 1 end
  end
  -- the role is worth its room only when the ranks have several
  local function who(r) return nroles > 1 and name(r) or ("rank " .. r.rank) end
  for _, r in ipairs(res.ranks) do
    for _, f in ipairs(r.findings) do
      local g = by[f.id]
      if not g then
        g = { first = f, ranks = {} }
        by[f.id] = g
        order[#order + 1] = f.id
      end
      g.ranks[#g.ranks + 1] = t("report.timeline.finding_ranks", who(r), value_text(f.value))
    end
  end
  if #order == 0 then return "<p>" .. esc(t("report.timeline.no_rule")) .. "</p>" end
  local sev = { error = 1, warning = 2, info = 3 }
  table.sort(order, function(a, b)
    local sa, sb = sev[by[a].first.severity] or 9, sev[by[b].first.severity] or 9
    if sa ~= sb then return sa < sb end
    return a < b
  end)
  local rows = {}
  for i, id in ipairs(order) do
    local f = by[id].first
    rows[i] = { "⚠ " .. f.id, f.severity, table.concat(by[id].ranks, "; "), f.finding, f.action or "",
                report.evidence_text(f.evidence) }
  end
  return html.table(header("report.timeline.findings_header"), rows)
end

local KIND_COLOURS = { device = "#3366cc", comm = "#dc3912", host = "#109618", other = "#999999" }

function KINDS.swimlanes(_, sec, r)
  if not r.swimlanes or #r.swimlanes == 0 then return nil end
  local label, kinds = {}, {}
  for kind, colour in pairs(KIND_COLOURS) do
    label[kind] = t("report.timeline.kind." .. kind)
    kinds[label[kind]] = colour
  end
  local lanes = {}
  for i, l in ipairs(r.swimlanes) do
    local iv = {}
    for k = 1, #l.starts do iv[k] = { l.starts[k], l.ends[k], label[l.kind] or l.kind } end
    lanes[i] = { name = l.name, intervals = iv }
  end
  local prep = r.step.preparing_ms or 0
  local note = ("<p>%s</p>"):format(esc(t("report.timeline.lanes_note", r.step.id or t("report.timeline.whole_trace"), prep,
    r.step.stage_ms)))
  return note .. svg.swimlanes({ title = i18n.t(sec.title), lanes = lanes, x0 = 0, x1 = r.step.picture_ms,
                                 kinds = kinds, x_label = t("report.timeline.lanes_x") })
end

function KINDS.compare(_, _, r)
  local c = r.compare
  if not c or c.error then return nil end
  local rows = {}
  for i, x in ipairs(c.categories) do
    rows[i] = { x.name, ("%.3f"):format(x.long_ms), ("%.3f"):format(x.typical_ms), ("%.3f"):format(x.delta_ms) }
  end
  local out = { ("<p>%s</p>"):format(esc(t("report.timeline.compare_note", tostring(c.step), tostring(c.typical),
    tostring(c.grew_most)))), html.table(header("report.timeline.compare_header", tostring(c.step)), rows) }
  if #c.operators > 0 then
    local ops = {}
    for i, x in ipairs(c.operators) do
      ops[i] = { x.name, ("%.3f"):format(x.long_ms), ("%.3f"):format(x.typical_ms), ("%.3f"):format(x.delta_ms) }
    end
    out[#out + 1] = html.table(header("report.timeline.compare_ops_header", tostring(c.step)), ops)
  end
  return table.concat(out)
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
  return svg.bars({ title = i18n.t(sec.title), labels = labels, values = values, unit = "%",
                    value_label = t("report.timeline.idle_ratio"), highlight = hot })
end

function KINDS.overlap(_, sec, r)
  local ov = r.overlap
  if not ov then return nil end
  local labels, values = {}, {}
  for _, k in ipairs({ { "computing", ov.computing_ms }, { "communication", ov.communication_ms },
                       { "not_overlapped", ov.not_overlapped_ms }, { "free", ov.free_ms } }) do
    if k[2] then
      labels[#labels + 1] = t("report.timeline." .. k[1])
      values[#values + 1] = k[2]
    end
  end
  return ("<p>%s</p>"):format(esc(t("report.timeline.overlap_note", pct(ov.overlap_ratio), pct(ov.exposed_ratio),
    tostring(ov.source)))) .. svg.bars({ title = i18n.t(sec.title), labels = labels, values = values,
    unit = "ms", value_label = t("report.timeline.time_in_step") })
end

function KINDS.critical_path(_, sec, r)
  local cp = r.critical_path
  if not cp or not cp.composition then return nil end
  local labels, values = {}, {}
  for c, v in pairs(cp.composition) do
    labels[#labels + 1] = c
    values[#values + 1] = v
  end
  local order = {}
  for i = 1, #labels do order[i] = i end
  table.sort(order, function(a, b)
    if values[a] ~= values[b] then return values[a] > values[b] end
    return labels[a] < labels[b]
  end)
  local l2, v2 = {}, {}
  for i, k in ipairs(order) do l2[i], v2[i] = labels[k], values[k] end
  l2[#l2 + 1], v2[#v2 + 1] = t("report.timeline.free"), cp.free_ms
  return ("<p>%s</p>"):format(esc(t("report.timeline.path_note", pct(cp.critical_path_ratio), cp.longest_path_ms,
    cp.longest_path_tasks, cp.span_ms)))
    .. svg.bars({ title = i18n.t(sec.title), labels = l2, values = v2, unit = "ms",
                  value_label = t("report.timeline.time_on_path") })
end

-- Step times: a bar per step while they fit, else a line over the steps (a thousand bars would
-- be a thousand unreadable labels); the step ids on the x axis when they are numbers.
function KINDS.steps(_, sec, r)
  local j = r.jitter
  if not j or not j.series then return nil end
  local long, long_ids = {}, {}
  for _, s in ipairs(j.long_tail) do
    long[tostring(s.step)] = true
    long_ids[#long_ids + 1] = tostring(s.step)
  end
  local ids = j.series.ids
  local comm_label = t("report.timeline.per_step", r.comm_jitter and r.comm_jitter.column or t("report.timeline.communication"))
  if #ids > MAX_STEP_BARS then
    local xs, numeric = {}, true
    for i, id in ipairs(ids) do
      xs[i] = math.tointeger(tonumber(id))
      numeric = numeric and xs[i] ~= nil
    end
    if not numeric then for i = 1, #ids do xs[i] = i end end
    local axis = numeric and t("report.timeline.step_axis") or t("report.timeline.step_order_axis")
    local shown = {}
    for i = 1, math.min(#long_ids, 20) do shown[i] = long_ids[i] end
    if #long_ids > 20 then shown[#shown + 1] = "…" end
    local out = { ("<p>%s</p>"):format(esc(t("report.timeline.steps_note_many", pct(j.cv), j.mean, j.p95, #ids,
      #shown > 0 and table.concat(shown, ", ") or "-"))),
      svg.lines({ title = i18n.t(sec.title), x_label = axis, y_label = t("report.timeline.step_time"), y_unit = "ms",
                  x_integer = true, y_min = 0, series = { { name = t("report.timeline.step_time"), x = xs, y = j.series.times } } }) }
    if j.series.comm then
      out[#out + 1] = svg.lines({ title = t("report.timeline.comm_title"), x_label = axis, y_label = comm_label,
                                  y_unit = "ms", x_integer = true, y_min = 0,
                                  series = { { name = comm_label, x = xs, y = j.series.comm } } })
    end
    return table.concat(out)
  end
  local labels, values, hot = {}, {}, {}
  for i, id in ipairs(ids) do
    labels[i] = t("report.timeline.step", tostring(id))
    values[i] = j.series.times[i]
    hot[i] = long[tostring(id)] or false
  end
  local out = { ("<p>%s</p>"):format(esc(t("report.timeline.steps_note", pct(j.cv), j.mean, j.p95))),
                svg.bars({ title = i18n.t(sec.title), labels = labels, values = values, unit = "ms",
                           value_label = t("report.timeline.step_time"), highlight = hot }) }
  if j.series.comm then
    out[#out + 1] = svg.bars({ title = t("report.timeline.comm_title"), labels = labels, values = j.series.comm, unit = "ms",
                               value_label = comm_label })
  end
  return table.concat(out)
end

function KINDS.hotspots(_, _, r)
  if not r.hotspots or #r.hotspots == 0 then return nil end
  local rows = {}
  for i, h in ipairs(r.hotspots) do rows[i] = { h.path_rank, h.name, h.path_ms, h.path_count, h.raw_ms, h.raw_rank } end
  return html.table(header("report.timeline.hotspots_header"), rows)
end

function KINDS.dashboard(_, _, r)
  local rows = {}
  local fired = {}
  for _, f in ipairs(r.findings) do fired[f.metric] = true end
  for _, k in ipairs(analysis.DASHBOARD_KEYS) do
    local v = r.dashboard[k]
    local hit = fired[k] or fired[analysis.DASHBOARD_RULE_METRIC[k] or k]
    if v ~= nil then rows[#rows + 1] = { k, ("%.4f"):format(v), pct(v) .. (hit and " ⚠" or "") } end
  end
  return html.table(header("report.timeline.dashboard_header"), rows)
end

function M.render(res, layout)
  return layout_mod.render(res, layout, {
    name = "timeline", kinds = KINDS, rank_name = name,
    -- the table of all ranks and the findings (with the ranks each applies to) are drawn once
    per_rank = function(kind) return kind ~= "rank_table" and kind ~= "findings" end,
    rank_id = function(r) return r.rank end,
    intro = "<p>" .. esc(t("report.timeline.intro")):format("<code>" .. esc(res.input) .. "</code>", #res.ranks) .. "</p>",
  })
end

function M.write(res, path, layout_file)
  return layout_mod.write("timeline", M.render, res, path, layout_file)
end

return M
