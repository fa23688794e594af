-- Input checks find files through the readers' own discovery (ascope.ascend.discover): a rank
-- folder laid out one way or another passes the input checks of rules/memory.lua exactly when
-- the reader reads it, and the columns the check requires are the columns the reader requires.
-- Each layout below says by construction whether its file can be read (`readable`); the checks,
-- the reader and the whole memory / timeline run must all agree with it.
local h = require "helper"
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local checks = require "ascope.checks"
local memory = require "ascope.memory"
local memory_csv = require "ascope.ascend.memory_csv"
local timeline = require "ascope.timeline"
local rules_mod = require "ascope.rules"
local i18n = require "ascope.i18n"

local OUT = "ASCEND_PROFILER_OUTPUT"

-- two allocations and a release, in the profiler's current header (or the one given)
local function memory_csv_text(header)
  header = header or h.MEMORY_CSV_HEADER
  local names = {}
  for name in header:gsub("\n$", ""):gmatch("[^,]+") do names[#names + 1] = name end
  local rows = {}
  for i, size in ipairs({ 1024, 2048, -1024 }) do
    local by = {
      ["Name"] = "aten::empty", ["Size(KB)"] = tostring(size), ["Allocation Time(us)"] = tostring(1000 + i),
      ["Release Time(us)"] = "", ["Duration(us)"] = "5", ["Allocation Total Allocated(MB)"] = tostring(i),
      ["Allocation Total Reserved(MB)"] = "8", ["Allocation Total Active(MB)"] = tostring(i),
      ["Device Type"] = "NPU:0",
    }
    local cells = {}
    for j, n in ipairs(names) do cells[j] = by[(n:gsub("^\239\187\191", ""):gsub("^%s+", ""):gsub("%s+$", ""))] or "" end
    rows[i] = table.concat(cells, ",")
  end
  return header .. table.concat(rows, "\n") .. "\n"
end

local LEGACY = "Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Allocation Total Allocated(MB),"
  .. "Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB),Device Type\n"

-- operator_memory.csv layouts: where the file is (relative to the rank folder) and what it holds
local MEMORY_LAYOUTS = {
  { name = "the profiler's layout", path = OUT .. "/operator_memory.csv", text = memory_csv_text(), readable = true },
  { name = "directly in the rank folder", path = "operator_memory.csv", text = memory_csv_text(), readable = true },
  { name = "one level deeper", path = OUT .. "/extra/operator_memory.csv", text = memory_csv_text(), readable = false },
  { name = "a .db instead of the CSV", path = OUT .. "/operator_memory.db", text = "SQLite format 3\0", readable = false },
  { name = "another name", path = OUT .. "/operator_memory_0.csv", text = memory_csv_text(), readable = false },
  { name = "a header with a BOM and spaces", path = OUT .. "/operator_memory.csv",
    text = memory_csv_text("\239\187\191" .. h.MEMORY_CSV_HEADER:gsub(",", " , ")), readable = true },
  { name = "the legacy 10-column header", path = OUT .. "/operator_memory.csv", text = memory_csv_text(LEGACY),
    readable = true },
  { name = "without Device Type (a required column)", path = OUT .. "/operator_memory.csv",
    text = memory_csv_text(h.MEMORY_CSV_HEADER:gsub(",Device Type", "")), readable = false },
  { name = "without Release Time (an optional column)", path = OUT .. "/operator_memory.csv",
    text = memory_csv_text(h.MEMORY_CSV_HEADER:gsub(",Release Time%(us%)", "")), readable = true },
  { name = "a folder named operator_memory.csv", path = OUT .. "/operator_memory.csv", folder = true, readable = false },
}

local function errors_of(problems)
  local n, first = 0, nil
  for _, p in ipairs(problems) do
    if p.severity == "error" then n, first = n + 1, first or p end
  end
  return n, first
end

describe("input discovery", function()
  local dir
  before_each(function()
    i18n.set("en")
    dir = h.tmpdir()
  end)
  after_each(function() h.cleanup(dir) end)

  it("the memory input checks pass exactly when the CSV reader reads the rank", function()
    local rules = assert(rules_mod.load("memory"))
    for i, l in ipairs(MEMORY_LAYOUTS) do
      local top = ("%s/t%d"):format(dir, i)
      local rank = top .. "/rank0_ascend_pt"
      assert(core.fs.mkdirs(rank .. "/" .. OUT))
      if l.folder then
        assert(core.fs.mkdirs(rank .. "/" .. l.path))
      else
        assert(core.fs.mkdirs(discover.dirname(rank .. "/" .. l.path)))
        h.write(rank .. "/" .. l.path, l.text)
      end
      -- the checks of rules/memory.lua on the rank folder
      local n_errors, first = errors_of(checks.run(rules.input, { dir = rank }))
      assert.equal(l.readable, n_errors == 0, l.name .. ": " .. (first and first.message or ""))
      -- the reader, on the file discovery gives it
      local path = discover.find("operator_memory", rank)
      local read = path and memory_csv.read(path, nil, memory_csv.required(rules))
      assert.equal(l.readable, read ~= nil and read ~= false, l.name)
      if read then assert.equal(3, read.n, l.name) end
      -- the whole run: the rank is read, or failed with the check's message
      local res = assert(memory.parse(top, { jobs = 1 }))
      assert.equal(l.readable and 1 or 0, #res.ranks, l.name)
      assert.equal(l.readable and 0 or 1, #res.failed, l.name)
      if l.readable then
        assert.equal(3, res.ranks[1].n, l.name)
      else
        assert.truthy(res.failed[1].reason:find(first.message, 1, true), l.name .. ": " .. res.failed[1].reason)
      end
    end
  end)

  it("registers every kind of input with a reader that exists", function()
    local n = 0
    for kind, k in pairs(discover.inputs) do
      local module, fn = k.reader:match("^(.+)%.([%w_]+)$")
      assert.equal("function", type(require(module)[fn]), kind .. ": " .. k.reader)
      assert.truthy(k.match or #k.names > 0, kind)
      assert.truthy((k.match == nil) ~= (k.names == nil), kind .. ": names or match, not both")
      n = n + 1
    end
    assert.equal(9, n)
  end)

  -- the field jobs' inputs: every file of a kind under a path; the files of each tree below say
  -- by their value whether the job reads them
  local FIELD_TREES = {
    { kind = "kernel_details", files = { ["c0/kernel_details.csv"] = true, ["c1/deep/op_summary_1_2.csv"] = true,
      ["c1/kernel_details.csv.bak"] = false, ["c2/op_statistic_0.csv"] = false, ["c2/Kernel_Details.csv"] = false },
      read = function(top) return require("ascope.opjitter").find(top) end },
    { kind = "plog", files = { ["plog/plog-1_2.log"] = true, ["device-0/device-2_1.txt"] = true, ["plog/x.bin"] = false,
      ["run/notes.md"] = false, ["run/core.1"] = false },
      read = function(top) return require("ascope.ascend.plog").files(top, assert(rules_mod.load("plog"))) end },
    { kind = "graph", files = { ["device0/graph_1_device0.json"] = true, ["rank_1/dynamo_x_graph_1.pbtxt"] = true,
      ["rank_1/ge_onnx_a.pbtxt"] = true, ["rank_1/graph_summary.txt"] = false, ["x/dynamo_notes.py"] = false },
      read = function(top)
        local out = {}
        for i, f in ipairs(assert(require("ascope.ascend.graph").files(top, assert(rules_mod.load("graph"))))) do
          out[i] = f.path
        end
        return out
      end },
    { kind = "moe_summary", files = { ["m0/moe_summary.json"] = true, ["m1/out/moe_summary.json"] = true,
      ["m1/moe_summary.json.old"] = false, ["m2/summary.json"] = false },
      read = function(top)
        return assert(require("ascope.ascend.moe_summary").read_machines(top, nil, function() end)).merged
      end },
  }

  it("finds the field jobs' files where their readers read them, in path order", function()
    for i, tree in ipairs(FIELD_TREES) do
      local top = ("%s/f%d"):format(dir, i)
      local want = {}
      for rel, read in pairs(tree.files) do
        assert(core.fs.mkdirs(discover.dirname(top .. "/" .. rel)))
        h.write(top .. "/" .. rel, "x\n")
        if read then want[#want + 1] = top .. "/" .. rel end
      end
      table.sort(want)
      local rules = tree.kind == "plog" and rules_mod.load("plog") or tree.kind == "graph" and rules_mod.load("graph") or nil
      local found = {}
      for j, f in ipairs(assert(discover.files(tree.kind, top, rules))) do found[j] = f.path end
      assert.same(want, found, tree.kind)
      if tree.read then assert.same(want, (tree.read(top)), tree.kind) end
    end
  end)

  it("takes a log file given by path as it is, and names a missing path", function()
    h.write(dir .. "/odd.bin", "x\n")
    assert.same({ dir .. "/odd.bin" }, require("ascope.ascend.plog").files(dir .. "/odd.bin", assert(rules_mod.load("plog"))))
    local rules = assert(rules_mod.load("graph"))
    assert.same({}, (discover.files("graph", dir .. "/odd.bin", rules)))
    local list, err = discover.files("graph", dir .. "/none", rules)
    assert.is_nil(list)
    assert.equal(i18n.t("input.no_such", dir .. "/none"), err)
  end)

  it("sorts a card folder's dump files into workspaces, inputs, windows, kernels and raw dumps", function()
    local names = { "Op.1.2.3.workspace.1.5.npy", "Op.1.2.3.input.0.7.bin", "Op.1.2.3.input.3.npy",
                    "mc2_exception_info_0.json", "kernel_host.o", "dump_raw_1234", "notes.txt", "other.npy", "a.o" }
    for _, n in ipairs(names) do h.write(dir .. "/card/" .. n, "x") end
    local files = require("ascope.ascend.dump").card_files(dir .. "/card")
    local d = dir .. "/card/"
    assert.same({ [1] = d .. names[1] }, files.workspace)
    assert.same({ [0] = d .. names[2], [3] = d .. names[3] }, files.input)
    assert.same({ d .. names[4] }, files.window)
    assert.same({ d .. names[5] }, files.kernels)
    assert.same({ d .. names[6] }, files.raw)
  end)

  it("names every place it looked when the file is not there", function()
    local rank = dir .. "/rank0_ascend_pt"
    assert(core.fs.mkdirs(rank .. "/" .. OUT .. "/extra"))
    h.write(rank .. "/" .. OUT .. "/extra/operator_memory.csv", memory_csv_text())
    local path, looked = discover.find("operator_memory", rank)
    assert.is_nil(path)
    -- the profiler's .db carries the same table, so it is named as a place looked too
    local places = {}
    for _, d in ipairs({ rank .. "/" .. OUT, rank }) do
      places[#places + 1] = d .. "/operator_memory.csv"
      places[#places + 1] = d .. "/ascend_pytorch_profiler*.db"
    end
    assert.equal(table.concat(places, " or "), looked)
    local problems = checks.run(assert(rules_mod.load("memory")).input, { dir = rank })
    assert.equal("operator_memory.csv is missing: " .. looked, problems[1].message)
    assert.equal("operator_memory_present", problems[1].id)
  end)

  it("the required columns are written once: the check's columns are the reader's", function()
    local rules = assert(rules_mod.load("memory"))
    local from_check
    for _, c in ipairs(rules.input) do
      if c.check == "columns_present" and c.input == "operator_memory" then from_check = c.columns end
    end
    assert.same(from_check, memory_csv.required(rules))
    -- a user's rule that requires one more column makes both refuse a file without it
    h.write(dir .. "/more.lua", [[return { input = { { id = "required_columns",
      columns = { "Name", "Size(KB)", "Allocation Time(us)", "Duration(us)", "Allocation Total Allocated(MB)",
                  "Device Type", "Allocation Total Active(MB)" } } } }]])
    local more = assert(rules_mod.load("memory", dir .. "/more.lua"))
    local rank = dir .. "/rank0_ascend_pt"
    assert(core.fs.mkdirs(rank .. "/" .. OUT))
    h.write(rank .. "/" .. OUT .. "/operator_memory.csv", memory_csv_text(LEGACY))
    local n_errors, first = errors_of(checks.run(more.input, { dir = rank }))
    assert.equal(1, n_errors)
    assert.truthy(first.message:find("Allocation Total Active(MB)", 1, true), first.message)
    local none, err = memory_csv.read(rank .. "/" .. OUT .. "/operator_memory.csv", nil, memory_csv.required(more))
    assert.is_nil(none)
    assert.truthy(err:find("Allocation Total Active(MB)", 1, true), err)
    -- and the bundled rules read the legacy file
    assert.equal(0, errors_of(checks.run(rules.input, { dir = rank })))
  end)

  it("an input check names an input kind, never a path", function()
    h.write(dir .. "/path.lua", [[return { input = { { id = "operator_memory_present",
      file = "ASCEND_PROFILER_OUTPUT/operator_memory.csv" } } }]])
    local none, err = rules_mod.load("memory", dir .. "/path.lua")
    assert.is_nil(none)
    assert.truthy(tostring(err):find("file", 1, true), tostring(err))
    h.write(dir .. "/kind.lua", [[return { input = { { id = "operator_memory_present", input = "operator_memroy" } } }]])
    none, err = rules_mod.load("memory", dir .. "/kind.lua")
    assert.is_nil(none)
    assert.truthy(tostring(err):find("operator_memroy", 1, true), tostring(err))
    h.write(dir .. "/none.lua", [[return { input = { { id = "mine", check = "file_present", severity = "error" } } }]])
    none, err = rules_mod.load("memory", dir .. "/none.lua")
    assert.is_nil(none)
    assert.truthy(tostring(err):find('"input"', 1, true), tostring(err))
  end)

  -- a small Chrome trace: three compute tasks on one device stream
  local TRACE = [[{"traceEvents": [
{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Ascend Hardware"}},
{"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "Stream 2"}},
{"ph": "X", "name": "MatMul", "pid": 1, "tid": 2, "ts": "100.0", "dur": 10, "args": {"Task Type": "AI_CORE"}},
{"ph": "X", "name": "Add", "pid": 1, "tid": 2, "ts": "120.0", "dur": 5, "args": {"Task Type": "AI_VECTOR_CORE"}},
{"ph": "X", "name": "MatMul", "pid": 1, "tid": 2, "ts": "130.0", "dur": 10, "args": {"Task Type": "AI_CORE"}}
]}]]
  local DB = h.real .. "/msinsight_pytorch_db_level0/rank0_ascend_pt/" .. OUT .. "/ascend_pytorch_profiler_0.db"
  local function copy(from, to)
    local f = assert(io.open(from, "rb"))
    local data = f:read("a")
    f:close()
    h.write(to, data)
  end

  -- timeline layouts: which file the reader should take (nil: none)
  local TIMELINE_LAYOUTS = {
    { name = "trace_view.json in " .. OUT, files = { [OUT .. "/trace_view.json"] = TRACE }, want = OUT .. "/trace_view.json" },
    { name = "trace_view.json in the rank folder", files = { ["trace_view.json"] = TRACE }, want = "trace_view.json" },
    { name = "a .db instead of the JSON", files = { [OUT .. "/ascend_pytorch_profiler_0.db"] = DB },
      want = OUT .. "/ascend_pytorch_profiler_0.db" },
    { name = "both: the JSON first", files = { [OUT .. "/ascend_pytorch_profiler_0.db"] = DB, [OUT .. "/trace_view.json"] = TRACE },
      want = OUT .. "/trace_view.json" },
    { name = "msprof JSON anywhere below", files = { ["PROF_1/mindstudio_profiler_output/msprof_2024.json"] = TRACE },
      want = "PROF_1/mindstudio_profiler_output/msprof_2024.json" },
    { name = "trace_view.json one level deeper", files = { [OUT .. "/extra/trace_view.json"] = TRACE }, want = nil },
  }

  it("a timeline check passes exactly when the timeline reader finds and reads the rank", function()
    local rule = { { id = "timeline_present", check = "file_present", input = "timeline", severity = "error",
                     text = "timeline_missing" } }
    for i, l in ipairs(TIMELINE_LAYOUTS) do
      local top = ("%s/t%d"):format(dir, i)
      local rank = top .. "/rank0_ascend_pt"
      assert(core.fs.mkdirs(rank .. "/" .. OUT))
      for rel, content in pairs(l.files) do
        assert(core.fs.mkdirs(discover.dirname(rank .. "/" .. rel)))
        if content == DB then copy(DB, rank .. "/" .. rel) else h.write(rank .. "/" .. rel, content) end
      end
      local problems = checks.run(rule, { dir = rank })
      assert.equal(l.want ~= nil, #problems == 0, l.name)
      assert.equal(l.want and (rank .. "/" .. l.want), discover.find("timeline", rank), l.name)
      local res = assert(timeline.run(top, { jobs = 1 }))
      assert.equal(l.want and 1 or 0, #res.ranks, l.name)
      assert.equal(l.want and 0 or 1, #res.failed, l.name)
      if l.want then assert.equal(rank .. "/" .. l.want, res.ranks[1].trace, l.name) end
    end
  end)
end)
