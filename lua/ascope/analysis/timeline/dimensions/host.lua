--- Dimension 4, host/device: host_launch_gap_ratio = compute gaps not covered by communication
-- or P2P ops but covered by host launch/sync activity / stage; host-bound gaps must recur, so
-- the rule tests the median over the steps of each step's ratio. Also the host-only time
-- before the stage and the dataloader time not overlapped with the device.
local stats = require "ascope.analysis.stats"
local t = require("ascope.i18n").t
local jitter = require "ascope.analysis.timeline.jitter"

local function ms(ns) return ns and ns / 1e6 end
local function ratio(a, b) return (a and b and b > 0) and a / b or nil end

local M = { id = "host", explain = true }

local HOST_KINDS = { host = true, other = true }

function M.compute(ctx)
  local r, s, m = ctx.r, ctx.s, ctx.model
  if not s then return end
  r.host = { host_launch_gap_ratio = ratio(s.launch_gap, s.stage), launch_gap_ms = ms(s.launch_gap),
             preparing_ms = ms(ctx.preparing), dataloader_serial_ms = ms(s.dataloader_serial),
             dataloader_serial_ratio = ratio(s.dataloader_serial, ctx.wall) }
  if #m.tagged_rows(m, "host_launch", HOST_KINDS) == 0 then
    r.host.host_launch_gap_ratio = nil
    r.not_computed.host = t("timeline.why.no_host")
  end
  -- fewer than jitter.MIN_STEPS steps cannot show recurrence
  if ctx.splits and r.host.host_launch_gap_ratio then
    local ratios = {}
    for _, split in ipairs(ctx.splits) do
      if not split.empty and split.stage > 0 then ratios[#ratios + 1] = split.launch_gap / split.stage end
    end
    r.host.steps = #ratios
    table.sort(ratios)
    if #ratios >= jitter.MIN_STEPS then r.host.launch_gap_median = stats.percentile(ratios, 50) end
  end
end

M.dashboard = {
  { key = "host_launch_gap_ratio", order = 4, rule_metric = "host_launch_gap_median",
    value = function(r) return r.host and r.host.host_launch_gap_ratio end },
}

function M.md(r, kit)
  local h = r.host
  if not h then return nil end
  local T, pct = kit.T, kit.pct
  return ("### %s%s\n\n"):format(T("host_heading"), kit.mark("host_launch_gap_median", "dataloader_serial_ratio"))
    .. T("host_prep", h.preparing_ms, r.step.wall_ms) .. "\n"
    .. T("host_gap", h.launch_gap_ms, pct(h.host_launch_gap_ratio),
      h.launch_gap_median and T("host_median", tostring(h.steps), pct(h.launch_gap_median))
        or (h.host_launch_gap_ratio and T("host_not_recurs") or "")) .. "\n"
    .. T("host_loader", h.dataloader_serial_ms, pct(h.dataloader_serial_ratio)) .. "\n\n"
end

return M
