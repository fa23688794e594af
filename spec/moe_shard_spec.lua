-- `ascope moe --shard K/N` over card folders and `ascope merge` of the parts: the per-card work is
-- what a shard saves, the cross-card checks (6, 7), the wait-for graph, the root cards and the
-- verdict run in the merge, and the merged outputs are the single run's, byte for byte.
local h = require "helper"
local mh = require "moe_helper"

local files, unpath, count = h.files, h.unpath, h.count

-- the shards of `ascope moe ARGS...`; a shard prints no per-card lines: the merge tells them, in
-- card order
local function shards(dir, n, args)
  local parts, errs = h.shards(dir, n, { "moe", table.unpack(args) })
  for _, err in ipairs(errs) do assert.equal("", err) end
  return parts
end

describe("moe --shard and merge", function()
  local dir
  setup(function() dir = h.tmpdir() end)
  teardown(function() h.cleanup(dir) end)

  -- 12 cards; card 5 raised the exception and sent nothing in the stuck dispatch; bad = a card
  -- whose dump is cut short
  local function cluster(name, state, bad)
    local tree = dir .. "/" .. name
    local cards = mh.cluster({ cards = 12, moe = 24, cores = 4, state = state, fault = state ~= "healthy" and 5 or nil })
    mh.write_cluster(tree, cards, "mc2")
    if bad then
      local p = io.popen(("find '%s/%d' -type f -name 'mc2*' | head -1"):format(tree, bad))
      local victim = p:read("l")
      p:close()
      h.write(victim, h.read(victim):sub(1, 200))
    end
    return tree
  end

  for _, case in ipairs({
    { name = "dispatch-stuck", state = "dispatch_stuck", code = 0, root = 5 },
    { name = "healthy", state = "healthy", code = 0 },
    { name = "bad-card", state = "dispatch_stuck", bad = 8, code = 1, root = 5 },
  }) do
    it(case.name .. ": N = 1, 3 and 7 shards merge to the single run's bytes, stdout, stderr and exit code", function()
      local tree = cluster(case.name, case.state, case.bad)
      local args = { "TARGET_DIR=" .. tree, "SOC_VERSION=950" }
      local single = dir .. "/" .. case.name .. "-single"
      local code, out, err = h.run("moe", args[1], args[2], "-o", single)
      assert.equal(case.code, code, err)
      -- the single run is right before it is compared with: the root card and the verdict
      local summary = h.read(single .. "/moe_summary.json")
      if case.root then
        assert.truthy(out:find("[ERROR]", 1, true), out)
        assert.truthy(summary:find('"root_cards": %[%s*' .. case.root .. "%s*%]"), summary:sub(1, 400))
      else
        assert.falsy(out:find("[ERROR]", 1, true), out)
        assert.falsy(out:find("[WARNING]", 1, true), out)
      end
      if case.bad then assert.truthy(out:find(tree .. "/" .. case.bad, 1, true), out) end
      local want = files(single)
      assert.equal(8, count(want))
      for _, n in ipairs({ 1, 3, 7 }) do
        local parts = shards(dir .. "/parts-" .. case.name, n, args)
        local merged = ("%s/%s-merged-%d"):format(dir, case.name, n)
        local margs = { "merge", table.unpack(parts) }
        margs[#margs + 1], margs[#margs + 2] = "-o", merged
        local mcode, mout, merr = h.run(table.unpack(margs))
        assert.equal(code, mcode, merr)
        assert.equal(unpath(out, single), unpath(mout, merged))
        -- stderr: the same lines once the merge's own stage line is left out
        merr = merr:gsub("^%[ascope%] merging [^\n]*\n", "")
        assert.equal(unpath(err, single), unpath(merr, merged))
        local got = files(merged)
        for name, bytes in pairs(want) do assert.equal(bytes, got[name], name .. " after " .. n .. " shard(s)") end
        assert.equal(count(want), count(got))
      end
    end)
  end

  it("a missing shard, a duplicated shard and parts of other options are errors naming them", function()
    local tree = dir .. "/dispatch-stuck"
    local args = { "TARGET_DIR=" .. tree, "SOC_VERSION=950" }
    local p = dir .. "/parts-dispatch-stuck/part-%d-of-3"
    local p1, p2, p3 = p:format(1), p:format(2), p:format(3)
    local code, _, err = h.run("merge", p1, p3, "-o", dir .. "/x1")
    assert.equal(1, code)
    assert.truthy(err:find("shard(s) 2/3 missing", 1, true), err)
    code, _, err = h.run("merge", p1, p2, p2, p3, "-o", dir .. "/x2")
    assert.equal(1, code)
    assert.truthy(err:find("shard 2/3 is given twice: " .. p2 .. " and " .. p2, 1, true), err)
    local other = dir .. "/other-options"
    assert.equal(0, (h.run("moe", args[1], args[2], "SHARE_EXPERT_CARD_COUNT=1", "-o", other, "--shard", "2/3", "-q")))
    code, _, err = h.run("merge", p1, other, p3, "-o", dir .. "/x3")
    assert.equal(1, code)
    assert.truthy(err:find(p1 .. " and " .. other
      .. " come from different runs: --share-expert-card-count is 0 in one and 1 in the other", 1, true), err)
    local soc = dir .. "/other-soc"
    assert.equal(0, (h.run("moe", args[1], "SOC_VERSION=910B", "-o", soc, "--shard", "2/3", "-q")))
    code, _, err = h.run("merge", p1, soc, p3, "-o", dir .. "/x4")
    assert.equal(1, code)
    assert.truthy(err:find('--soc-version is "950" in one and "910B" in the other', 1, true), err)
  end)

  it("refuses --shard with START_A2_CLUSTER=1 and a bad --shard before reading", function()
    local code, _, err = h.run("moe", "TARGET_DIR=" .. dir, "SOC_VERSION=910B", "START_A2_CLUSTER=1", "--shard", "1/2", "-o", dir .. "/x5")
    assert.equal(2, code)
    assert.truthy(err:find("--shard does not apply to START_A2_CLUSTER=1", 1, true), err)
    code, _, err = h.run("moe", "TARGET_DIR=" .. dir .. "/healthy", "SOC_VERSION=950", "--shard", "4/3", "-o", dir .. "/x6")
    assert.equal(2, code)
    assert.truthy(err:find('not "4/3"', 1, true), err)
  end)
end)
