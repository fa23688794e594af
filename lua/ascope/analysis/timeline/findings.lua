--- Expert rules (rules/timeline.lua `rules`) evaluated on a rank's metrics.
local i18n = require "ascope.i18n"

local M = {}

local OPS = {
  ["<"] = function(a, b) return a < b end, [">"] = function(a, b) return a > b end,
  ["<="] = function(a, b) return a <= b end, [">="] = function(a, b) return a >= b end,
  ["=="] = function(a, b) return a == b end, ["~="] = function(a, b) return a ~= b end,
}
local SEVERITIES = { info = 1, warning = 2, error = 3 }
M.SEVERITIES = SEVERITIES

--- The facts derived from a rank's result that rules can test besides the dashboard keys.
M.DERIVED = { "long_tail_steps", "bubble_excess", "hidden_comm_jitter", "raw_top_off_path" }

-- The limit above which a metric fires a rule of the list (the step and communication jitter
-- rules' values also say when communication jitter is "hidden": one number, in rules/ only).
local function upper_limit(list, metric)
  for _, rule in ipairs(list or {}) do
    if rule.metric == metric and (rule.op == ">" or rule.op == ">=") then return rule.value end
  end
end

--- The values the rules of list can test: the dashboard plus derived facts.
function M.metrics(r, list)
  local v = {}
  for k, x in pairs(r.dashboard) do v[k] = x end
  v.long_tail_steps = r.jitter and #r.jitter.long_tail or nil
  v.bubble_excess = r.pp_bubble and r.pp_bubble.excess or nil
  local step_limit, comm_limit = upper_limit(list, "step_cv"), upper_limit(list, "comm_jitter")
  if v.step_cv and v.comm_jitter and step_limit and comm_limit then
    v.hidden_comm_jitter = (v.step_cv <= step_limit and v.comm_jitter > comm_limit) and 1 or 0
  end
  if r.raw_top_off_path ~= nil then v.raw_top_off_path = r.raw_top_off_path and 1 or 0 end
  return v
end

local function show(metric, x)
  if math.type(x) == "integer" or metric == "long_tail_steps" then return tostring(math.floor(x)) end
  return ("%.1f%%"):format(x * 100)
end

--- Findings, most severe first: {id, severity, metric, value, finding, action}.
function M.evaluate(list, r)
  local values = M.metrics(r, list)
  local out = {}
  for _, rule in ipairs(list) do
    local x = values[rule.metric]
    if x ~= nil and OPS[rule.op](x, rule.value) then
      out[#out + 1] = { id = rule.id, severity = rule.severity, metric = rule.metric, value = x,
                        threshold = rule.value, op = rule.op,
                        finding = (i18n.pick(rule.finding) or rule.id):format(show(rule.metric, x)),
                        action = i18n.pick(rule.action) }
    end
  end
  table.sort(out, function(a, b)
    if SEVERITIES[a.severity] ~= SEVERITIES[b.severity] then return SEVERITIES[a.severity] > SEVERITIES[b.severity] end
    return a.id < b.id
  end)
  return out
end

return M
