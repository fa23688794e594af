-- The six jobs as a library: each reached through `require "ascope"`, run by a stock lua5.4 on a
-- small input whose answer is known, its result and its anomalies() checked, and nothing printed.
local core = require "ascope_core"
local h = require "helper"
local mh = require "moe_helper"

-- Run a script in a child lua5.4 (the module paths this suite has); the script leaves its values
-- as JSON in `dir/values.json`. Returns the values and everything written on stdout and stderr.
local function job(dir, script)
  local file = dir .. "/script.lua"
  h.write(file, "local ascope = require 'ascope'\nlocal json = ascope.json\nlocal OUT = " .. ("%q"):format(dir ..
    "/values.json") .. "\n" .. script)
  local _, printed = h.stock_lua(file)
  local f = io.open(dir .. "/values.json")
  assert(f, "the script left no values: " .. printed)
  f:close()
  return core.json.load(dir .. "/values.json"), printed
end

-- the anomalies as plain rows, in a JSON the parent reads
local KEEP = [[
local function save(values) assert(ascope.fs.write(OUT, json.encode(values))) end
local function rows(list)
  local out = setmetatable({}, { __jsontype = "array" })
  for i, a in ipairs(list) do
    out[i] = { severity = a.severity, card = a.card, rank = a.rank, analysis = a.analysis, message = a.message }
  end
  return out
end
]]

describe("the six jobs through require 'ascope'", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("memory: every row of operator_memory.csv read, no anomaly on a healthy rank", function()
    local input = h.real .. "/rl-insight/memory_data"
    -- the truth: the data rows of the profiler's own operator_memory.csv
    local csv = h.read(input .. "/20260526_085155_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    local _, lines = csv:gsub("\n", "\n")
    local v, printed = job(dir, KEEP .. ([[
      local m = assert(ascope.memory.parse(%q))
      save({ ranks = #m.ranks, events = m.ranks[1].n, failed = #m.failed, anomalies = rows(ascope.memory.anomalies(m)) })
    ]]):format(input))
    assert.equal("", printed)
    assert.equal(1, v.ranks)
    assert.equal(lines - 1, v.events)
    assert.equal(49, v.events)
    assert.equal(0, v.failed)
    assert.same({}, v.anomalies)
  end)

  it("memory: a trace cut short is an ERROR anomaly of its rank, its rows kept", function()
    local src = h.real .. "/rl-insight/memory_data/20260526_085155_ascend_pt"
    local dst = dir .. "/in/20260526_085155_ascend_pt"
    for _, f in ipairs({ "profiler_info_0.json", "profiler_metadata.json", "ASCEND_PROFILER_OUTPUT/operator_memory.csv" }) do
      h.copy(src .. "/" .. f, dst .. "/" .. f)
    end
    local trace = h.read(src .. "/ASCEND_PROFILER_OUTPUT/trace_view.json")
    h.write(dst .. "/ASCEND_PROFILER_OUTPUT/trace_view.json", trace:sub(1, #trace // 2))
    local v, printed = job(dir, KEEP .. ([[
      local m = assert(ascope.memory.parse(%q))
      save({ events = m.ranks[1].n, anomalies = rows(ascope.memory.anomalies(m)) })
    ]]):format(dir .. "/in"))
    assert.equal("", printed)
    assert.equal(49, v.events)
    assert.equal(1, #v.anomalies)
    assert.equal("ERROR", v.anomalies[1].severity)
    assert.equal(0, v.anomalies[1].rank)
    assert.equal("memory partial", v.anomalies[1].analysis)
    assert.truthy(v.anomalies[1].message:find("rank 0 (in) is partial", 1, true), v.anomalies[1].message)
  end)

  it("timeline: the expert rules that fired, with their rank, value and threshold", function()
    local v, printed = job(dir, KEEP .. ([[
      local t = assert(ascope.timeline.run(%q))
      local list = ascope.timeline.anomalies(t)
      local extra = {}
      for i, a in ipairs(list) do extra[i] = { id = a.id, value = a.value, threshold = a.threshold, op = a.op } end
      local dash = {}
      for i, r in ipairs(t.ranks) do dash[i] = { rank = r.rank, op_utilization = r.dashboard.op_utilization,
                                                 overlap_ratio = r.dashboard.overlap_ratio } end
      save({ anomalies = rows(list), extra = extra, dash = dash })
    ]]):format(h.real .. "/msinsight_pytorch_text_level0"))
    assert.equal("", printed)
    local fired = {}
    for i, a in ipairs(v.anomalies) do
      local x = v.extra[i]
      fired[#fired + 1] = a.rank .. " " .. a.severity .. " " .. x.id
      assert.equal("timeline " .. x.id, a.analysis)
      -- the rule holds for the value it reports
      if x.op == "<" then assert.is_true(x.value < x.threshold) else assert.is_true(x.value > x.threshold) end
      -- the value is the rank's own dashboard value
      local d = v.dash[a.rank + 1]
      if x.id == "op_util_low" then assert.equal(d.op_utilization, x.value) end
      if x.id == "overlap_low" then assert.equal(d.overlap_ratio, x.value) end
    end
    assert.same({ "0 warning comm_on_critical_path", "0 warning critical_path_low", "0 warning op_util_low",
                  "0 warning overlap_low", "0 info lane_idle", "1 warning comm_on_critical_path",
                  "1 warning critical_path_low", "1 warning op_util_low", "1 warning overlap_low", "1 info lane_idle" },
      fired)
    assert.equal("AI Core busy only 7.6% of the step", v.anomalies[3].message)
    assert.equal(0.0759, math.floor(v.dash[1].op_utilization * 1e4 + 0.5) / 1e4)
  end)

  it("memory: run(opts) -> write() gives the files and the bytes the command writes, and leaves opts alone", function()
    local input = h.real .. "/rl-insight/memory_data"
    -- the truth, from the profiler's own operator_memory.csv: its rows and its largest total
    local rows = h.csv_rows(input .. "/20260526_085155_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv")
    local peak = 0
    for _, r in ipairs(rows) do peak = math.max(peak, tonumber(r["Allocation Total Allocated(MB)"])) end
    local v, printed = job(dir, KEEP .. ([[
      local function plain(t) -- a deep copy, to compare the options before and after
        if type(t) ~= "table" then return t end
        local c = {}
        for k, x in pairs(t) do c[k] = plain(x) end
        return c
      end
      local opts = { input = %q, rank_list = "0-3", role = { "memory_data" }, jobs = 1, match = "latest" }
      local before = plain(opts)
      local m = assert(ascope.memory.run(opts))
      local ok, paths = ascope.memory.write(m, %q, { formats = { "json", "csv" } })
      local bad, msg = ascope.memory.write(m, %q, { formats = "csv,xlsx" })
      local legacy = assert(ascope.memory.run(%q, { jobs = 1 }))
      save({ same_opts = json.encode(before) == json.encode(plain(opts)), opts = plain(opts),
             ranks = #m.ranks, events = m.ranks[1].n, unreadable = #m.unreadable,
             peak = m.ranks[1].summary.peak.allocated_mb, ok = ok, paths = paths, bad = bad == nil, msg = msg,
             legacy_events = legacy.ranks[1].n, anomalies = rows(ascope.memory.anomalies(m)) })
    ]]):format(input, dir .. "/lib", dir .. "/bad", input))
    assert.equal("", printed)
    assert.is_true(v.same_opts, "run() wrote into the caller's options")
    assert.same({ input = input, rank_list = "0-3", role = { "memory_data" }, jobs = 1, match = "latest" }, v.opts)
    assert.equal(1, v.ranks)
    assert.equal(#rows, v.events)
    assert.equal(#rows, v.legacy_events) -- the positional form run(input, opts)
    assert.equal(0, v.unreadable)
    assert.equal(peak, v.peak)
    assert.is_true(v.ok)
    -- the files asked for, listed in the command's order, and nothing else
    assert.same({ dir .. "/lib/memory_events.csv", dir .. "/lib/memory_summary.json" }, v.paths)
    assert.same({ "./memory_events.csv", "./memory_summary.json" }, (function()
      local names = {}
      for name in pairs(h.files(dir .. "/lib")) do names[#names + 1] = name end
      table.sort(names)
      return names
    end)())
    assert.equal(#rows, #h.csv_rows(dir .. "/lib/memory_events.csv"))
    local summary = core.json.decode(h.read(dir .. "/lib/memory_summary.json"))
    assert.equal(peak, summary.ranks[1].peak.allocated_mb)
    -- an unknown format: nothing written, a message naming it
    assert.is_true(v.bad)
    assert.truthy(v.msg:find('"xlsx"', 1, true), v.msg)
    assert.is_nil(core.fs.stat(dir .. "/bad"))
    -- the bytes are the command's
    local code = h.run("memory", input, "-o", dir .. "/cmd", "--format", "csv,json", "-q")
    assert.equal(0, code)
    assert.same(h.files(dir .. "/cmd"), h.files(dir .. "/lib"))
    assert.same({}, v.anomalies)
  end)

  it("timeline: run(opts) -> write() gives the files and the bytes the command writes, and leaves opts alone", function()
    local input = h.real .. "/msinsight_pytorch_text_level0"
    local v, printed = job(dir, KEEP .. ([[
      local opts = { input = %q, rank_list = "0,1", top = 3, jobs = 1, pp = 4, microbatches = 8 }
      local before = json.encode(opts)
      local t = assert(ascope.timeline.run(opts))
      local ok, paths = ascope.timeline.write(t, %q, { formats = { "md", "json" } })
      local one = assert(ascope.timeline.run({ input = %q, rank_list = "1", jobs = 1 }))
      local usage = { ascope.timeline.run({ input = %q, rank_list = "3-1" }) }
      local hot = {}
      for i, r in ipairs(t.ranks) do hot[i] = #r.hotspots end
      save({ same_opts = before == json.encode(opts), ranks = #t.ranks, unreadable = #t.unreadable, ok = ok,
             paths = paths, hot = hot, one = { #one.ranks, one.ranks[1].rank }, usage = { usage[1] == nil, usage[2], usage[3] },
             util = t.ranks[1].dashboard.op_utilization, anomalies = #ascope.timeline.anomalies(t) })
    ]]):format(input, dir .. "/lib", input, input))
    assert.equal("", printed)
    assert.is_true(v.same_opts, "run() wrote into the caller's options")
    assert.equal(2, v.ranks)
    assert.equal(0, v.unreadable)
    assert.same({ 3, 3 }, v.hot) -- top = 3 reached the ranked tables
    assert.same({ 1, 1 }, v.one)
    assert.same({ true, "--rank-list: range 3-1 runs backwards", "usage" }, v.usage)
    assert.equal(10, v.anomalies) -- as the anomalies spec above: five rules on each rank
    assert.is_true(v.ok)
    assert.same({ dir .. "/lib/timeline_report.md", dir .. "/lib/timeline_metrics.json" }, v.paths)
    local files = h.files(dir .. "/lib")
    assert.equal(2, h.count(files))
    local metrics = core.json.decode(files["./timeline_metrics.json"])
    assert.equal(v.util, metrics.ranks[1].dashboard.op_utilization)
    assert.equal(2, #metrics.ranks)
    -- the bytes are the command's
    local code = h.run("timeline", input, "-o", dir .. "/cmd", "--format", "json,md", "--top", "3", "--pp", "4",
      "--microbatches", "8", "-q")
    assert.equal(0, code)
    assert.same(h.files(dir .. "/cmd"), files)
  end)

  it("moe: a stuck cluster names the card that did not send as the root ERROR; a healthy one has none", function()
    local cards = mh.cluster({ state = "dispatch_stuck", cards = 4, moe = 16, fault = 1 })
    mh.write_cluster(dir .. "/stuck", cards, "mc2")
    mh.write_cluster(dir .. "/healthy", mh.cluster({ state = "healthy" }), "mc2")
    local v, printed = job(dir, KEEP .. ([[
      local stuck = assert(ascope.moe.run({ target_dir = %q, soc_version = "950" }))
      local healthy = assert(ascope.moe.run({ target_dir = %q, soc_version = "950" }))
      save({ roots = stuck.cross.root_cards, stuck = rows(ascope.moe.anomalies(stuck)),
                    healthy = rows(ascope.moe.anomalies(healthy)) })
    ]]):format(dir .. "/stuck", dir .. "/healthy"))
    assert.equal("", printed)
    assert.same({ 1 }, v.roots)
    local roots, errors = {}, 0
    for _, a in ipairs(v.stuck) do
      if a.analysis == "8" then roots[#roots + 1] = a end
      if a.severity == "ERROR" then errors = errors + 1 end
    end
    assert.equal(1, #roots)
    assert.equal("ERROR", roots[1].severity)
    assert.equal(1, roots[1].card)
    assert.truthy(roots[1].message:find("card 1 started the hang", 1, true))
    assert.equal(4, errors) -- the root, and each of the 3 waiting cards' missing status slots
    for _, a in ipairs(v.healthy) do assert.truthy(a.severity ~= "ERROR" and a.severity ~= "WARNING", a.message) end
  end)

  it("plog: an ERROR line counted in its category, a clean log gives nothing", function()
    local function line(level, msg)
      return ("[%s] RUNTIME(3975660,python):2024-06-01-10:00:01.123.456 [device_error_proc.cc:816]3977663 %s\n"):format(level, msg)
    end
    h.write(dir .. "/bad/device-0/plog-1_20240601100000.log",
      line("INFO", "stream created") .. line("ERROR", "report error module_type=1, module_name=EZ9999"))
    h.write(dir .. "/good/device-0/plog-1_20240601100000.log", line("INFO", "stream created") .. line("INFO", "done"))
    local v, printed = job(dir, KEEP .. ([[
      local bad = assert(ascope.plog.run(%q))
      local good = assert(ascope.plog.run(%q))
      local count = {}
      for id, c in pairs(bad.categories) do count[id] = c.count end
      save({ count = count, bad = rows(ascope.plog.anomalies(bad)), good = rows(ascope.plog.anomalies(good)) })
    ]]):format(dir .. "/bad", dir .. "/good"))
    assert.equal("", printed)
    assert.same({ ez9999 = 1 }, v.count)
    assert.equal(1, #v.bad)
    assert.equal("WARNING", v.bad[1].severity)
    assert.equal("plog ez9999", v.bad[1].analysis)
    assert.truthy(v.bad[1].message:find("1", 1, true))
    assert.same({}, v.good)
  end)

  it("graph: the card whose graph runs in another order is an ERROR, identical ones none", function()
    local function atc(path, names)
      local ops = {}
      for i, n in ipairs(names) do ops[i] = ('{"name": "%s", "type": "%s"}'):format(n, n:gsub("_%d+$", "")) end
      h.write(path, '{"graph": [{"name": "g", "op": [' .. table.concat(ops, ", ") .. "]}]}")
    end
    local D, C = "MoeDistributeDispatchV2_1", "MoeDistributeCombineV2_1"
    atc(dir .. "/g/graph_1_device0.json", { D, C })
    atc(dir .. "/g/graph_1_device1.json", { D, C })
    atc(dir .. "/g/graph_1_device2.json", { C, D })
    local v, printed = job(dir, KEEP .. ([[
      local g = assert(ascope.graph.run(%q))
      local verdicts = {}
      for _, p in ipairs(g.pairs) do verdicts[#verdicts + 1] = p.a .. "-" .. p.b .. " " .. p.verdict end
      save({ cards = g.cards, verdicts = verdicts, anomalies = rows(ascope.graph.anomalies(g)) })
    ]]):format(dir .. "/g"))
    assert.equal("", printed)
    assert.same({ 0, 1, 2 }, v.cards)
    assert.same({ "0-1 identical", "0-2 order" }, v.verdicts)
    assert.equal(1, #v.anomalies)
    assert.equal("ERROR", v.anomalies[1].severity)
    assert.equal(2, v.anomalies[1].card)
    assert.truthy(v.anomalies[1].message:find("in another order from index 0", 1, true), v.anomalies[1].message)
  end)

  it("opjitter: the jitter of a call across cards, a missing card an ERROR", function()
    local header = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),aiv_vec_time(us),aiv_scalar_time(us)\n"
    local function card(n, durations)
      local lines = { header }
      for i, d in ipairs(durations) do
        lines[#lines + 1] = ("1,D_%d,MoeDistributeDispatchV2,AI_VECTOR_CORE,%d.000,%s,100,1.0\n"):format(i, 1000 + i, d)
      end
      h.write(("%s/j/card_%d/kernel_details.csv"):format(dir, n), table.concat(lines))
    end
    card(0, { "10", "12" })
    card(2, { "14", "17" })
    local v, printed = job(dir, KEEP .. ([[
      local r = assert(ascope.opjitter.run(%q))
      local jitter = {}
      for _, x in ipairs(r.rows) do jitter[#jitter + 1] = x.jitter end
      save({ found = r.found, missing = r.missing, jitter = jitter, anomalies = rows(ascope.opjitter.anomalies(r)) })
    ]]):format(dir .. "/j"))
    assert.equal("", printed)
    assert.same({ 0, 2 }, v.found)
    assert.same({ 1 }, v.missing)
    assert.same({ 4, 5 }, v.jitter) -- call 0: 14 - 10, call 1: 17 - 12
    assert.equal(1, #v.anomalies)
    assert.equal("ERROR", v.anomalies[1].severity)
    assert.equal(1, v.anomalies[1].card)
  end)
end)
