--- Dimension 2, compute/communication overlap: overlap_ratio = 1 - Communication(Not Overlapped)
-- / Communication from the profiler's composition of the step (its Overlap Analysis lanes when
-- the trace has them, else its step split's row: ctx.comp_lanes), else
-- compute-intersect-communication / communication over the device tasks. Either way a
-- pipeline's receive waits are left out: they are its bubble, no communication compute could
-- hide (from the lanes, as the profiler's Communication(Not Overlapped and Exclude Receive)).
local function ms(ns) return ns and ns / 1e6 end

local t = require("ascope.i18n").t
local data_labels = require "ascope.labels"

local M = { id = "overlap", explain = true, without_trace = true }

function M.compute(ctx)
  local r, lanes, s = ctx.r, ctx.comp_lanes, ctx.s
  if not (ctx.step_lo or ctx.no_trace) then return end -- without a trace: the step split's row
  local comm = lanes and lanes.communication and lanes.communication - lanes.bubble
  if comm and comm > 0 then
    -- within [0, comm]: a split whose row does not add up (more not overlapped than there is
    -- communication) gives no ratio outside 0..1
    local not_overlapped = math.min(math.max((lanes.not_overlapped or 0) - lanes.bubble, 0), comm)
    r.overlap = { source = lanes.source, overlap_ratio = 1 - not_overlapped / comm, exposed_ratio = not_overlapped / comm,
                  communication_ms = ms(comm), not_overlapped_ms = ms(not_overlapped),
                  receive_wait_ms = lanes.bubble > 0 and ms(lanes.bubble) or nil,
                  computing_ms = ms(lanes.computing), free_ms = ms(lanes.free) }
  elseif s and s.comm > 0 then
    r.overlap = { source = data_labels.TASKS, overlap_ratio = 1 - s.exposed / s.comm, exposed_ratio = s.exposed / s.comm,
                  communication_ms = ms(s.comm), not_overlapped_ms = ms(s.exposed), computing_ms = ms(s.compute),
                  free_ms = ms(s.free) }
  end
  if ctx.lo and not r.overlap then
    r.not_computed.overlap = t("timeline.why.no_comm_in_step")
  end
end

M.dashboard = {
  { key = "overlap_ratio", order = 3, value = function(r) return r.overlap and r.overlap.overlap_ratio end },
}

function M.md(r, kit)
  local ov = r.overlap
  if not ov then return nil end
  local T, pct = kit.T, kit.pct
  return ("### %s%s\n\n"):format(T("ov_heading"), kit.mark("overlap_ratio"))
    .. T("ov_line", data_labels.show("source", ov.source), ov.communication_ms, ov.not_overlapped_ms,
      pct(ov.overlap_ratio), pct(ov.exposed_ratio))
    .. "\n\n"
end

M.html = {
  overlap = function(_, sec, r, kit)
    local ov = r.overlap
    if not ov then return nil end
    local labels, values = {}, {}
    for _, k in ipairs({ { "computing", ov.computing_ms }, { "communication", ov.communication_ms },
                         { "not_overlapped", ov.not_overlapped_ms }, { "free", ov.free_ms } }) do
      if k[2] then
        labels[#labels + 1] = kit.t("report.timeline." .. k[1])
        values[#values + 1] = k[2]
      end
    end
    return ("<p>%s</p>"):format(kit.esc(kit.t("report.timeline.overlap_note", kit.pct(ov.overlap_ratio),
      kit.pct(ov.exposed_ratio), tostring(ov.source)))) .. kit.svg.bars({ title = kit.t(sec.title), labels = labels,
      values = values, unit = "ms", value_label = kit.t("report.timeline.time_in_step") })
  end,
}

return M
