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

--- nil, or a message naming the rule that is not well formed.
function M.validate(list)
  if type(list) ~= "table" then return "rules: timeline.rules must be a list" end
  for i, r in ipairs(list) do
    local name = ("timeline.rules[%d] (id %s)"):format(i, tostring(r.id))
    if type(r.id) ~= "string" then return "rules: " .. name .. " has no id" end
    if type(r.metric) ~= "string" then return "rules: " .. name .. ": metric must be a string" end
    if not OPS[r.op] then return ("rules: %s: op must be one of < > <= >= == ~=, not %q"):format(name, tostring(r.op)) end
    if type(r.value) ~= "number" then return "rules: " .. name .. ": value must be a number" end
    if not SEVERITIES[r.severity] then return "rules: " .. name .. ": severity must be info, warning or error" end
  end
end

--- The values the rules can test: the dashboard plus derived facts.
function M.metrics(r)
  local v = {}
  for k, x in pairs(r.dashboard) do v[k] = x end
  v.long_tail_steps = r.jitter and #r.jitter.long_tail or nil
  v.bubble_excess = r.pp_bubble and r.pp_bubble.excess or nil
  if v.step_cv and v.comm_jitter then
    v.hidden_comm_jitter = (v.step_cv <= 0.10 and v.comm_jitter > 0.15) and 1 or 0
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
  local values = M.metrics(r)
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
