--- Dimension 5, the pipeline bubble: pp_bubble_ratio = union of P2P receive waits / step time,
-- against the theoretical (p-1)/(p-1+m) when --pp and --microbatches are given.
local function ms(ns) return ns and ns / 1e6 end
local function ratio(a, b) return (a and b and b > 0) and a / b or nil end

local t = require("ascope.i18n").t

local M = { id = "pp_bubble", explain = true }

function M.compute(ctx)
  local r, s, w, opts = ctx.r, ctx.s, ctx.w, ctx.opts
  if not s then return end
  if ctx.sets.p2p_wait:clip(w.d0, w.d1):total() > 0 then
    r.pp_bubble = { pp_bubble_ratio = ratio(s.bubble, ctx.wall), bubble_ms = ms(s.bubble), step_ms = ms(ctx.wall) }
    local row = ctx.step_row
    if row and row.bubble_us then r.pp_bubble.profiler_bubble_ms = row.bubble_us / 1000 end
    if opts.pp and opts.microbatches then
      local theory = (opts.pp - 1) / (opts.pp - 1 + opts.microbatches)
      r.pp_bubble.theory = theory
      r.pp_bubble.excess = r.pp_bubble.pp_bubble_ratio - theory
    end
  end
  if ctx.lo and not r.pp_bubble then r.not_computed.pp_bubble = t("timeline.why.no_p2p") end
end

M.dashboard = {
  { key = "pp_bubble_ratio", order = 5, rule_metric = "bubble_excess",
    value = function(r) return r.pp_bubble and r.pp_bubble.pp_bubble_ratio end },
}

function M.md(r, kit)
  local b = r.pp_bubble
  if not b then return nil end
  local T, pct = kit.T, kit.pct
  return ("### %s%s\n\n"):format(T("pp_heading"), kit.mark("bubble_excess"))
    .. T("pp_line", b.bubble_ms, b.step_ms, pct(b.pp_bubble_ratio), b.theory and T("pp_theory", pct(b.theory)) or "",
      b.profiler_bubble_ms and T("pp_profiler", b.profiler_bubble_ms) or "") .. "\n\n"
end

return M
