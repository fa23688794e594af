--- Dimension 6, step and communication jitter (analysis/timeline/jitter.lua): the coefficient
-- of variation of the step times, the long-tail steps, and the jitter of the communication
-- time per step. Computed also for a rank with only the profiler's step split.
local measure = require "ascope.analysis.timeline.jitter"
local data_labels = require "ascope.labels"

local M = { id = "jitter", without_trace = true }

-- more steps than this are drawn as a line (one point per step) rather than a bar each
local MAX_STEP_BARS = 60
-- the long-tail steps the report lists by name (timeline_metrics.json lists them all)
local MAX_MD_STEPS = 20

function M.compute(ctx)
  local r = ctx.r
  local why
  r.jitter, r.comm_jitter, why = measure.measure(ctx.step_trace, ctx.jitter_windows, ctx.splits, ctx.rules)
  for d, text in pairs(why) do r.not_computed[d] = text end
end

M.dashboard = {
  { key = "step_cv", order = 6, value = function(r) return r.jitter and r.jitter.cv end },
  { key = "comm_jitter", order = 8, value = function(r) return r.comm_jitter and r.comm_jitter.cv end },
}

function M.json(r, kit)
  local j = r.jitter
  return {
    jitter = j and { source = j.source, steps = j.steps, mean_ms = j.mean, p50_ms = j.p50, p95_ms = j.p95,
                     max_ms = j.max, cv = j.cv, long_tail = kit.array(j.long_tail) },
    comm_jitter = r.comm_jitter,
  }
end

function M.md(r, kit)
  local j = r.jitter
  if not j then return nil end
  local T, pct = kit.T, kit.pct
  local out = { ("### %s%s\n\n"):format(T("jitter_heading"), kit.mark("step_cv", "long_tail_steps", "compute_side_jitter")),
                T("jitter_line", j.steps, data_labels.show("source", j.source), j.mean, j.p50, j.p95, j.max, pct(j.cv)) .. "\n" }
  if #j.long_tail > 0 then
    local list = {}
    for i = 1, math.min(#j.long_tail, MAX_MD_STEPS) do
      local s = j.long_tail[i]
      list[i] = ("%s (%.3f ms)"):format(s.step, s.time_ms)
    end
    local text = table.concat(list, ", ")
    out[#out + 1] = (#j.long_tail > MAX_MD_STEPS and T("long_tail_first", MAX_MD_STEPS, #j.long_tail, text)
      or T("long_tail", text)) .. "\n"
  end
  if r.comm_jitter then
    out[#out + 1] = T("comm_line", data_labels.show("comm_column", r.comm_jitter.column), pct(r.comm_jitter.cv), kit.mark("comm_jitter")) .. "\n"
  end
  out[#out + 1] = "\n"
  return table.concat(out)
end

-- many steps: a line over the steps, the step ids on the x axis when they are numbers
local function as_lines(sec, j, ids, long_ids, comm_label, kit)
  local t = kit.t
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
  local out = { ("<p>%s</p>"):format(kit.esc(t("report.timeline.steps_note_many", kit.pct(j.cv), j.mean, j.p95, #ids,
    #shown > 0 and table.concat(shown, ", ") or "-"))),
    kit.svg.lines({ title = kit.t(sec.title), x_label = axis, y_label = t("report.timeline.step_time"), y_unit = "ms",
                    x_integer = true, y_min = 0, series = { { name = t("report.timeline.step_time"), x = xs, y = j.series.times } } }) }
  if j.series.comm then
    out[#out + 1] = kit.svg.lines({ title = t("report.timeline.comm_title"), x_label = axis, y_label = comm_label,
                                    y_unit = "ms", x_integer = true, y_min = 0,
                                    series = { { name = comm_label, x = xs, y = j.series.comm } } })
  end
  return table.concat(out)
end

M.html = {
  -- Step times: a bar per step while they fit, else a line over the steps (a thousand bars
  -- would be a thousand unreadable labels).
  steps = function(_, sec, r, kit)
    local j = r.jitter
    if not j or not j.series then return nil end
    local t = kit.t
    local long, long_ids = {}, {}
    for _, s in ipairs(j.long_tail) do
      long[tostring(s.step)] = true
      long_ids[#long_ids + 1] = tostring(s.step)
    end
    local ids = j.series.ids
    local comm_label = t("report.timeline.per_step", r.comm_jitter and data_labels.show("comm_column", r.comm_jitter.column)
      or t("report.timeline.communication"))
    if #ids > MAX_STEP_BARS then return as_lines(sec, j, ids, long_ids, comm_label, kit) end
    local labels, values, hot = {}, {}, {}
    for i, id in ipairs(ids) do
      labels[i] = t("report.timeline.step", tostring(id))
      values[i] = j.series.times[i]
      hot[i] = long[tostring(id)] or false
    end
    local out = { ("<p>%s</p>"):format(kit.esc(t("report.timeline.steps_note", kit.pct(j.cv), j.mean, j.p95))),
                  kit.svg.bars({ title = kit.t(sec.title), labels = labels, values = values, unit = "ms",
                                 value_label = t("report.timeline.step_time"), highlight = hot }) }
    if j.series.comm then
      out[#out + 1] = kit.svg.bars({ title = t("report.timeline.comm_title"), labels = labels, values = j.series.comm,
                                     unit = "ms", value_label = comm_label })
    end
    return table.concat(out)
  end,
}

return M
