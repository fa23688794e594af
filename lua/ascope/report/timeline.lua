--- Writers of `ascope timeline` results: timeline_metrics.json, timeline_report.md and the
-- short text summary.
local core = require "ascope_core"
local md = require "ascope.report.md"
local writer = require "ascope.report.writer"
local analysis = require "ascope.analysis.timeline"
local dimensions = require "ascope.analysis.timeline.dimensions"
local fmt = require "ascope.fmt"
local i18n = require "ascope.i18n"
local json = core.json
local header = require("ascope.report.html").header

-- a message of the Markdown report (ascope/locale: report.timeline.md.*)
local function T(key, ...) return i18n.t("report.timeline.md." .. key, ...) end

local M = {}

local array = require("ascope.fmt").array

-- what every dimension's json(r, kit) and md(r, kit) may use
local function json_of(d, r)
  if d.json then return d.json(r, { array = array }) end
  return { [d.id] = r[d.id] }
end

local function rank_data(r)
  local data = {
    role = r.role, rank = r.rank, trace = r.trace, step_trace = r.step_trace, events = r.events,
    step = r.step, steps_found = r.steps_found,
    dashboard = r.dashboard, findings = array(r.findings), not_computed = r.not_computed,
  }
  for _, d in ipairs(dimensions.list) do
    for k, v in pairs(json_of(d, r)) do data[k] = v end
  end
  return data
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
  if e.step ~= nil then parts[#parts + 1] = i18n.t("report.timeline.step", tostring(e.step)) end
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
  return md.table(header("report.timeline.dashboard_header"), rows)
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
  -- each dimension's own section, in the registry's order
  local kit = { T = T, pct = pct, num = num, ratio_pct = ratio_pct, md_table = md.table, header = header, top_n = top_n,
                mark = function(...) return mark(set, ...) end }
  for _, d in ipairs(dimensions.list) do
    local text = d.md and d.md(r, kit)
    if text then add(text) end
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
    lines[#lines + 1] = ("rank %s%s: %s"):format(r.rank, role,
      #parts > 0 and table.concat(parts, ", ") or i18n.t("timeline.no_metrics"))
    -- a warning or error is marked as the seed's scripts mark a line crossed; a note (info) is not
    for _, f in ipairs(r.findings) do
      lines[#lines + 1] = ("  %s %s: %s [%s]"):format(f.severity == "info" and "ℹ" or "⚠", f.id, f.finding,
        M.evidence_text(f.evidence))
    end
  end
  return table.concat(lines, "\n")
end

return M
