--- Dimension 7, hotspots: the operators that take most of the longest chain, against the raw
-- top by total time (analysis/timeline/path.lua); raw_top_off_path when the raw top is not on
-- the chain. Reads the chain the critical_path dimension found.
local path = require "ascope.analysis.timeline.path"

local M = { id = "hotspots", explain = true }

function M.compute(ctx)
  local p = ctx.path
  if not p then return end
  local r = ctx.r
  r.hotspots, r.raw_top, r.raw_top_off_path =
    path.hotspots(ctx.model, p.tasks, p.gain, p.comm_time, ctx.w.d0, ctx.w.d1, ctx.top_n)
end

function M.json(r, kit) return { hotspots = kit.array(r.hotspots) } end

function M.md(r, kit)
  if not r.hotspots or #r.hotspots == 0 then return nil end
  local rows = {}
  for i, h in ipairs(r.hotspots) do
    rows[i] = { h.path_rank, h.name, kit.num(h.path_ms), h.path_count, kit.num(h.raw_ms), h.raw_rank }
  end
  return ("### %s%s\n\n"):format(kit.T("hot_heading"), kit.mark("raw_top_off_path"))
    .. kit.md_table(kit.header("report.timeline.hotspots_header"), rows) .. "\n"
end

M.html = {
  hotspots = function(_, _, r, kit)
    if not r.hotspots or #r.hotspots == 0 then return nil end
    local rows = {}
    for i, h in ipairs(r.hotspots) do rows[i] = { h.path_rank, h.name, h.path_ms, h.path_count, h.raw_ms, h.raw_rank } end
    return kit.html.table(kit.header("report.timeline.hotspots_header"), rows)
  end,
}

return M
