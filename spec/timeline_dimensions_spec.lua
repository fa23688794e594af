-- The timeline dimensions are a registry: a made-up dimension is one module and one register()
-- call, and it reaches the analysis, the dashboard, timeline_metrics.json, timeline_report.md
-- and timeline_report.html; taken out again, the outputs are byte for byte what they were.
local core = require "ascope_core"
local h = require "helper"
local timeline = require "ascope.timeline"
local dimensions = require "ascope.analysis.timeline.dimensions"
local report = require "ascope.report.timeline"

-- the new dimension, as a user would write it: the share of the typical step's wall time that
-- is its stage, and the number of lanes the step uses
local MODULE = [[
local M = { id = "made_up", explain = true }
function M.compute(ctx)
  if not ctx.lo then return end
  ctx.r.made_up = { stage_share = ctx.r.step.stage_ms / ctx.r.step.wall_ms, lanes = #ctx.r.lanes }
end
M.dashboard = { { key = "made_up_share", value = function(r) return r.made_up and r.made_up.stage_share end } }
function M.md(r, kit)
  if not r.made_up then return nil end
  return "### Made-up dimension" .. kit.mark("made_up_share") .. "\n\n" .. ("%d lanes, stage share %s\n\n"):format(
    r.made_up.lanes, kit.pct(r.made_up.stage_share))
end
M.html = {
  made_up = function(_, _, r, kit)
    if not r.made_up then return nil end
    return ("<p>%s</p>"):format(kit.esc(("%d lanes & a stage share of %s"):format(r.made_up.lanes, kit.pct(r.made_up.stage_share))))
  end,
}
M.section = { id = "made_up", kind = "made_up", title = { en = "Made-up dimension", zh = "虚构维度" }, after = "hotspots" }
return M
]]

describe("timeline dimensions", function()
  local dir, saved_path
  local input = h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt"
  before_each(function()
    dir = h.tmpdir()
    saved_path = package.path
  end)
  after_each(function()
    dimensions.unregister("made_up")
    package.loaded.made_up_dimension = nil
    package.path = saved_path
    h.cleanup(dir)
  end)

  local function run_and_write(out)
    local res = assert(timeline.run({ input = input, jobs = 1 }))
    assert(timeline.write(res, out, { jobs = 1 }))
    return res, h.files(out)
  end

  it("a made-up dimension is one module and one register() call", function()
    local _, before = run_and_write(dir .. "/before")
    h.write(dir .. "/mods/made_up_dimension.lua", MODULE)
    package.path = dir .. "/mods/?.lua;" .. package.path
    dimensions.register(require "made_up_dimension") -- the registration

    local res, files = run_and_write(dir .. "/with")
    local r = res.ranks[1]
    -- computed from the same step the other dimensions read
    assert.equal(r.step.stage_ms / r.step.wall_ms, r.made_up.stage_share)
    assert.is_true(r.made_up.stage_share > 0 and r.made_up.stage_share <= 1)
    assert.equal(#r.lanes, r.made_up.lanes)
    assert.is_true(r.made_up.lanes > 0)
    assert.equal(r.made_up.stage_share, r.dashboard.made_up_share)
    -- timeline_metrics.json: the dimension's key and its dashboard key (one rank: also at the top)
    local metrics = core.json.decode(files["./timeline_metrics.json"])
    assert.equal(r.made_up.lanes, metrics.ranks[1].made_up.lanes)
    assert.equal(r.made_up.stage_share, metrics.ranks[1].dashboard.made_up_share)
    assert.equal(r.made_up.lanes, metrics.made_up.lanes)
    -- timeline_report.md: its section after the others, and its key on the dashboard
    local md = files["./timeline_report.md"]
    local at = md:find("### Made-up dimension\n\n" .. r.made_up.lanes .. " lanes, stage share ", 1, true)
    assert.truthy(at, md)
    assert.truthy(at > md:find("Critical-path hotspots\n", 1, true))
    assert.truthy(md:find("| made_up_share | " .. ("%.4f"):format(r.made_up.stage_share) .. " |", 1, true), md)
    -- timeline_report.html: its own section where it asked to be, after the hotspots
    local page = files["./timeline_report.html"]
    local sec = page:find('<section id="made_up-0"><h2>Made-up dimension - msinsight_pytorch_text_level0 rank 0</h2><p>' .. r.made_up.lanes
      .. " lanes &amp; a stage share of ", 1, true)
    assert.truthy(sec, "no made_up section in the HTML")
    assert.truthy(sec > page:find('<section id="hotspots-0">', 1, true))
    assert.truthy(sec < page:find('<section id="dashboard-0">', 1, true))
    assert.truthy(page:find("<th>made_up_share</th>", 1, true)) -- the ranks table shows every dashboard key
    -- the console summary lists it with the others
    assert.truthy(report.text(res):find("made_up_share ", 1, true))
    -- every other byte is unchanged: without it, the outputs are those of before
    assert.is_true(dimensions.unregister("made_up"))
    local _, after = run_and_write(dir .. "/after")
    assert.same(before, after)
    assert.is_nil(after["./timeline_metrics.json"]:find("made_up", 1, true))
  end)

  it("its dashboard key is a metric the expert rules can test", function()
    h.write(dir .. "/rules.lua", [[return { rules = {
      { id = "stage_short", metric = "made_up_share", op = "<", value = 0.9, severity = "warning",
        finding = { en = "the stage is only %s of the step", zh = "stage 仅占 step 的 %s" } },
      { id = "stage_long", metric = "made_up_share", op = ">", value = 0.9, severity = "warning",
        finding = { en = "the stage is %s of the step", zh = "stage 占 step 的 %s" } },
    } }]])
    -- unknown before the dimension is registered: the rule file is a usage error naming the metric
    local none, err, kind = timeline.run({ input = input, rules = dir .. "/rules.lua", jobs = 1 })
    assert.is_nil(none)
    assert.equal("usage", kind)
    assert.truthy(tostring(err):find('"made_up_share" is not one of', 1, true), tostring(err))
    h.write(dir .. "/mods/made_up_dimension.lua", MODULE)
    package.path = dir .. "/mods/?.lua;" .. package.path
    dimensions.register(require "made_up_dimension")
    local res = assert(timeline.run({ input = input, rules = dir .. "/rules.lua", jobs = 1 }))
    local r = res.ranks[1]
    assert.is_true(r.made_up.stage_share < 0.9) -- 84.9% on this rank
    local fired = {}
    for _, a in ipairs(timeline.anomalies(res)) do
      if a.metric == "made_up_share" then fired[#fired + 1] = a end
    end
    assert.equal(1, #fired)
    assert.equal("stage_short", fired[1].id)
    assert.equal(r.made_up.stage_share, fired[1].value)
    assert.equal(("the stage is only %.1f%% of the step"):format(r.made_up.stage_share * 100), fired[1].message)
    -- and once it is gone, the metric is unknown again
    dimensions.unregister("made_up")
    assert.is_nil(timeline.run({ input = input, rules = dir .. "/rules.lua", jobs = 1 }))
  end)

  it("a dimension that cannot be computed says why; a clashing dashboard key is refused", function()
    h.write(dir .. "/mods/made_up_dimension.lua", MODULE)
    package.path = dir .. "/mods/?.lua;" .. package.path
    dimensions.register(require "made_up_dimension")
    -- a rank with only the profiler's step split: no trace, so only the jitter (one step: too
    -- few), the overlap and the utilisation (the split's own) are tried, and every other
    -- dimension says why it is missing
    local res = assert(timeline.run({ input = input .. "/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", jobs = 1 }))
    local r = res.ranks[1]
    assert.is_nil(r.made_up)
    assert.is_nil(r.dashboard.made_up_share)
    assert.truthy(r.not_computed.made_up:find("no trace", 1, true), r.not_computed.made_up)
    assert.equal("only 1 step(s): step CV needs at least 3", r.not_computed.jitter)
    assert.equal(r.not_computed.critical_path, r.not_computed.made_up)
    local ok, err = pcall(dimensions.register, { id = "again", compute = function() end,
                                                 dashboard = { { key = "op_utilization", value = function() end } } })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("dashboard key op_utilization belongs to dimension op_util", 1, true), err)
    assert.is_nil(dimensions.get("again"))
  end)

  it("the bundled dimensions, in the order of their sections", function()
    local ids = {}
    for i, d in ipairs(dimensions.list) do ids[i] = d.id end
    assert.same({ "critical_path", "overlap", "alignment", "op_util", "host", "pp_bubble", "jitter", "hotspots", "compare",
                  "phases" }, ids)
    assert.same({ "critical_path_ratio", "op_utilization", "overlap_ratio", "host_launch_gap_ratio", "pp_bubble_ratio",
                  "step_cv", "max_lane_idle", "comm_jitter" }, dimensions.DASHBOARD_KEYS)
  end)
end)
