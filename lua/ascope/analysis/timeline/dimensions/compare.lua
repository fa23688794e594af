--- The long step against the typical one (analysis/timeline/compare.lua): what part of the
-- step and which operators grew. Reads the long-tail steps of the jitter dimension.
local steps = require("ascope.analysis.timeline.compare").steps

local M = { id = "compare" }

function M.compute(ctx)
  local r = ctx.r
  if ctx.splits and (r.jitter or ctx.opts.compare_step) then
    r.compare = steps(ctx.model, ctx.sets, ctx.wins, ctx.k, r.jitter and r.jitter.long_tail or {}, ctx.opts.compare_step,
      ctx.top_n)
  end
end

function M.json(r, kit)
  local c = r.compare
  return { compare = c and (c.error and c or {
    step = c.step, typical = c.typical, grew_most = c.grew_most,
    categories = kit.array(c.categories), operators = kit.array(c.operators) }) }
end

local function rows_of(list, fmt)
  local rows = {}
  for i, x in ipairs(list) do rows[i] = { x.name, fmt(x.long_ms), fmt(x.typical_ms), fmt(x.delta_ms) } end
  return rows
end

function M.md(r, kit)
  local c = r.compare
  if not c then return nil end
  local T = kit.T
  if c.error then return ("### %s\n\n%s\n\n"):format(T("cmp_not"), T("cmp_not_made", tostring(c.error))) end
  local out = { "### " .. T("cmp_heading", tostring(c.step), tostring(c.typical)) .. "\n\n",
                kit.md_table(kit.header("report.timeline.compare_header", tostring(c.step)), rows_of(c.categories, kit.num)),
                "\n" .. (c.grew_most and T("grew_most", c.grew_most) or T("grew_none")) .. "\n\n" }
  if #c.operators > 0 then
    out[#out + 1] = kit.md_table(kit.header("report.timeline.compare_ops_header", tostring(c.step)),
      rows_of(c.operators, kit.num)) .. "\n"
  end
  return table.concat(out)
end

local function ms3(v) return ("%.3f"):format(v) end

M.html = {
  compare = function(_, _, r, kit)
    local c = r.compare
    if not c or c.error then return nil end
    local note = c.grew_most and kit.t("report.timeline.compare_note", tostring(c.step), tostring(c.typical), c.grew_most)
      or kit.t("report.timeline.compare_note_none", tostring(c.step), tostring(c.typical))
    local out = { ("<p>%s</p>"):format(kit.esc(note)), kit.html.table(kit.header("report.timeline.compare_header", tostring(c.step)),
      rows_of(c.categories, ms3)) }
    if #c.operators > 0 then
      out[#out + 1] = kit.html.table(kit.header("report.timeline.compare_ops_header", tostring(c.step)),
        rows_of(c.operators, ms3))
    end
    return table.concat(out)
  end,
}

return M
