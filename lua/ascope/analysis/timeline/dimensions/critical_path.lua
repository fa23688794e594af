--- Dimension 1, the critical path: critical_path_ratio = busy union of compute, communication
-- and copy tasks / stage; the longest dependency chain through the step (analysis/timeline/path.lua)
-- and what it is made of. Leaves ctx.edges (the flow edges) and ctx.path (the longest chain) for
-- the alignment and hotspots dimensions.
local path = require "ascope.analysis.timeline.path"

local function ms(ns) return ns and ns / 1e6 end
local function ratio(a, b) return (a and b and b > 0) and a / b or nil end

local M = { id = "critical_path", explain = true }

function M.compute(ctx)
  if not ctx.lo then return end
  local r, m, w, lo, hi = ctx.r, ctx.model, ctx.w, ctx.lo, ctx.hi
  local sets = ctx.sets
  local dev = sets.compute:union(sets.comm):union(sets.copy):clip(lo, hi)
  local stage = hi - lo
  -- 1 - Free / Stage as the profiler has it: its Stage leaves a pipeline's receive waits out
  -- (Bubble), and so does the busy time over it
  local bubble = sets.p2p_wait:clip(lo, hi):total()
  -- a flow ends on a host slice (the framework's enqueue to its dequeue) or on a device task:
  -- the flows of both sides of the window
  local edges, skipped = path.flow_edges(m, w.w0, w.w1, w.d0, w.d1)
  if skipped > 0 then
    r.warnings[#r.warnings + 1] = require("ascope.i18n").t("timeline.flows_skipped", skipped)
  end
  ctx.edges = edges -- the alignment's: flows only
  local waits = path.sync_edges(m, w.d0, w.d1)
  r.critical_path = { critical_path_ratio = ratio(dev:total() - bubble, stage - bubble), busy_union_ms = ms(dev:total()),
                      span_ms = ms(stage), flow_edges = #edges, wait_edges = #waits }
  local all = waits -- the waits, then the flows (a step may hold more edges than Lua's stack)
  for _, e in ipairs(edges) do all[#all + 1] = e end
  local len, p, nnodes, gain, comm_time = path.longest(m, w.d0, w.d1, lo, hi, all)
  if len then
    local cp = r.critical_path
    cp.longest_path_ms, cp.longest_path_tasks, cp.dag_nodes = ms(len), #p, nnodes
    cp.composition = path.composition(m, p, gain)
    cp.off_path_ms = ms(stage - len) -- not the profiler's Free: time of the stage off the longest chain
    local comm_ms = (cp.composition.comm or 0) + (cp.composition.p2p or 0)
    cp.comm_share = ratio(comm_ms, cp.longest_path_ms)
    ctx.path = { tasks = p, gain = gain, comm_time = comm_time }
  end
end

M.dashboard = {
  { key = "critical_path_ratio", order = 1,
    value = function(r) return r.critical_path and r.critical_path.critical_path_ratio end },
}

function M.md(r, kit)
  local cp = r.critical_path
  if not cp then return nil end
  local T, pct, num = kit.T, kit.pct, kit.num
  local out = { ("### %s%s\n\n"):format(T("cp_heading"), kit.mark("critical_path_ratio", "critical_path_comm_share")),
                T("cp_busy", cp.busy_union_ms, cp.span_ms, pct(cp.critical_path_ratio)) .. "\n" }
  if cp.longest_path_ms then
    out[#out + 1] = T("cp_chain", cp.longest_path_ms, cp.longest_path_tasks, cp.dag_nodes, cp.flow_edges,
      cp.wait_edges, cp.off_path_ms,
      pct(cp.comm_share)) .. "\n\n"
    local rows = {}
    for c, v in pairs(cp.composition) do rows[#rows + 1] = { c, num(v), kit.ratio_pct(v, cp.longest_path_ms), v } end
    table.sort(rows, function(a, b)
      if a[4] ~= b[4] then return a[4] > b[4] end
      return a[1] < b[1]
    end)
    for _, row in ipairs(rows) do row[4] = nil end
    out[#out + 1] = kit.md_table(kit.header("report.timeline.md.cp_header"), rows)
  end
  out[#out + 1] = "\n"
  return table.concat(out)
end

-- the longest chain's composition as bars, largest first, then the time off the chain
local function composition_bars(res_sec, cp, kit)
  local labels, values = {}, {}
  for c, v in pairs(cp.composition) do
    labels[#labels + 1] = c
    values[#values + 1] = v
  end
  local order = {}
  for i = 1, #labels do order[i] = i end
  table.sort(order, function(a, b)
    if values[a] ~= values[b] then return values[a] > values[b] end
    return labels[a] < labels[b]
  end)
  local l2, v2 = {}, {}
  for i, k in ipairs(order) do l2[i], v2[i] = labels[k], values[k] end
  l2[#l2 + 1], v2[#v2 + 1] = kit.t("report.timeline.off_path"), cp.off_path_ms
  return kit.svg.bars({ title = kit.t(res_sec.title), labels = l2, values = v2, unit = "ms",
                        value_label = kit.t("report.timeline.time_on_path") })
end

M.html = {
  critical_path = function(_, sec, r, kit)
    local cp = r.critical_path
    if not cp or not cp.composition then return nil end
    return ("<p>%s</p>"):format(kit.esc(kit.t("report.timeline.path_note", kit.pct(cp.critical_path_ratio),
      cp.longest_path_ms, cp.longest_path_tasks, cp.span_ms))) .. composition_bars(sec, cp, kit)
  end,
}

return M
