--- The long step against the typical one: the worst long-tail step (or --compare-step K) beside
-- the typical step, with what grew by category (step time, host-only time at the start,
-- compute, exposed communication, device idle, pipeline bubble) and the operators that grew
-- most (summed slice time by name on device, communication and host lanes). ms.
local per_step = require "ascope.analysis.timeline.per_step"
local model_mod = require "ascope.analysis.timeline.model"

local M = {}

M.CATEGORIES = {
  { "step", "wall" }, { "preparing", "preparing" }, { "compute", "compute" }, { "exposed_comm", "exposed" },
  { "free", "free" }, { "bubble", "bubble" },
}

local DEVICE_KINDS, HOST_KINDS = { device = true, comm = true }, { host = true }

-- summed slice time by name in window w on device and communication lanes (its device side)
-- and host lanes (its host side), the step markers themselves left out
local function by_name(m, w)
  local tl = m.tl
  local step_pattern = m.rules.patterns.step
  local out = {}
  for _, side in ipairs({ { w.d0 or w.w0, w.d1 or w.w1, DEVICE_KINDS }, { w.w0, w.w1, HOST_KINDS } }) do
    for _, r in ipairs(model_mod.window_rows(m, side[1], side[2], side[3])) do
      local n = tl.name[r]
      if n and not n:match(step_pattern) then out[n] = (out[n] or 0) + tl.dur[r] end
    end
  end
  return out
end

--- nil when there is no step to compare (no long tail and no --compare-step), else
-- {step, typical, categories = {{name, long_ms, typical_ms, delta_ms}}, operators = {...}}.
-- A --compare-step that is not in the trace gives {error = message}.
function M.steps(m, sets, wins, typical_k, long_tail, want, top_n)
  local id = want
  if not id then
    if #long_tail == 0 then return nil end
    id = tonumber(long_tail[1].step)
  end
  local k = id and per_step.find(wins, id)
  if not k then return { error = require("ascope.i18n").t("timeline.compare.no_step", tostring(id)) } end
  local tw = wins[typical_k]
  if k == typical_k then return { error = require("ascope.i18n").t("timeline.compare.typical", id) } end
  local ls, ts = per_step.split(sets, wins[k]), per_step.split(sets, tw)
  if not ls or not ts then return { error = require("ascope.i18n").t("timeline.compare.empty") } end
  local cats = {}
  for _, c in ipairs(M.CATEGORIES) do
    local a, b = ls[c[2]] / 1e6, ts[c[2]] / 1e6
    cats[#cats + 1] = { name = c[1], long_ms = a, typical_ms = b, delta_ms = a - b }
  end
  local la, ta = by_name(m, wins[k]), by_name(m, tw)
  local ops = {}
  for n, t in pairs(la) do
    local d = t - (ta[n] or 0)
    if d > 0 then ops[#ops + 1] = { name = n, long_ms = t / 1e6, typical_ms = (ta[n] or 0) / 1e6, delta_ms = d / 1e6 } end
  end
  table.sort(ops, function(a, b)
    if a.delta_ms ~= b.delta_ms then return a.delta_ms > b.delta_ms end
    return a.name < b.name
  end)
  for i = #ops, top_n + 1, -1 do ops[i] = nil end
  -- the part of the step that grew most (the step time itself is the sum, not a part); none
  -- when no part grew (a step faster than the typical one)
  local grew
  for i = 2, #cats do
    if cats[i].delta_ms > 0 and (not grew or cats[i].delta_ms > grew.delta_ms) then grew = cats[i] end
  end
  return { step = id, typical = tw.id, categories = cats, operators = ops, grew_most = grew and grew.name }
end

return M
