--- Writers of `ascope timeline` results: timeline_metrics.json, timeline_report.md and the
-- short text summary.
local core = require "ascope_core"
local md = require "ascope.report.md"
local writer = require "ascope.report.writer"
local analysis = require "ascope.analysis.timeline"
local fmt = require "ascope.fmt"
local i18n = require "ascope.i18n"
local json = core.json
local header = require("ascope.report.html").header

-- a message of the Markdown report (ascope/locale: report.timeline.md.*)
local function T(key, ...) return i18n.t("report.timeline.md." .. key, ...) end

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
  return md.table(header("report.timeline.md.dash_header"), rows)
end

local function rank_section(r, top_n)
  local out = {}
  local set = fired(r)
  local function add(s) out[#out + 1] = s end
  add("\n## " .. T("rank_heading", r.role ~= "" and r.role or "trace", tostring(r.rank)) .. "\n\n")
  add(T("events_line", r.trace and T("trace", r.trace) or T("no_trace"), r.step_trace and T("step_split", r.step_trace) or "",
    r.events, r.step and r.step.id and T("typical_of", tostring(r.step.id), tostring(r.steps_found)) or T("whole_trace"))
    .. "\n\n")
  if r.step and r.step.wall_ms then
    add(T("step_line", r.step.wall_ms, r.step.preparing_ms, r.step.stage_ms) .. "\n\n")
  end
  if #r.findings > 0 then
    add("### " .. T("findings") .. "\n\n")
    for _, f in ipairs(r.findings) do
      add(T("finding_line", f.id, f.severity, f.finding, f.action or "", M.evidence_text(f.evidence)) .. "\n")
    end
    add("\n")
  end
  local cp = r.critical_path
  if cp then
    add(("### %s%s\n\n"):format(T("cp_heading"), mark(set, "critical_path_ratio", "critical_path_comm_share")))
    add(T("cp_busy", cp.busy_union_ms, cp.span_ms, pct(cp.critical_path_ratio)) .. "\n")
    if cp.longest_path_ms then
      add(T("cp_chain", cp.longest_path_ms, cp.longest_path_tasks, cp.dag_nodes, cp.flow_edges, cp.free_ms,
        pct(cp.comm_share)) .. "\n\n")
      local rows = {}
      for c, v in pairs(cp.composition) do rows[#rows + 1] = { c, num(v), ratio_pct(v, cp.longest_path_ms), v } end
      table.sort(rows, function(a, b)
        if a[4] ~= b[4] then return a[4] > b[4] end
        return a[1] < b[1]
      end)
      for _, row in ipairs(rows) do row[4] = nil end
      add(md.table(header("report.timeline.md.cp_header"), rows))
    end
    add("\n")
  end
  local ov = r.overlap
  if ov then
    add(("### %s%s\n\n"):format(T("ov_heading"), mark(set, "overlap_ratio")))
    add(T("ov_line", ov.source, ov.communication_ms, ov.not_overlapped_ms, pct(ov.overlap_ratio), pct(ov.exposed_ratio))
      .. "\n")
    add("\n")
  end
  local al = r.alignment
  if al and al.count > 0 then
    add(T("al_line", al.edges, al.count, al.total_ms) .. "\n\n")
    local rows = {}
    for i, g in ipairs(al.top) do rows[i] = { num(g.gap_ms), g.producer, g.consumer, g.consumer_lane } end
    add(md.table(header("report.timeline.md.al_header"), rows))
    add("\n")
  end
  if r.op_util then
    add(("### %s%s\n\n"):format(T("util_heading"), mark(set, "op_utilization", "max_lane_idle_unexplained")))
    add(T("util_line", r.op_util.compute_busy_ms, r.op_util.span_ms, r.op_util.source, pct(r.op_util.op_utilization))
      .. "\n\n")
  end
  if #r.lanes > 0 then
    local rows = {}
    for i = 1, math.min(#r.lanes, top_n) do
      local l = r.lanes[i]
      rows[i] = { l.name, l.kind, num(l.busy_ms), num(l.span_ms), pct(l.idle_ratio), num(l.max_gap_ms), num(l.gap_p95_ms) }
    end
    add(md.table(header("report.timeline.md.lanes_header"), rows))
    add("\n")
  end
  if r.host then
    local h = r.host
    add(("### %s%s\n\n"):format(T("host_heading"), mark(set, "host_launch_gap_median", "dataloader_serial_ratio")))
    add(T("host_prep", h.preparing_ms, r.step.wall_ms) .. "\n")
    add(T("host_gap", h.launch_gap_ms, pct(h.host_launch_gap_ratio),
      h.launch_gap_median and T("host_median", tostring(h.steps), pct(h.launch_gap_median))
        or (h.host_launch_gap_ratio and T("host_not_recurs") or "")) .. "\n")
    add(T("host_loader", h.dataloader_serial_ms, pct(h.dataloader_serial_ratio)) .. "\n\n")
  end
  if r.pp_bubble then
    local b = r.pp_bubble
    add(("### %s%s\n\n"):format(T("pp_heading"), mark(set, "bubble_excess")))
    add(T("pp_line", b.bubble_ms, b.step_ms, pct(b.pp_bubble_ratio), b.theory and T("pp_theory", pct(b.theory)) or "",
      b.profiler_bubble_ms and T("pp_profiler", b.profiler_bubble_ms) or "") .. "\n\n")
  end
  if r.jitter then
    local j = r.jitter
    add(("### %s%s\n\n"):format(T("jitter_heading"), mark(set, "step_cv", "long_tail_steps", "compute_side_jitter")))
    add(T("jitter_line", j.steps, j.source, j.mean, j.p50, j.p95, j.max, pct(j.cv)) .. "\n")
    if #j.long_tail > 0 then
      local list = {}
      for _, s in ipairs(j.long_tail) do list[#list + 1] = ("%s (%.3f ms)"):format(s.step, s.time_ms) end
      add(T("long_tail", table.concat(list, ", ")) .. "\n")
    end
    if r.comm_jitter then
      add(T("comm_line", r.comm_jitter.column, pct(r.comm_jitter.cv), mark(set, "comm_jitter")) .. "\n")
    end
    add("\n")
  end
  if r.hotspots and #r.hotspots > 0 then
    add(("### %s%s\n\n"):format(T("hot_heading"), mark(set, "raw_top_off_path")))
    local rows = {}
    for i, h in ipairs(r.hotspots) do
      rows[i] = { h.path_rank, h.name, num(h.path_ms), h.path_count, num(h.raw_ms), h.raw_rank }
    end
    add(md.table(header("report.timeline.hotspots_header"), rows))
    add("\n")
  end
  local c = r.compare
  if c and not c.error then
    add("### " .. T("cmp_heading", tostring(c.step), tostring(c.typical)) .. "\n\n")
    local rows = {}
    for i, x in ipairs(c.categories) do rows[i] = { x.name, num(x.long_ms), num(x.typical_ms), num(x.delta_ms) } end
    add(md.table(header("report.timeline.compare_header", tostring(c.step)), rows))
    add("\n" .. T("grew_most", tostring(c.grew_most)) .. "\n\n")
    if #c.operators > 0 then
      local ops = {}
      for i, x in ipairs(c.operators) do ops[i] = { x.name, num(x.long_ms), num(x.typical_ms), num(x.delta_ms) } end
      add(md.table(header("report.timeline.compare_ops_header", tostring(c.step)), ops))
      add("\n")
    end
  elseif c then
    add(("### %s\n\n%s\n\n"):format(T("cmp_not"), T("cmp_not_made", tostring(c.error))))
  end
  add("### " .. T("pd_heading") .. "\n\n")
  if r.phases.applicable then
    add(T("pd_line", r.phases.prefill_ms, r.phases.prefill_count, r.phases.decode_ms, r.phases.decode_count,
      num(r.phases.ttft_ms), num(r.phases.tpot_ms), tostring(r.phases.method)) .. "\n\n")
  else
    add(T("pd_na", tostring(r.phases.reason)) .. "\n\n")
  end
  local nc = {}
  for d, why in pairs(r.not_computed) do nc[#nc + 1] = ("- %s: %s"):format(d, why) end
  table.sort(nc)
  if #nc > 0 then add("### " .. T("not_computed") .. "\n\n" .. table.concat(nc, "\n") .. "\n\n") end
  add("### " .. T("dashboard") .. "\n\n")
  add(M.dashboard_table(r))
  return table.concat(out)
end

function M.report_md(res, path)
  local w, err = writer.open(path)
  if not w then return nil, err end
  local top_n = res.rules.top_n or 10
  w:write("# ", i18n.t("report.title.timeline"), "\n\n")
  w:write(T("intro", res.input, #res.ranks, #res.failed), "\n")
  for _, f in ipairs(res.failed) do w:write("\n", T("failed", tostring(f.rank), tostring(f.role), f.reason)) end
  if #res.ranks > 1 then
    w:write("\n\n## ", T("ranks"), "\n\n")
    local rows = {}
    for i, r in ipairs(res.ranks) do
      local d = r.dashboard
      rows[i] = { r.role, r.rank, num(M.step_ms(r)), pct(d.critical_path_ratio), pct(d.op_utilization),
                  pct(d.overlap_ratio), pct(d.host_launch_gap_ratio), pct(d.step_cv), pct(d.comm_jitter), #r.findings }
    end
    w:write(md.table(header("report.timeline.md.ranks_header"), rows))
    local s = M.summary(res)
    if s.slowest then
      w:write("\n", T("slowest", tostring(s.slowest.rank), tostring(s.slowest.role), s.slowest.step_ms), "\n")
    end
    if s.most_jittery then
      w:write(T("jittery", tostring(s.most_jittery.rank), tostring(s.most_jittery.role), pct(s.most_jittery.cv)), "\n")
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
