--- Writers of `ascope timeline` results: timeline_metrics.json, timeline_report.md and the
-- short text summary.
local core = require "ascope_core"
local md = require "ascope.report.md"
local writer = require "ascope.report.writer"
local analysis = require "ascope.analysis.timeline"
local fmt = require "ascope.fmt"
local i18n = require "ascope.i18n"
local json = core.json

local M = {}

local function array(t)
  return setmetatable(t or {}, { __jsontype = "array" })
end

local function rank_data(r)
  return {
    role = r.role, rank = r.rank, trace = r.trace, step_trace = r.step_trace, events = r.events,
    step = r.step, steps_found = r.steps_found,
    critical_path = r.critical_path, overlap = r.overlap, alignment = r.alignment, op_util = r.op_util,
    lanes = array(r.lanes),
    host = r.host, pp_bubble = r.pp_bubble, jitter = r.jitter and {
      source = r.jitter.source, steps = r.jitter.steps, mean_ms = r.jitter.mean, p50_ms = r.jitter.p50,
      p95_ms = r.jitter.p95, max_ms = r.jitter.max, cv = r.jitter.cv, long_tail = array(r.jitter.long_tail) },
    comm_jitter = r.comm_jitter, hotspots = array(r.hotspots), phases = r.phases,
    compare = r.compare and (r.compare.error and r.compare or {
      step = r.compare.step, typical = r.compare.typical, grew_most = r.compare.grew_most,
      categories = array(r.compare.categories), operators = array(r.compare.operators) }),
    dashboard = r.dashboard, findings = array(r.findings), not_computed = r.not_computed,
  }
end

--- The typical step's time: its wall time, else (no step markers) its stage.
function M.step_ms(r) return r.step and (r.step.wall_ms or r.step.stage_ms) end

--- Ranks side by side: the slowest (by the typical step's time) and the most jittery.
function M.summary(res)
  local slowest, jittery
  for _, r in ipairs(res.ranks) do
    local t = M.step_ms(r)
    if t and (not slowest or t > slowest.step_ms) then slowest = { rank = r.rank, role = r.role, step_ms = t } end
    local cv = r.jitter and r.jitter.cv
    if cv and (not jittery or cv > jittery.cv) then jittery = { rank = r.rank, role = r.role, cv = cv } end
  end
  return { slowest = slowest, most_jittery = jittery }
end

function M.data(res)
  local ranks = array()
  for i, r in ipairs(res.ranks) do ranks[i] = rank_data(r) end
  local failed = array()
  for i, f in ipairs(res.failed) do failed[i] = { role = f.role, rank = f.rank, folders = f.dirs, reason = f.reason } end
  local d = { input = res.input, ranks = ranks, failed = failed, summary = M.summary(res) }
  if #ranks == 1 then
    -- one rank: its metrics also at the top level (critical_path.critical_path_ratio, ...)
    for k, v in pairs(ranks[1]) do d[k] = v end
  end
  return d
end

function M.metrics_json(res, path)
  local w, err = writer.open(path)
  if not w then return nil, err end
  w:write(json.encode(M.data(res), { indent = 2 }), "\n")
  return w:close()
end

local function pct(x) return x and fmt.pct(x) or "n/a" end
local function ratio_pct(a, b) return (b and b > 0) and pct(a / b) or "n/a" end
local function num(x, d) return x and ("%." .. (d or 3) .. "f"):format(x) or "n/a" end

local function fired(r)
  local set = {}
  for _, f in ipairs(r.findings or {}) do set[f.metric] = f end
  return set
end

local function mark(set, ...)
  for _, metric in ipairs({ ... }) do
    if set[metric] then return " ⚠" end
  end
  return ""
end

--- "step 12, lane Ascend Hardware/Stream 2, operator MatMul, open the Timeline view"
function M.evidence_text(e)
  if not e then return "" end
  local parts = {}
  if e.step ~= nil then parts[#parts + 1] = i18n.t("timeline.evidence_step", tostring(e.step)) end
  if e.lane then parts[#parts + 1] = i18n.t("timeline.evidence_lane", e.lane) end
  if e.operator then parts[#parts + 1] = i18n.t("timeline.evidence_operator", e.operator) end
  parts[#parts + 1] = i18n.t("timeline.evidence_open", i18n.t("timeline.view_" .. e.view))
  return table.concat(parts, ", ")
end

--- The dashboard table: one row per measured key.
function M.dashboard_table(r)
  local rows = {}
  local set = fired(r)
  for _, k in ipairs(analysis.DASHBOARD_KEYS) do
    local v = r.dashboard[k]
    if v ~= nil then
      rows[#rows + 1] = { k, num(v, 4), pct(v) .. mark(set, k, analysis.DASHBOARD_RULE_METRIC[k]) }
    end
  end
  return md.table({ "key", "value", "" }, rows)
end

local function rank_section(r, top_n)
  local out = {}
  local set = fired(r)
  local function add(s) out[#out + 1] = s end
  add(("\n## %s rank %s\n\n"):format(r.role ~= "" and r.role or "trace", r.rank))
  add(("%s%s; %d events; %s.\n\n"):format(r.trace and ("Trace `" .. r.trace .. "`") or "No trace",
    r.step_trace and (", step split from `" .. r.step_trace .. "`") or "", r.events,
    r.step and r.step.id and ("typical step " .. r.step.id .. " of " .. r.steps_found) or "whole trace as one step"))
  if r.step and r.step.wall_ms then
    add(("Step %.3f ms: host-only %.3f ms at its start, then a %.3f ms stage (first to last compute or communication task).\n\n")
      :format(r.step.wall_ms, r.step.preparing_ms, r.step.stage_ms))
  end
  if #r.findings > 0 then
    add("### Findings\n\n")
    for _, f in ipairs(r.findings) do
      add(("- ⚠ **%s** (%s): %s. %s Evidence: %s.\n"):format(f.id, f.severity, f.finding, f.action or "",
        M.evidence_text(f.evidence)))
    end
    add("\n")
  end
  local cp = r.critical_path
  if cp then
    add(("### 1 Critical path%s\n\n"):format(mark(set, "critical_path_ratio", "critical_path_comm_share")))
    add(("Compute, communication and copies busy %.3f ms of a %.3f ms stage: critical_path_ratio %s.\n"):format(
      cp.busy_union_ms, cp.span_ms, pct(cp.critical_path_ratio)))
    if cp.longest_path_ms then
      add(("Longest dependency chain %.3f ms over %d tasks (%d nodes, %d flow edges); free %.3f ms; communication %s of it.\n\n"):format(
        cp.longest_path_ms, cp.longest_path_tasks, cp.dag_nodes, cp.flow_edges, cp.free_ms, pct(cp.comm_share)))
      local rows = {}
      for c, t in pairs(cp.composition) do rows[#rows + 1] = { c, num(t), ratio_pct(t, cp.longest_path_ms), t } end
      table.sort(rows, function(a, b)
        if a[4] ~= b[4] then return a[4] > b[4] end
        return a[1] < b[1]
      end)
      for _, row in ipairs(rows) do row[4] = nil end
      add(md.table({ "category on the path", "ms", "share" }, rows))
    end
    add("\n")
  end
  local ov = r.overlap
  if ov then
    add(("### 2 Compute/communication overlap%s\n\n"):format(mark(set, "overlap_ratio")))
    add(("From %s: communication %.3f ms, not overlapped %.3f ms: overlap_ratio %s (exposed %s).\n"):format(
      ov.source, ov.communication_ms, ov.not_overlapped_ms, pct(ov.overlap_ratio), pct(ov.exposed_ratio)))
    add("\n")
  end
  local al = r.alignment
  if al and al.count > 0 then
    add(("Cross-lane alignment gaps along %d flow edges: %d waits, %.3f ms in all.\n\n"):format(al.edges, al.count,
      al.total_ms))
    local rows = {}
    for i, g in ipairs(al.top) do rows[i] = { num(g.gap_ms), g.producer, g.consumer, g.consumer_lane } end
    add(md.table({ "gap ms", "producer", "consumer", "consumer lane" }, rows))
    add("\n")
  end
  if r.op_util then
    add(("### 3 Op utilisation and lane idleness%s\n\n"):format(mark(set, "op_utilization", "max_lane_idle_unexplained")))
    add(("Compute busy %.3f ms of a %.3f ms stage (from %s): op_utilization %s.\n\n"):format(r.op_util.compute_busy_ms,
      r.op_util.span_ms, r.op_util.source, pct(r.op_util.op_utilization)))
  end
  if #r.lanes > 0 then
    local rows = {}
    for i = 1, math.min(#r.lanes, top_n) do
      local l = r.lanes[i]
      rows[i] = { l.name, l.kind, num(l.busy_ms), num(l.span_ms), pct(l.idle_ratio), num(l.max_gap_ms), num(l.gap_p95_ms) }
    end
    add(md.table({ "lane", "kind", "busy ms", "span ms", "idle", "max gap ms", "gap P95 ms" }, rows))
    add("\n")
  end
  if r.host then
    local h = r.host
    add(("### 4 Host/device%s\n\n"):format(mark(set, "host_launch_gap_median", "dataloader_serial_ratio")))
    add(("Host-only time at the start of the step (before its first compute or communication task): %.3f ms of a %.3f ms step.\n")
      :format(h.preparing_ms, r.step.wall_ms))
    add(("Compute gaps not covered by communication or P2P ops but under host launch/sync activity: %.3f ms, host_launch_gap_ratio %s%s.\n")
      :format(h.launch_gap_ms, pct(h.host_launch_gap_ratio),
        h.launch_gap_median and (", median over " .. h.steps .. " steps " .. pct(h.launch_gap_median))
          or (h.host_launch_gap_ratio and "; whether it recurs is not measured (fewer than 3 steps)" or "")))
    add(("Data loading without compute: %.3f ms (%s of the step).\n\n"):format(h.dataloader_serial_ms,
      pct(h.dataloader_serial_ratio)))
  end
  if r.pp_bubble then
    local b = r.pp_bubble
    add(("### 5 Pipeline bubble%s\n\n"):format(mark(set, "bubble_excess")))
    add(("Union of P2P receive waits %.3f ms of a %.3f ms step: pp_bubble_ratio %s%s%s.\n\n"):format(b.bubble_ms,
      b.step_ms, pct(b.pp_bubble_ratio), b.theory and (" (theory (p-1)/(p-1+m) " .. pct(b.theory) .. ")") or "",
      b.profiler_bubble_ms and (("; the profiler's Bubble %.3f ms"):format(b.profiler_bubble_ms)) or ""))
  end
  if r.jitter then
    local j = r.jitter
    add(("### 6 Jitter%s\n\n"):format(mark(set, "step_cv", "long_tail_steps", "compute_side_jitter")))
    add(("%d steps from %s: mean %.3f ms, P50 %.3f, P95 (nearest rank) %.3f, max %.3f, CV %s.\n"):format(j.steps,
      j.source, j.mean, j.p50, j.p95, j.max, pct(j.cv)))
    if #j.long_tail > 0 then
      local list = {}
      for _, s in ipairs(j.long_tail) do list[#list + 1] = ("%s (%.3f ms)"):format(s.step, s.time_ms) end
      add("Long-tail steps: " .. table.concat(list, ", ") .. ".\n")
    end
    if r.comm_jitter then
      add(("Communication per step (%s): CV %s%s.\n"):format(r.comm_jitter.column, pct(r.comm_jitter.cv),
        mark(set, "comm_jitter")))
    end
    add("\n")
  end
  if r.hotspots and #r.hotspots > 0 then
    add(("### 7 Critical-path hotspots%s\n\n"):format(mark(set, "raw_top_off_path")))
    local rows = {}
    for i, h in ipairs(r.hotspots) do
      rows[i] = { h.path_rank, h.name, num(h.path_ms), h.path_count, num(h.raw_ms), h.raw_rank }
    end
    add(md.table({ "path rank", "operator", "ms on path", "count on path", "raw ms", "raw rank" }, rows))
    add("\n")
  end
  local c = r.compare
  if c and not c.error then
    add(("### Step %s against the typical step %s\n\n"):format(tostring(c.step), tostring(c.typical)))
    local rows = {}
    for i, x in ipairs(c.categories) do rows[i] = { x.name, num(x.long_ms), num(x.typical_ms), num(x.delta_ms) } end
    add(md.table({ "part of the step", "step " .. tostring(c.step) .. " ms", "typical ms", "grew ms" }, rows))
    add(("\nGrew most: %s.\n\n"):format(c.grew_most))
    if #c.operators > 0 then
      local ops = {}
      for i, x in ipairs(c.operators) do ops[i] = { x.name, num(x.long_ms), num(x.typical_ms), num(x.delta_ms) } end
      add(md.table({ "operator", "step " .. tostring(c.step) .. " ms", "typical ms", "grew ms" }, ops))
      add("\n")
    end
  elseif c then
    add(("### Step comparison\n\nNot made: %s.\n\n"):format(c.error))
  end
  add("### 8 Prefill/decode\n\n")
  if r.phases.applicable then
    add(("Prefill %.3f ms (%d), decode %.3f ms (%d); TTFT %s ms, TPOT %s ms (%s).\n\n"):format(r.phases.prefill_ms,
      r.phases.prefill_count, r.phases.decode_ms, r.phases.decode_count, num(r.phases.ttft_ms), num(r.phases.tpot_ms),
      r.phases.method))
  else
    add("Not applicable: " .. r.phases.reason .. ".\n\n")
  end
  local nc = {}
  for d, why in pairs(r.not_computed) do nc[#nc + 1] = ("- %s: %s"):format(d, why) end
  table.sort(nc)
  if #nc > 0 then add("### Not computed\n\n" .. table.concat(nc, "\n") .. "\n\n") end
  add("### Metrics dashboard\n\n")
  add(M.dashboard_table(r))
  return table.concat(out)
end

function M.report_md(res, path)
  local w, err = writer.open(path)
  if not w then return nil, err end
  local top_n = res.rules.top_n or 10
  w:write("# ascope timeline report\n\n")
  w:write(("Input `%s`: %d rank(s) analysed, %d failed.\n"):format(res.input, #res.ranks, #res.failed))
  for _, f in ipairs(res.failed) do w:write(("\n- **failed** rank %s (%s): %s"):format(tostring(f.rank), f.role, f.reason)) end
  if #res.ranks > 1 then
    w:write("\n\n## Ranks\n\n")
    local rows = {}
    for i, r in ipairs(res.ranks) do
      local d = r.dashboard
      rows[i] = { r.role, r.rank, num(M.step_ms(r)), pct(d.critical_path_ratio), pct(d.op_utilization),
                  pct(d.overlap_ratio), pct(d.host_launch_gap_ratio), pct(d.step_cv), pct(d.comm_jitter), #r.findings }
    end
    w:write(md.table({ "role", "rank", "step ms", "critical_path", "op_util", "overlap", "host_gap", "step_cv",
                       "comm_jitter", "findings" }, rows))
    local s = M.summary(res)
    if s.slowest then
      w:write(("\nSlowest rank: %s (%s), typical step %.3f ms.\n"):format(s.slowest.rank, s.slowest.role, s.slowest.step_ms))
    end
    if s.most_jittery then
      w:write(("Most jittery rank: %s (%s), step CV %s.\n"):format(s.most_jittery.rank, s.most_jittery.role,
        pct(s.most_jittery.cv)))
    end
  end
  w:write("\n")
  for _, r in ipairs(res.ranks) do w:write(rank_section(r, top_n)) end
  return w:close()
end

--- A few lines for stdout.
function M.text(res)
  local lines = {}
  for _, r in ipairs(res.ranks) do
    local d = r.dashboard
    local parts = {}
    for _, k in ipairs(analysis.DASHBOARD_KEYS) do
      if d[k] ~= nil then parts[#parts + 1] = ("%s %s"):format(k, pct(d[k])) end
    end
    local role = r.role ~= "" and (" (" .. r.role .. ")") or ""
    lines[#lines + 1] = ("rank %s%s: %s"):format(r.rank, role, table.concat(parts, ", "))
    for _, f in ipairs(r.findings) do
      lines[#lines + 1] = ("  ⚠ %s: %s [%s]"):format(f.id, f.finding, M.evidence_text(f.evidence))
    end
  end
  return table.concat(lines, "\n")
end

return M
