--- Host/device alignment: along the flow edges (host launch -> device task) of the step, the
-- widest gaps between a launch and the task it starts (analysis/timeline/path.lua). Reads the
-- edges the critical_path dimension found.
local path = require "ascope.analysis.timeline.path"

local M = { id = "alignment" }

function M.compute(ctx)
  if ctx.edges and #ctx.edges > 0 then ctx.r.alignment = path.alignment(ctx.model, ctx.edges, ctx.top_n) end
end

function M.md(r, kit)
  local al = r.alignment
  if not al or al.count == 0 then return nil end
  local rows = {}
  for i, g in ipairs(al.top) do rows[i] = { kit.num(g.gap_ms), g.producer, g.consumer, g.consumer_lane } end
  return kit.T("al_line", al.edges, al.count, al.total_ms) .. "\n\n"
    .. kit.md_table(kit.header("report.timeline.md.al_header"), rows) .. "\n"
end

return M
