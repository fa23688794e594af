-- What --rank-list and --role ask for that the input lacks: named, and the run fails, in every
-- command that takes them (ascope.ranks.unmatched is the one place that says it).
local h = require "helper"
local ranks = require "ascope.ranks"

describe("ranks.unmatched", function()
  local found = { { rank = 0, role = "actor" }, { rank = 1, role = "actor" }, { rank = 3, role = "actor" },
                  { rank = 0, role = "critic" }, { rank = nil, role = "critic" } }

  it("names the listed ranks no folder has, as ranges, and the ranks found", function()
    assert.same({}, ranks.unmatched(nil, nil, found, "in"))
    assert.same({}, ranks.unmatched(assert(ranks.parse("0,1,3")), nil, found, "in"))
    assert.same({ "--rank-list: no rank 2, 5-9 under in (ranks found: 0-1, 3)" },
      ranks.unmatched(assert(ranks.parse("0-3,9,5-8")), nil, found, "in"))
    -- a range of 10^11 ranks is said as a range, not rank by rank
    assert.same({ "--rank-list: no rank 2, 4-99999999999 under in (ranks found: 0-1, 3)" },
      ranks.unmatched(assert(ranks.parse("1-99999999999")), nil, found, "in"))
    -- a set given by a script as a table
    assert.same({ "--rank-list: no rank 7 under in (ranks found: 0-1, 3)" },
      ranks.unmatched({ [0] = true, [7] = true }, nil, found, "in"))
    assert.same({ "--rank-list: no rank 0 under in (ranks found: none)" },
      ranks.unmatched(assert(ranks.parse("0")), nil, {}, "in"))
  end)

  it("names a role no folder has with the roles found; ranks count in the roles asked for", function()
    assert.same({ "--role: no role 'nope'; roles found: actor, critic" },
      ranks.unmatched(nil, { "critic", "nope" }, found, "in"))
    assert.same({ "--rank-list: no rank 1 under in (ranks found: 0)" },
      ranks.unmatched(assert(ranks.parse("0-1")), { "critic" }, found, "in"))
    assert.same({}, ranks.unmatched(assert(ranks.parse("0-1")), { "actor" }, found, "in"))
  end)
end)

describe("--rank-list and --role asking for what is not there", function()
  local dir
  local level0 = h.real .. "/msinsight_pytorch_text_level0"
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("memory: a missing rank is named and fails the run, the ranks found are written", function()
    local code, out, err = h.run("memory", level0, "-o", dir .. "/m", "-q", "-j", "1", "--rank-list", "0,5")
    assert.equal(1, code)
    assert.truthy(out:find("rank 0 (msinsight_pytorch_text_level0)", 1, true), out)
    assert.truthy(err:find("[ERROR] --rank-list: no rank 5 under " .. level0 .. " (ranks found: 0-1)", 1, true), err)
    assert.falsy(err:find("could not be read", 1, true), err)
  end)

  it("memory: a missing role is named with the roles found", function()
    local code, _, err = h.run("memory", level0, "-o", dir .. "/m", "-q", "--role", "nope")
    assert.equal(1, code)
    assert.truthy(err:find("--role: no role 'nope'; roles found: msinsight_pytorch_text_level0", 1, true), err)
    assert.falsy(err:find("no profiling data found", 1, true), err)
  end)

  it("timeline: a missing rank is named and fails the run", function()
    local code, _, err = h.run("timeline", level0, "-o", dir .. "/t", "-q", "--rank-list", "1,7")
    assert.equal(1, code)
    assert.truthy(err:find("[ERROR] --rank-list: no rank 7 under " .. level0 .. " (ranks found: 0-1)", 1, true), err)
  end)
end)
