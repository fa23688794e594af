-- Embedding the library in another Lua program: interned strings live as long as the results
-- that use them, and nothing is printed unless the caller asks.
local core = require "ascope_core"
local h = require "helper"

local rss_bytes = h.rss_bytes

-- a trace of n complete events whose names all differ from those of any other k
local function write_trace(path, k, n)
  local parts = {}
  for i = 1, n do
    parts[i] = ('{"name":"op_%d_%d_%s","ph":"X","ts":%d,"dur":1}'):format(k, i, ("x"):rep(24), i)
  end
  h.write(path, "[" .. table.concat(parts, ",") .. "]")
end

describe("interned strings", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("are released with the results that use them: 60 scans of different strings", function()
    local path = dir .. "/trace.json"
    local function scan(k)
      write_trace(path, k, 6000)
      local r = assert(core.json.scan(path, { fields = { name = "string" } }))
      assert.equal(6000, r.n)
      assert.equal(("op_%d_6000_%s"):format(k, ("x"):rep(24)), r.columns.name[6000])
      local count = core.column.strings():info()
      return count
    end
    scan(0)
    collectgarbage()
    collectgarbage()
    local base = rss_bytes()
    for k = 1, 60 do
      -- while no earlier result is alive, the table holds this scan's strings only
      assert.equal(6000, scan(k))
      collectgarbage()
      collectgarbage()
    end
    local growth = rss_bytes() - base
    -- 360,000 distinct strings of ~40 bytes: kept forever they take > 20 MB. Under
    -- AddressSanitizer freed memory is held in quarantine, so only the counts above tell there.
    if not os.getenv("ASAN_OPTIONS") then
      assert.is_true(growth < 4e6, ("RSS grew by %.1f MB"):format(growth / 1e6))
    end
  end)

  it("stay shared, so ids compare, while a result that uses them is alive", function()
    local a, b = dir .. "/a.json", dir .. "/b.json"
    h.write(a, '[{"name":"x","ph":"X","ts":1,"dur":1},{"name":"y","ph":"X","ts":2,"dur":1}]')
    h.write(b, '[{"name":"y","ph":"X","ts":1,"dur":1}]')
    local ra = assert(core.json.scan(a, { fields = { name = "string" } }))
    collectgarbage()
    local rb = assert(core.json.scan(b, { fields = { name = "string" } }))
    assert.equal(ra.columns.name:id(2), rb.columns.name:id(1))
    -- a match index keeps its key ids valid after the columns it was built from are gone
    local ix = core.match.index({ "x", "y" }, { 10, 20 })
    ra, rb = nil, nil -- luacheck: ignore 311
    collectgarbage()
    collectgarbage()
    local rows, matched = ix:latest({ "y", "x", "z" }, { 25, 15, 30 })
    assert.equal(2, matched)
    assert.same({ 2, 1 }, { rows[1], rows[2] })
    assert.is_nil(rows[3])
  end)
end)


describe("a job run from a stock lua5.4", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  -- run a Lua script with the stock interpreter (LUA_PATH/LUA_CPATH as the suite has them);
  -- returns its exit status and everything it wrote on stdout and stderr
  local function lua(script)
    local file = dir .. "/script.lua"
    h.write(file, script)
    return h.stock_lua(file)
  end

  it("prints nothing and forks no worker unless asked", function()
    local code, out = lua(([[
      local ascope = require "ascope"
      -- every rank's read counted in this process: a forked worker's count would be lost
      local reader = require "ascope.ascend.timeline"
      local read, reads = reader.read, 0
      reader.read = function(...) reads = reads + 1 return read(...) end
      local res = assert(ascope.timeline.run(%q))
      assert(#res.ranks == 2, "ranks: " .. #res.ranks)
      assert(reads == 2, "reads in this process: " .. reads)
      local m = assert(ascope.memory.parse(%q))
      assert(#m.ranks >= 1)
      if ascope.log.sink() ~= nil then io.stdout:write("a sink is set") end
    ]]):format(h.real .. "/msinsight_pytorch_text_level0", h.real .. "/rl-insight/memory_data"))
    assert.equal(0, code, out)
    assert.equal("", out)
  end)

  it("gives stage lines and progress to a sink the caller installs", function()
    local code, out = lua(([[
      local ascope = require "ascope"
      local lines, progress = {}, 0
      ascope.log.set_sink({
        on_log = function(level, text) lines[#lines + 1] = level .. " " .. text end,
        on_progress = function(label, done, total) progress = progress + 1 assert(done <= total) end,
      })
      assert(ascope.timeline.run(%q, { rank_list = "1" }))
      print(#lines, progress)
      print(lines[1])
    ]]):format(h.real .. "/msinsight_pytorch_text_level0"))
    assert.equal(0, code, out)
    local n, calls, first = out:match("^(%d+)\t(%d+)\n(.-)\n$")
    assert.equal("1", n, out)
    assert.equal("1", calls, out) -- one small file: the final call
    assert.truthy(first:find("^stage rank 1: .*rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view%.json$"), first)
  end)

  it("gives an analysis' step-by-step lines (log.line) to the sink as their level, and prints none without one", function()
    local code, out = lua([[
      local log = require("ascope").log
      log.line("INFO", "card 0: before any sink")
      local lines = {}
      log.set_sink({ on_log = function(level, text) lines[#lines + 1] = level .. " " .. text end })
      log.line("INFO", "card 1: 100% of the slots")
      io.stdout:write(table.concat(lines, "|"))
    ]])
    assert.equal(0, code, out)
    assert.equal("info card 1: 100% of the slots", out)
  end)
end)
