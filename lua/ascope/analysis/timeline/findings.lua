--- Expert rules (rules/timeline.lua `rules`) evaluated on a rank's metrics. Every finding names
-- its evidence: the step, the lane and the operator to look at, and the MindStudio view to open
-- (Timeline, Operator or Communication view), as the timeline seed asks.
local i18n = require "ascope.i18n"

local M = {}

local OPS = {
  ["<"] = function(a, b) return a < b end, [">"] = function(a, b) return a > b end,
  ["<="] = function(a, b) return a <= b end, [">="] = function(a, b) return a >= b end,
  ["=="] = function(a, b) return a == b end, ["~="] = function(a, b) return a ~= b end,
}
local SEVERITIES = { info = 1, warning = 2, error = 3 }
M.SEVERITIES = SEVERITIES
M.VIEWS = { Timeline = true, Operator = true, Communication = true }

-- the metrics a rule may test (M.metrics); ascope.rule_schemas checks the rules against them
M.METRICS = { "critical_path_ratio", "op_utilization", "overlap_ratio", "host_launch_gap_ratio", "pp_bubble_ratio",
              "step_cv", "max_lane_idle", "comm_jitter", "long_tail_steps", "bubble_excess", "host_launch_gap_median",
              "dataloader_serial_ratio", "max_lane_idle_unexplained", "critical_path_comm_share", "hidden_comm_jitter",
              "compute_side_jitter", "raw_top_off_path" }

local bundled -- the bundled timeline rules, read once when a rule file disabled a rule

--- The value of rule id in list; a rule that a rule file disabled keeps its bundled value as
-- the limit of the facts built on it (hidden or compute-side jitter, the long-tail bound).
function M.threshold(list, id)
  for _, r in ipairs(list or {}) do
    if r.id == id and type(r.value) == "number" then return r.value end
  end
  -- required here, not at the top: the rule schemas read this module's METRICS
  bundled = bundled or assert(require("ascope.rules").load("timeline")).rules
  if list == bundled then return nil end
  return M.threshold(bundled, id)
end
local threshold = M.threshold

--- The values the rules can test: the dashboard plus derived facts.
function M.metrics(r, list)
  local v = {}
  for k, x in pairs(r.dashboard) do v[k] = x end
  v.long_tail_steps = r.jitter and #r.jitter.long_tail or nil
  v.bubble_excess = r.pp_bubble and r.pp_bubble.excess or nil
  v.host_launch_gap_median = r.host and r.host.host_launch_gap_ratio and r.host.launch_gap_median or nil
  v.dataloader_serial_ratio = r.host and r.host.dataloader_serial_ratio or nil
  v.max_lane_idle_unexplained = r.max_lane_idle_unexplained
  v.critical_path_comm_share = r.critical_path and r.critical_path.comm_share or nil
  if v.step_cv and v.comm_jitter then
    local cv_t, cj_t = threshold(list, "step_jitter") or math.huge, threshold(list, "comm_jitter") or math.huge
    v.hidden_comm_jitter = (v.step_cv <= cv_t and v.comm_jitter > cj_t) and 1 or 0
    v.compute_side_jitter = (v.step_cv > cv_t and v.comm_jitter <= cj_t) and 1 or 0
  end
  if r.raw_top_off_path ~= nil then v.raw_top_off_path = r.raw_top_off_path and 1 or 0 end
  return v
end

local function busiest(r, kind)
  local best
  for _, l in ipairs(r.lanes or {}) do
    if l.kind == kind and (not best or l.busy_ms > best.busy_ms) then best = l end
  end
  return best and best.name
end

local function long_step(r)
  local lt = r.jitter and r.jitter.long_tail
  if lt and #lt > 0 then return lt[1].step end
  return r.step and r.step.id
end

local function top_hotspot(r) return r.hotspots and r.hotspots[1] and r.hotspots[1].name end
local function top_grown(r) return r.compare and r.compare.operators and r.compare.operators[1] and r.compare.operators[1].name end

-- metric -> the step, lane and operator that show it
local EVIDENCE = {
  critical_path_ratio = function(r) return r.step.id, r.idle_lane, top_hotspot(r) end,
  op_utilization = function(r)
    local from_lanes = r.op_util and r.op_util.source == "Overlap Analysis"
    return r.step.id, r.idle_lane or (from_lanes and "Overlap Analysis/Computing" or nil), top_hotspot(r)
  end,
  max_lane_idle = function(r) return r.step.id, r.idle_lane end,
  max_lane_idle_unexplained = function(r) return r.step.id, r.idle_lane end,
  overlap_ratio = function(r)
    local from_lanes = r.overlap and r.overlap.source == "Overlap Analysis"
    return r.step.id, from_lanes and "Overlap Analysis/Communication(Not Overlapped)" or busiest(r, "comm")
  end,
  critical_path_comm_share = function(r) return r.step.id, busiest(r, "comm"), top_hotspot(r) end,
  host_launch_gap_ratio = function(r) return r.step.id, busiest(r, "host") end,
  host_launch_gap_median = function(r) return r.step.id, busiest(r, "host") end,
  dataloader_serial_ratio = function(r) return r.step.id, busiest(r, "host") end,
  pp_bubble_ratio = function(r) return r.step.id, r.idle_lane end,
  bubble_excess = function(r) return r.step.id, r.idle_lane end,
  step_cv = function(r) return long_step(r), nil, top_grown(r) end,
  long_tail_steps = function(r) return long_step(r), nil, top_grown(r) end,
  compute_side_jitter = function(r) return long_step(r), nil, top_grown(r) end,
  comm_jitter = function(r) return long_step(r), busiest(r, "comm") end,
  hidden_comm_jitter = function(r) return long_step(r), busiest(r, "comm") end,
  raw_top_off_path = function(r) return r.step.id, nil, r.raw_top end,
}

--- {step, lane, operator, view} for a rule that fired on r.
function M.evidence(rule, r)
  local f = EVIDENCE[rule.metric] or function(x) return x.step and x.step.id end
  local step, lane, op = f(r)
  return { step = step, lane = lane, operator = op, view = rule.view or "Timeline" }
end

local function show(metric, x)
  if math.type(x) == "integer" or metric == "long_tail_steps" then return tostring(math.floor(x)) end
  return ("%.1f%%"):format(x * 100)
end

--- Findings, most severe first: {id, severity, metric, value, finding, action, evidence}.
function M.evaluate(list, r)
  local values = M.metrics(r, list)
  local out = {}
  for _, rule in ipairs(list) do
    local x = values[rule.metric]
    if x ~= nil and OPS[rule.op](x, rule.value) then
      out[#out + 1] = { id = rule.id, severity = rule.severity, metric = rule.metric, value = x,
                        threshold = rule.value, op = rule.op,
                        finding = (i18n.t(rule.finding) or rule.id):format(show(rule.metric, x)),
                        action = i18n.t(rule.action), evidence = M.evidence(rule, r) }
    end
  end
  table.sort(out, function(a, b)
    if SEVERITIES[a.severity] ~= SEVERITIES[b.severity] then return SEVERITIES[a.severity] > SEVERITIES[b.severity] end
    return a.id < b.id
  end)
  return out
end

return M
