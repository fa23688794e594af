-- Flow edges against the definition: each flow end binds to the slice of its lane with the latest
-- start that holds its time (ties to the later row); a flow whose start or end has no time is
-- counted as skipped, one that ends outside the step is left out.
local core = require "ascope_core"
local path = require "ascope.analysis.timeline.path"
local column = core.column

local function icol(list, n)
  local c = column.new("integer")
  for i = 1, n do c:push(list[i] or nil) end
  return c
end

local function brute(rows, starts, ends, w0, w1)
  local s_by_id = {}
  for _, r in ipairs(starts) do
    if rows[r].flow then s_by_id[rows[r].flow] = r end
  end
  local function holder(lane, t)
    local best
    for i, x in ipairs(rows) do
      if x.ph == "X" and x.lane == lane and x.ts and x.dur and x.ts <= t and t <= x.ts + x.dur
        and (not best or x.ts >= rows[best].ts) then best = i end
    end
    return best
  end
  local edges, skipped = {}, 0
  for _, r in ipairs(ends) do
    local s = rows[r].flow and s_by_id[rows[r].flow]
    local t = rows[r].ts
    if s and (not t or not rows[s].ts) then
      skipped = skipped + 1
    elseif s and t >= w0 and t < w1 then
      local c, p = holder(rows[r].lane, t), holder(rows[s].lane, rows[s].ts)
      if c and p and c ~= p then edges[#edges + 1] = { p, c } end
    end
  end
  return edges, skipped
end

describe("timeline flow edges", function()
  it("bind each end to the slice that holds it, as the definition says, on random traces", function()
    math.randomseed(5)
    local total_edges, total_skipped = 0, 0
    for _ = 1, 200 do
      local rows, starts, ends = {}, {}, {}
      local n = math.random(1, 80)
      local untimed = math.random(1, 3) == 1
      for i = 1, n do
        local kind = math.random(1, 4)
        local x = { lane = math.random(1, 3), ts = math.random(0, 40) * 5 }
        if kind <= 2 then
          x.ph, x.dur = "X", math.random(1, 8) > 1 and math.random(0, 10) * 5 or nil
        else
          x.ph, x.flow = kind == 3 and "s" or "f", tostring(math.random(1, 12))
          if untimed and math.random(1, 6) == 1 then x.ts = nil end
          if kind == 3 then starts[#starts + 1] = i else ends[#ends + 1] = i end
        end
        rows[i] = x
      end
      local lane, ts, dur, flow = {}, {}, {}, column.new("string")
      for i, x in ipairs(rows) do
        lane[i], ts[i], dur[i] = x.lane, x.ts, x.dur
        flow:push(x.flow)
      end
      local tl = { lane = icol(lane, n), ts = icol(ts, n), dur = icol(dur, n), flow = flow }
      local m = { tl = tl, flow_starts = icol(starts, #starts), flow_ends = icol(ends, #ends) }
      m.flow_start_ids, m.flow_end_ids = flow:take(m.flow_starts), flow:take(m.flow_ends) -- as the model keeps them
      local w0 = math.random(0, 150)
      local w1 = w0 + math.random(0, 100)
      local want, want_skipped = brute(rows, starts, ends, w0, w1)
      local got, got_skipped = path.flow_edges(m, w0, w1)
      assert.same(want, got)
      assert.equal(want_skipped, got_skipped)
      total_edges, total_skipped = total_edges + #got, total_skipped + got_skipped
    end
    -- the random traces exercised both outcomes
    assert.is_true(total_edges > 80)
    assert.is_true(total_skipped > 50)
  end)

  it("keep the top n alignment gaps, ties to the earlier consumer, then the earlier producer", function()
    -- rows 1-6 host launches, rows 7-8 kernels; every launch ends at 10, so the gaps into one
    -- kernel tie, whatever order the edges come in
    local n = 8
    local ts = { 5, 6, 7, 8, 9, 4, 50, 40 }
    local dur = { 5, 4, 3, 2, 1, 6, 1, 1 }
    local names = column.new("string")
    for i = 1, n do names:push(("op%d"):format(i)) end
    local m = { tl = { ts = icol(ts, n), dur = icol(dur, n), name = names, lane = icol({ 1, 1, 1, 1, 1, 1, 2, 2 }, n) },
                lanes = { { name = "host" }, { name = "device" } } }
    local edges = { { 4, 7 }, { 2, 7 }, { 6, 7 }, { 1, 8 }, { 3, 7 }, { 5, 7 } } -- gaps 40 into row 7, 30 into row 8
    local a = path.alignment(m, edges, 3)
    assert.equal(6, a.count)
    assert.near(230 / 1e6, a.total_ms, 1e-15)
    local got = {}
    for k, g in ipairs(a.top) do got[k] = g.producer .. ">" .. g.consumer end
    assert.same({ "op2>op7", "op3>op7", "op4>op7" }, got)
    local all = path.alignment(m, edges, 10).top
    assert.equal(6, #all)
    assert.same({ "op6", "op1" }, { all[5].producer, all[6].producer }) -- op6 is the last into row 7
  end)
end)
