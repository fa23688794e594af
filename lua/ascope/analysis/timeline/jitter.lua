--- Dimension 6: step jitter, long-tail steps and communication jitter (ms).
--   step time   the ProfilerStep wall time; without markers for every step, Computing +
--               Communication(Not Overlapped) + Free (+ Preparing) of step_trace_time.csv or
--               analysis.db StepTraceTime
--   step_cv     population std / mean of the step times; measured from 3 steps on
--   long tail   a step above jitter.long_tail_median (rules/timeline.lua) x median, or above
--               the nearest-rank P95 and above median x (1 + the value of rule step_jitter)
--   comm_jitter CV of per-step Communication(Not Overlapped) (Communication when that column
--               is missing or zero in every step) of the profiler's split; without it, of the
--               communication busy time per step in the trace
local stats = require "ascope.analysis.stats"
local i18n = require "ascope.i18n"
local data_labels = require "ascope.labels"

local M = {}

M.MIN_STEPS = 3

--- The step-CV threshold: the value of rule step_jitter (its bundled value when a rule file
-- disabled it; nil when no rule file has one).
function M.cv_threshold(rules)
  return require("ascope.analysis.timeline.findings").threshold(rules.rules, "step_jitter")
end

--- Nearest-rank percentile of a sorted list: the smallest value with at least p% at or below.
local function nearest_rank(sorted, p)
  local k = math.max(1, math.ceil(p / 100 * #sorted))
  return sorted[k]
end

--- Steps of a series above the long-tail bounds: {{step, time_ms}}, slowest first. A step is
-- long when it takes more than median_factor x the median, or more than the P95 and more than
-- median x (1 + cv_threshold) (that bound is left out when cv_threshold is nil).
function M.long_tail(ids, times, cv_threshold, median_factor)
  local sorted = {}
  for i, t in ipairs(times) do sorted[i] = t end
  table.sort(sorted)
  local med = stats.percentile(sorted, 50)
  local p95 = nearest_rank(sorted, 95)
  local long = {}
  for k, t in ipairs(times) do
    if t > median_factor * med or (cv_threshold and t > p95 and t > med * (1 + cv_threshold)) then
      long[#long + 1] = { step = ids[k], time_ms = t }
    end
  end
  table.sort(long, function(a, b)
    if a.time_ms ~= b.time_ms then return a.time_ms > b.time_ms end
    return tostring(a.step) < tostring(b.step)
  end)
  return long, med, p95
end

-- The series: step ids, times and per-step communication, and where they came from. wins: all
-- step windows (their wall times); splits: the steps split one by one (possibly a sample).
local function series(step_trace, wins, splits)
  local from_markers = wins and #wins > 0 and wins[1].id and (not step_trace or #wins >= #step_trace.steps)
  local ids, times, comm = {}, {}, {}
  local source, comm_col
  if from_markers then
    source = data_labels.MARKERS
    for _, w in ipairs(wins) do
      ids[#ids + 1] = tostring(w.id)
      times[#times + 1] = w.wall / 1e6
    end
    if splits and #splits == #wins then
      for _, s in ipairs(splits) do comm[#comm + 1] = s.empty and 0 or s.comm / 1e6 end
      comm_col = data_labels.TRACE_COMM
    end
  elseif step_trace then
    source = step_trace.source
    for _, s in ipairs(step_trace.steps) do
      if s.time_us then
        ids[#ids + 1] = s.step
        times[#times + 1] = s.time_us / 1000
      end
    end
  end
  -- the profiler's own split is the better record of communication when it is there: its
  -- exposed part, or the whole when none of it is exposed (communication compute hides in
  -- every step still jitters, which is what hidden_comm_jitter is about)
  if step_trace then
    for _, key in ipairs({ "comm_not_overlapped_us", "comm_us" }) do
      local got, any = {}, false
      if step_trace.has[key] then
        for _, s in ipairs(step_trace.steps) do
          if s[key] then
            got[#got + 1] = s[key] / 1000
            any = any or s[key] > 0
          end
        end
      end
      if any or (#got > 0 and key == "comm_us") then
        comm, comm_col = got, key == "comm_us" and "Communication" or "Communication(Not Overlapped)"
        break
      end
    end
  end
  return ids, times, comm, source, comm_col
end

--- Step and communication jitter: jitter, comm_jitter (nil when not measured), and the reasons.
function M.measure(step_trace, wins, splits, rules)
  local ids, times, comm, source, comm_col = series(step_trace, wins, splits)
  local why = {}
  local st, cj
  if #times == 0 then
    why.jitter = i18n.t("timeline.why.no_steps")
  elseif #times < M.MIN_STEPS then
    why.jitter = i18n.t("timeline.why.few_steps", #times, M.MIN_STEPS)
  else
    st = stats.describe(times)
    -- the P95 shown is the nearest-rank one the long-tail bound uses
    st.long_tail, st.p50, st.p95 = M.long_tail(ids, times, M.cv_threshold(rules), rules.jitter.long_tail_median)
    st.series = { ids = ids, times = times, comm = #comm == #times and comm or nil }
    st.source, st.steps = source, #times
  end
  if #comm < M.MIN_STEPS then
    why.comm_jitter = #comm == 0 and i18n.t("timeline.why.no_comm_per_step")
      or i18n.t("timeline.why.few_comm_steps", #comm, M.MIN_STEPS)
  else
    local c = stats.describe(comm)
    if c.mean > 0 then
      cj = { cv = c.cv, mean_ms = c.mean, column = comm_col, steps = #comm }
    else
      why.comm_jitter = i18n.t("timeline.why.no_comm")
    end
  end
  return st, cj, why
end

return M
