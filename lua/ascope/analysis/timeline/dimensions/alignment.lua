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
  -- the gaps overlap (a host that runs ahead has many launches waiting at once): their sum
  -- can be many steps long, so the line gives the count and the widest, not the sum
  return kit.T("al_line", al.edges, al.count, al.top[1] and al.top[1].gap_ms or 0) .. "\n\n"
    .. kit.md_table(kit.header("report.timeline.md.al_header"), rows) .. "\n"
end

return M
