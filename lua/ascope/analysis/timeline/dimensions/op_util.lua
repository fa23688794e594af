--- Dimension 3, operator utilisation: op_utilization = Computing / stage from the profiler's
-- composition of the step (Overlap Analysis lanes, else its step split's row), else the busy
-- union of compute tasks / stage; per lane: busy, idle ratio
-- (1 - busy / lane span), max gap and gap P95; max_lane_idle over the lanes that carry the
-- compute. Also the swimlane picture of the step.
local function ms(ns) return ns and ns / 1e6 end
local function ratio(a, b) return (a and b and b > 0) and a / b or nil end

local t = require("ascope.i18n").t
local data_labels = require "ascope.labels"

local M = { id = "op_util", explain = true, without_trace = true }

-- most intervals drawn per lane
local MAX_DRAWN = 20000

local function lanes_dimension(m, lo, hi, p2p_wait)
  local out = {}
  local compute_total = 0
  for i, lane in ipairs(m.lanes) do
    local rows = lane.kind ~= "overlap" and m.slices(m, i)
    if rows then
      local busy = m.busy(m, rows, lo, hi)
      local a, b = busy:bounds()
      if a and b > a then
        local total = busy:total()
        local gaps = busy:gaps(a, b)
        local st = gaps:stats()
        local row = { name = lane.name, kind = lane.kind, busy_ms = ms(total), span_ms = ms(b - a),
                      idle_ratio = 1 - total / (b - a), max_gap_ms = ms(st.max), gap_p95_ms = st.p95 / 1e6,
                      gaps = st.count }
        if lane.kind == "device" then
          local c = m.rows[i] and m.rows[i].compute
          row.compute_ms = c and ms(m.busy(m, c, lo, hi):total()) or 0
          compute_total = compute_total + row.compute_ms
          -- idle that a pipeline wait explains is the bubble's business, not the lane's
          row.unexplained_idle_ratio = (gaps:total() - gaps:intersect(p2p_wait):total()) / (b - a)
        end
        out[#out + 1] = row
      end
    end
  end
  table.sort(out, function(a, b)
    if a.idle_ratio ~= b.idle_ratio then return a.idle_ratio > b.idle_ratio end
    return a.name < b.name
  end)
  -- max_lane_idle looks at the lanes that carry the compute (at least a tenth of it): a stream
  -- with a handful of copies is idle by design
  local max_idle, max_unexplained, idle_lane
  for _, row in ipairs(out) do
    if row.kind == "device" and compute_total > 0 and row.compute_ms >= 0.1 * compute_total then
      if not max_idle or row.idle_ratio > max_idle then max_idle, idle_lane = row.idle_ratio, row.name end
      if not max_unexplained or row.unexplained_idle_ratio > max_unexplained then
        max_unexplained = row.unexplained_idle_ratio
      end
    end
  end
  return out, max_idle, max_unexplained, idle_lane
end

local function swimlanes(m, lanes, lo, hi)
  local out = {}
  local by_name = {}
  for i, lane in ipairs(m.lanes) do by_name[lane.name] = i end
  for _, l in ipairs(lanes) do
    local i = by_name[l.name]
    local starts, ends = m.busy(m, m.slices(m, i), lo, hi):columns()
    local s_ms, e_ms = {}, {}
    for j = 1, math.min(#starts, MAX_DRAWN) do
      s_ms[j], e_ms[j] = (starts[j] - lo) / 1e6, (ends[j] - lo) / 1e6
    end
    out[#out + 1] = { name = l.name, kind = l.kind, starts = s_ms, ends = e_ms }
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

function M.compute(ctx)
  local r, lanes, s, m = ctx.r, ctx.comp_lanes, ctx.s, ctx.model
  if ctx.step_lo or ctx.no_trace then -- without a trace: the step split's row
    if lanes and lanes.computing and lanes.stage then
      r.op_util = { source = lanes.source, op_utilization = ratio(lanes.computing, lanes.stage),
                    compute_busy_ms = ms(lanes.computing), stage_ms = ms(lanes.stage), span_ms = ms(lanes.span) }
    elseif s then
      r.op_util = { source = data_labels.TASKS, op_utilization = ratio(s.compute, s.stage), compute_busy_ms = ms(s.compute),
                    stage_ms = ms(s.stage), span_ms = ms(s.span) }
    end
  end
  if ctx.no_trace then return end -- no lanes
  if m.device_lanes == 0 and r.op_util and r.op_util.source == data_labels.TASKS then
    -- no lane is a device lane: compute cannot be measured, which is not the same as none
    r.op_util = nil
    r.not_computed.op_util = t("timeline.why.no_device_lane")
  end
  if not ctx.lo then return end
  r.lanes, r.max_lane_idle, r.max_lane_idle_unexplained, r.idle_lane =
    lanes_dimension(m, ctx.lo, ctx.hi, ctx.sets.p2p_wait:clip(ctx.lo, ctx.hi))
  r.swimlanes = swimlanes(m, r.lanes, ctx.picture_from, ctx.hi)
end

M.dashboard = {
  { key = "op_utilization", order = 2, value = function(r) return r.op_util and r.op_util.op_utilization end },
  { key = "max_lane_idle", order = 7, rule_metric = "max_lane_idle_unexplained",
    value = function(r) return r.max_lane_idle end },
}

function M.json(r, kit) return { op_util = r.op_util, lanes = kit.array(r.lanes) } end

function M.md(r, kit)
  local out = {}
  local T, pct, num = kit.T, kit.pct, kit.num
  if r.op_util then
    out[#out + 1] = ("### %s%s\n\n"):format(T("util_heading"), kit.mark("op_utilization", "max_lane_idle_unexplained"))
    out[#out + 1] = T("util_line", r.op_util.compute_busy_ms, r.op_util.stage_ms, data_labels.show("source", r.op_util.source),
      pct(r.op_util.op_utilization)) .. "\n\n"
  end
  if #r.lanes > 0 then
    local rows = {}
    for i = 1, math.min(#r.lanes, kit.top_n) do
      local l = r.lanes[i]
      rows[i] = { l.name, l.kind, num(l.busy_ms), num(l.span_ms), pct(l.idle_ratio), num(l.max_gap_ms), num(l.gap_p95_ms) }
    end
    out[#out + 1] = kit.md_table(kit.header("report.timeline.md.lanes_header"), rows) .. "\n"
  end
  return #out > 0 and table.concat(out) or nil
end

local KIND_COLOURS = { device = "#3366cc", comm = "#dc3912", host = "#109618", other = "#999999" }

M.html = {
  swimlanes = function(_, sec, r, kit)
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
    local note = ("<p>%s</p>"):format(kit.esc(t("report.timeline.lanes_note", r.step.id or t("report.timeline.whole_trace"),
      prep, r.step.stage_ms)))
    return note .. kit.svg.swimlanes({ title = kit.t(sec.title), lanes = lanes, x0 = 0, x1 = r.step.picture_ms,
                                       kinds = kinds, x_label = t("report.timeline.lanes_x") })
  end,

  lane_idle = function(res, sec, r, kit)
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
    return kit.svg.bars({ title = kit.t(sec.title), labels = labels, values = values, unit = "%",
                          value_label = kit.t("report.timeline.idle_ratio"), highlight = hot })
  end,
}

return M
