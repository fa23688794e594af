--- Dimension 8, prefill/decode (analysis/timeline/phases.lua): the time and count of each
-- phase and TTFT/TPOT, when the trace is an inference one.
local measure = require("ascope.analysis.timeline.phases").measure
local data_labels = require "ascope.labels"

local M = { id = "phases", without_trace = true }

function M.compute(ctx)
  if ctx.no_trace then
    ctx.r.phases = { applicable = false, reason = ctx.no_trace }
  else
    ctx.r.phases = measure(ctx.model, ctx.w.w0, ctx.w.w1)
  end
end

function M.md(r, kit)
  local p, T = r.phases, kit.T
  local out = "### " .. T("pd_heading") .. "\n\n"
  if p.applicable then
    return out .. T("pd_line", p.prefill_ms, p.prefill_count, p.decode_ms, p.decode_count, kit.num(p.ttft_ms),
      kit.num(p.tpot_ms), data_labels.show("method", p.method)) .. "\n\n"
  end
  return out .. T("pd_na", tostring(p.reason)) .. "\n\n"
end

return M
