-- The lua-language-server definitions in types/ declare functions that exist: every
-- `function X.f` or `function X:f` there is checked against the real module or object.
local h = require "helper"
local core = require "ascope_core"

-- declared functions of a definition file: {owner, name}
local function declared(path)
  local list = {}
  for owner, name in h.read(path):gmatch("\nfunction ([%w_]+)[.:]([%w_]+)%(") do list[#list + 1] = { owner, name } end
  return list
end

local function check(path, objects, at_least)
  local list = declared(path)
  assert.truthy(#list >= at_least, path .. " declares functions")
  for _, d in ipairs(list) do
    local obj = objects[d[1]]
    assert.truthy(obj, ("%s: no real object for %s"):format(path, d[1]))
    assert.equal("function", type(obj[d[2]]), ("%s: %s.%s is not a function of the real API"):format(path, d[1], d[2]))
  end
end

describe("the lua-language-server definitions", function()
  it("declare only functions the C primitives have", function()
    local dir = h.tmpdir()
    local col = core.column.new("integer", { 3, 1, 2 })
    local writer = assert(core.csv.writer(dir .. "/w.csv"))
    local records = assert(core.csv.open(h.real .. "/mstt_msprof_analyze_tests/compute_advice_data/kernel_details.csv"))
    local db = assert(core.db.open(h.real .. "/msinsight_pytorch_db_level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db"))
    check("types/ascope_core.lua", {
      Column = col, column = core.column, json = core.json, csv = core.csv, CsvRecords = records, CsvWriter = writer,
      interval = core.interval, IntervalSet = core.interval.union({ 0 }, { 1 }), match = core.match,
      MatchIndex = core.match.index(core.column.new("string", { "a" }), core.column.new("integer", { 1 })),
      bin = core.bin, BinView = core.bin.from_string("abcd"), db = core.db, Database = db, fs = core.fs,
      par = core.par, stacktree = core.stacktree, StackTree = core.stacktree.new(), ascope_core = core,
      JsonChecker = core.json.checker("x.json"),
    }, 60)
    records:close()
    writer:close()
    h.cleanup(dir)
  end)

  it("declare only functions the jobs have", function()
    local m = assert(require("ascope.memory").parse(h.real .. "/rl-insight/memory_data", { jobs = 1 }))
    local objects = { MemoryResult = m }
    for _, name in ipairs({ "rules", "memory", "timeline", "moe", "plog", "graph", "opjitter", "log", "workers" }) do
      objects[name] = require("ascope." .. name)
    end
    check("types/ascope.lua", objects, 9)
  end)
end)
