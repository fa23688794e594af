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
    -- the largest total the file shows, at an allocation or at a release
    for _, r in ipairs(rows) do
      peak = math.max(peak, tonumber(r["Allocation Total Allocated(MB)"]), tonumber(r["Release Total Allocated(MB)"]) or 0)
    end
    local v, printed = job(dir, KEEP .. ([[
      local function plain(t) -- a deep copy, to compare the options before and after
        if type(t) ~= "table" then return t end
        local c = {}
        for k, x in pairs(t) do c[k] = plain(x) end
        return c
      end
      local opts = { input = %q, rank_list = "0", role = { "memory_data" }, jobs = 1, match = "latest" }
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
    assert.same({ input = input, rank_list = "0", role = { "memory_data" }, jobs = 1, match = "latest" }, v.opts)
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

-- the folder listings and table keys the recipe-face scripts report
local NAMES = [[
local function names(dir)
  local out = setmetatable({}, { __jsontype = "array" })
  for _, n in ipairs(ascope.fs.list(dir) or {}) do out[#out + 1] = n end
  table.sort(out)
  return out
end
local function keys(t)
  local out = setmetatable({}, { __jsontype = "array" })
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end
]]

-- The recipe face of the field jobs (moe, plog, graph, opjitter): run(opts) with the spec's
-- defaults on a copy of the caller's options, write(result, outdir, {formats}) writing the files
-- the command writes (and only those asked for), anomalies(result) with their severities and
-- cards, result.unreadable; run writes nothing and prints nothing.
local function severities(list)
  local out = {}
  for _, a in ipairs(list) do out[#out + 1] = a.severity .. " " .. tostring(a.card) .. " " .. a.analysis end
  table.sort(out)
  return out
end

describe("the field jobs' recipe face from a stock lua5.4", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("moe: run(opts) leaves the caller's options alone; write puts the command's files, or the formats asked", function()
    local cards, truth = mh.cluster({ state = "dispatch_stuck", cards = 4, moe = 16, fault = 2 })
    mh.write_cluster(dir .. "/in", cards, "mc2")
    -- a fifth card folder holding no dump: unreadable, the others analysed
    h.write(dir .. "/in/4/notes.txt", "nothing here\n")
    local v, printed = job(dir, KEEP .. NAMES .. ([[
      local moe = ascope.moe
      local opts = { target_dir = %q, soc_version = "950" }
      local r = assert(moe.run(opts))
      local before = names(%q)
      assert(moe.write(r, %q))
      assert(moe.write(r, %q, { formats = { "json" } }))
      local bad_ok, bad_err = moe.write(r, %q, { formats = { "pdf" } })
      local list = moe.anomalies(r)
      local shown = {}
      for _, a in ipairs(list) do if a.severity == "ERROR" or a.severity == "WARNING" then shown[#shown + 1] = a end end
      local summary = json.load(%q)
      save({ opts = keys(opts), cards = #r.cards, roots = r.cross.root_cards, unreadable = r.unreadable,
             anomalies = rows(shown), before = before, all = names(%q), json_only = names(%q), bad_ok = bad_ok or false,
             bad_err = bad_err, summary_roots = summary.root_cards })
    ]]):format(dir .. "/in", dir, dir .. "/all", dir .. "/json", dir .. "/pdf", dir .. "/all/moe_summary.json",
      dir .. "/all", dir .. "/json"))
    assert.equal("", printed)
    assert.same({ "soc_version", "target_dir" }, v.opts) -- no default, no log written into them
    assert.equal(4, v.cards)
    assert.same(truth.roots, v.roots)
    assert.same({ 2 }, v.summary_roots)
    assert.equal(1, #v.unreadable)
    assert.equal(4, v.unreadable[1].card)
    assert.equal(dir .. "/in/4", v.unreadable[1].path)
    assert.same({ "in", "script.lua" }, v.before) -- run wrote nothing
    assert.same({ "moe_report.html", "moe_summary.json", "win_all_card_data.csv", "win_all_card_expandidx.csv",
                  "win_analysis_error.csv", "win_data.csv", "win_data_list.csv", "win_status_list.csv" }, v.all)
    assert.same({ "moe_summary.json" }, v.json_only)
    assert.is_false(v.bad_ok)
    assert.equal('--format: unknown output "pdf" (csv, json, html)', v.bad_err)
    -- the root ERROR on the faulting card, each waiting card's missing slots an ERROR and its wait a
    -- WARNING, the unreadable card an ERROR of its own
    local want = { "ERROR 2 8", "ERROR 4 input" }
    for r in pairs(truth.waits) do
      want[#want + 1] = "ERROR " .. r .. " 3"
      want[#want + 1] = "WARNING " .. r .. " 2"
    end
    table.sort(want)
    assert.same(want, severities(v.anomalies))
  end)

  it("plog: run writes no file and keeps the records; write puts error_plog.csv and the summary", function()
    local function line(time, msg)
      return ("[ERROR] RUNTIME(1,python):2024-06-01-10:00:%s.000.000 [rt.cc:1]2 %s\n"):format(time, msg)
    end
    h.write(dir .. "/logs/device-0/plog-1.log", line("05", "Aicore kernel execute failed, device_id=0, stream_id=4, "
      .. "task_id=7, fault kernel_name=MatMulV2_xx") .. line("06", "report error module_type=1, module_name=EZ9999")
      .. line("07", "nobody knows this one"))
    h.write(dir .. "/logs/device-1/plog-1.log", line("09", "[EI0002] notify wait timeout device_id=1"))
    h.write(dir .. "/empty/notes.md", "no logs\n")
    local v, printed = job(dir, KEEP .. NAMES .. ([[
      local plog = ascope.plog
      local r = assert(plog.run({ input = %q }))
      local before = names(%q)
      assert(plog.write(r, %q))
      local j = assert(plog.run(%q, { format = "json" }))
      local no_csv, no_csv_err = plog.write(j, %q, { formats = { "csv" } })
      assert(plog.write(j, %q, { formats = { "json" } }))
      local none, none_err = plog.run({ input = %q })
      local badf, badf_err = plog.run({ input = %q, format = "csv,pdf" })
      local count = {}
      for id, c in pairs(r.categories) do count[id] = c.count end
      save({ count = count, records = r.record_count, unclassified = r.unclassified.count, before = before,
             out = names(%q), json_only = names(%q), no_csv = no_csv or false, no_csv_err = no_csv_err,
             none = none or false, none_err = none_err, anomalies = rows(plog.anomalies(r)), unreadable = #r.unreadable,
             badf = badf or false, badf_err = badf_err })
    ]]):format(dir .. "/logs", dir, dir .. "/out", dir .. "/logs", dir .. "/j", dir .. "/j", dir .. "/empty",
      dir .. "/logs", dir .. "/out", dir .. "/j"))
    assert.equal("", printed)
    assert.same({ aicore_kernel_failed = 1, ez9999 = 1, ei0002 = 1 }, v.count)
    assert.equal(1, v.unclassified)
    assert.equal(0, v.unreadable)
    assert.same({ "empty", "logs", "script.lua" }, v.before) -- no error_plog.csv nor temporary file
    assert.same({ "error_plog.csv", "plog_summary.json" }, v.out)
    -- one row per line and category, the unclassified line among them
    local rows = h.csv_rows(dir .. "/out/error_plog.csv")
    assert.equal(v.records, #rows)
    assert.equal(4, #rows)
    assert.same({ "0", "0", "0", "1" }, { rows[1].card, rows[2].card, rows[3].card, rows[4].card })
    local s = core.json.load(dir .. "/out/plog_summary.json")
    assert.equal(1, s.categories.ez9999.count)
    assert.equal("MatMulV2_xx", s.non_moe_failures[1].kernel_name)
    assert.is_false(v.no_csv)
    assert.truthy(v.no_csv_err:find("kept no records", 1, true), v.no_csv_err)
    assert.same({ "plog_summary.json" }, v.json_only)
    assert.is_false(v.none)
    assert.equal(dir .. "/empty: no log files found", v.none_err)
    assert.is_false(v.badf)
    assert.equal('--format: unknown output "pdf" (csv, json)', v.badf_err)
    assert.same({ "ERROR 0 plog", "WARNING nil plog aicore_kernel_failed", "WARNING nil plog ei0002",
                  "WARNING nil plog ez9999", "WARNING nil plog unclassified" }, severities(v.anomalies))
  end)

  it("graph: run(opts) with a filter, write puts graph_summary.json; no graph file is an error naming the folder", function()
    local function atc(path, names)
      local ops = {}
      for i, n in ipairs(names) do ops[i] = ('{"name": "%s"}'):format(n) end
      h.write(path, '{"op": [' .. table.concat(ops, ", ") .. "]}")
    end
    atc(dir .. "/g/graph_1_device0.json", { "MoeDistributeDispatchV2_1", "AllToAll_1", "MoeDistributeCombineV2_1" })
    atc(dir .. "/g/graph_1_device1.json", { "AllToAll_1", "MoeDistributeDispatchV2_1", "MoeDistributeCombineV2_1" })
    atc(dir .. "/g/graph_1_device2.json", { "MoeDistributeDispatchV2_1", "MoeDistributeCombineV2_1", "MoeDistributeCombineV2_1" })
    h.write(dir .. "/nothing/readme.txt", "no graphs\n")
    local v, printed = job(dir, KEEP .. NAMES .. ([[
      local graph = ascope.graph
      local r = assert(graph.run({ input = %q }))
      local wide = assert(graph.run({ input = %q, filter = "MoeDistribute|AllToAll" }))
      assert(graph.write(r, %q))
      local verdicts, wverdicts = {}, {}
      for _, p in ipairs(r.pairs) do verdicts[#verdicts + 1] = p.a .. "-" .. p.b .. " " .. p.verdict end
      for _, p in ipairs(wide.pairs) do wverdicts[#wverdicts + 1] = p.a .. "-" .. p.b .. " " .. p.verdict end
      local none, none_err = graph.run({ input = %q })
      save({ verdicts = verdicts, wide = wverdicts, out = names(%q), anomalies = rows(graph.anomalies(r)),
             none = none or false, none_err = none_err })
    ]]):format(dir .. "/g", dir .. "/g", dir .. "/out", dir .. "/nothing", dir .. "/out"))
    assert.equal("", printed)
    -- by default only the dispatch/combine nodes are compared: card 1 matches, card 2 has one more combine
    assert.same({ "0-1 identical", "0-2 count" }, v.verdicts)
    assert.same({ "0-1 order", "0-2 count" }, v.wide)
    assert.same({ "graph_summary.json" }, v.out)
    local s = core.json.load(dir .. "/out/graph_summary.json")
    assert.same({ 1, 2 }, s.pairs[2].counts.MoeDistributeCombineV2_1)
    assert.same({ "ERROR 2 graph" }, severities(v.anomalies))
    assert.is_false(v.none)
    assert.equal(dir .. "/nothing: no graph files found (see 'ascope help graph')", v.none_err)
  end)

  it("opjitter: the cards expected, the jitter per call, write with the formats asked", function()
    local header = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),aiv_vec_time(us),aiv_scalar_time(us)\n"
    local function card(n, durations, aiv)
      local lines = { header }
      for i, d in ipairs(durations) do
        lines[#lines + 1] = ("1,D_%d,MoeDistributeDispatchV2,AI_VECTOR_CORE,%d.000,%s,%d,1.0\n"):format(i, 1000 + i, d, aiv[i])
      end
      h.write(("%s/p/card_%d/kernel_details.csv"):format(dir, n), table.concat(lines))
    end
    card(0, { "10", "12", "11" }, { 100, 100, 100 })
    card(2, { "14", "17", "11" }, { 100, 900, 100 })
    local v, printed = job(dir, KEEP .. NAMES .. ([[
      local opjitter = ascope.opjitter
      local r = assert(opjitter.run({ input = %q, cards = 4 }))
      assert(opjitter.write(r, %q, { formats = { "csv" } }))
      assert(opjitter.write(r, %q))
      local jitter = {}
      for _, x in ipairs(r.rows) do jitter[#jitter + 1] = x.jitter end
      save({ found = r.found, missing = r.missing, jitter = jitter, csv = names(%q), all = names(%q),
             anomalies = rows(opjitter.anomalies(r)), unreadable = #r.unreadable })
    ]]):format(dir .. "/p", dir .. "/csv", dir .. "/all", dir .. "/csv", dir .. "/all"))
    assert.equal("", printed)
    assert.same({ 0, 2 }, v.found)
    assert.same({ 1, 3 }, v.missing) -- cards = 4: card 3 is expected too
    assert.same({ 4, 5, 0 }, v.jitter)
    assert.equal(0, v.unreadable)
    assert.same({ "profiling_all_data.csv", "profiling_avg_data.csv" }, v.csv)
    assert.same({ "opjitter_report.html", "opjitter_summary.json", "profiling_all_data.csv", "profiling_avg_data.csv" }, v.all)
    local avg = h.csv_rows(dir .. "/csv/profiling_avg_data.csv")
    -- calls 1 and 2 are valid (call 0 is left out): (5 + 0) / 2
    assert.same({ type = "MoeDistributeDispatchV2", calls = "3", valid_calls = "2", avg_jitter_us = "2.5" }, avg[1])
    -- the missing cards, and card 2's aiv outliers: call 0 is warm-up (rules/opjitter.lua skip_calls),
    -- calls 1 and 2 give the mean (900 + 100) / 2 = 500, allowed 250 - 750: both are out; card 0's
    -- 100, 100 are not
    assert.same({ "ERROR 1 opjitter", "ERROR 2 opjitter aiv", "ERROR 2 opjitter aiv", "ERROR 3 opjitter" },
      severities(v.anomalies))
  end)
end)
