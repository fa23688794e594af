-- diagnose composes the analyses in memory: run under an LD_PRELOAD spy (spec/c/openspy.c, built
-- into the build folder beside the executable) that logs every open(2)/openat(2)/fopen(3) and
-- opendir(3) of the process and its workers, each input file is opened exactly once and nothing
-- under OUT is opened for reading. Each job also lists each input folder once and loads its rule
-- file once: finding files is not done again by the input checks, the plan and the reader.
-- Under `make sanitize` the executable carries the ASan runtime, which wants to be the first
-- library of the process: the spy goes first all the same (its calls reach ASan's interceptors
-- through dlsym(RTLD_NEXT)), with ASan's link-order check off for that run only.
local core = require "ascope_core"
local h = require "helper"
local mh = require "moe_helper"

local SPY = h.bin:match("^(.*)/[^/]+$") .. "/openspy.so"

local function plog_line(time, msg)
  return ("[ERROR] RUNTIME(1,python):2024-06-01-10:00:%s.000.000 [rt.cc:1]2 %s\n"):format(time, msg)
end

-- Run ascope under the spy; returns exit code, stdout, stderr and the opens: {path -> {r = n, w = n,
-- d = n}} (d: listed as a folder).
local function spied(dir, ...)
  local log = dir .. "/opens.log"
  os.remove(log)
  local asan = os.getenv("ASAN_OPTIONS")
  local code, out, err = h.run({ OPENSPY_LOG = log, LD_PRELOAD = SPY,
                                 ASAN_OPTIONS = (asan and asan .. ":" or "") .. "verify_asan_link_order=0" }, ...)
  local opens = {}
  local f = io.open(log, "rb")
  if f then
    for line in f:lines() do
      local mode, path = line:match("^([rwd]) (.*)$")
      local real = core.fs.realpath(path) or path
      opens[real] = opens[real] or { r = 0, w = 0, d = 0 }
      opens[real][mode] = opens[real][mode] + 1
    end
    f:close()
  end
  return code, out, err, opens
end

describe("diagnose under an open spy", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("the spy is built and sees what a command opens", function()
    assert.truthy(core.fs.stat(SPY), SPY .. " is missing: make builds it (ctests)")
    h.write(dir .. "/g/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}]}')
    h.write(dir .. "/g/graph_1_device1.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}]}')
    -- a command that reads its input once more by itself would show here as 2
    local code, _, err, opens = spied(dir, "graph", dir .. "/g", "-o", dir .. "/out")
    assert.equal(0, code, err)
    local g0 = core.fs.realpath(dir .. "/g/graph_1_device0.json")
    assert.same({ r = 1, w = 0, d = 0 }, opens[g0])
    assert.same({ r = 0, w = 0, d = 1 }, opens[core.fs.realpath(dir .. "/g")])
  end)

  it("reads each input file once and nothing back from OUT; its outputs are those of a run without the spy", function()
    local cards = mh.cluster({ state = "combine_stuck", fault = 0 })
    mh.write_cluster(dir .. "/dumps", cards, "mc2")
    -- kernel files inside the card folders: diagnose's default PROFILING_PATH is TARGET_DIR
    local header = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),aiv_vec_time(us),aiv_scalar_time(us)\n"
    for card = 0, 1 do
      h.write(("%s/dumps/%d/prof/kernel_details.csv"):format(dir, card), header
        .. ("1,D_1,MoeDistributeDispatchV2,AI_VECTOR_CORE,1001.000,%d,100,1.0\n"):format(10 + card)
        .. ("1,D_2,MoeDistributeDispatchV2,AI_VECTOR_CORE,1002.000,%d,100,1.0\n"):format(12 + 3 * card))
    end
    h.write(dir .. "/logs/device-0/plog-1.log", plog_line("05", "Aicore kernel execute failed, device_id=0, "
      .. "stream_id=4, task_id=7, fault kernel_name=MoeDistributeCombineV2_ab_mix_aiv"))
    h.write(dir .. "/logs/device-1/plog-1.log", plog_line("35", "[EI0002] notify wait timeout device_id=1"))
    h.write(dir .. "/graphs/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}, {"name": "MoeDistributeCombineV2_1"}]}')
    h.write(dir .. "/graphs/graph_1_device1.json", '{"op": [{"name": "MoeDistributeCombineV2_1"}, {"name": "MoeDistributeDispatchV2_1"}]}')
    local args = { "--lang", "en", "diagnose", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950",
                   "PLOG_PATH=" .. dir .. "/logs", "GRAPH_PATH=" .. dir .. "/graphs" }
    -- every input file is read, but the *_host.o of a dump, whose name (the operator) is all the
    -- dump reader takes from it
    local inputs, by_name = {}, {}
    for _, sub in ipairs({ "dumps", "logs", "graphs" }) do
      for _, p in ipairs(core.fs.walk(dir .. "/" .. sub)) do
        if p:match("_host%.o$") then by_name[#by_name + 1] = core.fs.realpath(p) else inputs[#inputs + 1] = core.fs.realpath(p) end
      end
    end
    -- per card 4 .npy inputs, the mc2 window dump and a kernel_details.csv; 2 logs; 2 graphs
    assert.equal(2 * 6 + 2 + 2, #inputs)
    assert.equal(2, #by_name)

    -- an earlier run's outputs in OUT, as when diagnose is run again: none of them may be read
    local a = { table.unpack(args) }
    a[#a + 1], a[#a + 2] = "-o", dir .. "/out"
    local code0 = h.run(table.unpack(a))
    assert.equal(0, code0)
    local code, out, err, opens = spied(dir, table.unpack(a))
    assert.equal(0, code, err)

    for _, p in ipairs(inputs) do
      local o = opens[p] or { r = 0, w = 0 }
      assert.same({ p, r = 1, w = 0 }, { p, r = o.r, w = o.w })
    end
    -- TARGET_DIR is walked by the moe analysis and by opjitter, which takes the kernel files
    -- diagnose found there (once each); the other folders once
    local listed = {}
    for p, o in pairs(opens) do
      if o.d > 0 then listed[h.unpath(p, core.fs.realpath(dir))] = o.d end
    end
    assert.same({ ["OUT/dumps"] = 2, ["OUT/dumps/0"] = 2, ["OUT/dumps/0/prof"] = 2, ["OUT/dumps/1"] = 2,
                  ["OUT/dumps/1/prof"] = 2, ["OUT/logs"] = 1, ["OUT/logs/device-0"] = 1, ["OUT/logs/device-1"] = 1,
                  ["OUT/graphs"] = 1 }, listed)
    for _, p in ipairs(by_name) do assert.is_nil(opens[p], p) end
    local out_dir = core.fs.realpath(dir .. "/out")
    for p, o in pairs(opens) do
      if p:sub(1, #out_dir + 1) == out_dir .. "/" then assert.equal(0, o.r, p .. " was opened for reading") end
    end

    -- the spy changes nothing in what diagnose says and writes
    local b = { table.unpack(args) }
    b[#b + 1], b[#b + 2] = "-o", dir .. "/plain"
    local pcode, pout = h.run(table.unpack(b))
    assert.equal(code, pcode)
    assert.equal(h.unpath(pout, dir .. "/plain"), h.unpath(out, dir .. "/out"))
    local spied_files, plain_files = h.files(dir .. "/out"), h.files(dir .. "/plain")
    assert.same(h.count(plain_files), h.count(spied_files))
    for name, bytes in pairs(plain_files) do
      assert.equal(h.unpath(bytes, dir .. "/plain"), h.unpath(spied_files[name], dir .. "/out"), name)
    end
    assert.truthy(spied_files["./error_plog.csv"] and spied_files["./profiling_all_data.csv"]
      and spied_files["./graph_summary.json"] and spied_files["./win_data.csv"] and spied_files["./diagnose_summary.json"])
    assert.truthy(out:find("[ERROR] root card 0", 1, true), out)
  end)

  -- the folders a run lists ({relative path -> times}) and how often it opened path for reading
  local function listed_by(tmp, root, ...)
    local code, _, err, opens = spied(tmp, ...)
    assert.equal(0, code, err)
    local real, listed = core.fs.realpath(root), {}
    for p, o in pairs(opens) do
      if o.d > 0 and (p == real or p:sub(1, #real + 1) == real .. "/") then listed[h.unpath(p, real)] = o.d end
    end
    return listed, opens
  end

  it("lists each input folder once in every job, and loads a rule file once", function()
    local rules = dir .. "/user_rules.lua"
    h.write(rules, "return {}\n")
    local real_rules = core.fs.realpath(rules)
    -- moe: TARGET_DIR, then each card folder walked by the plan, its files read from that walk
    mh.write_cluster(dir .. "/dumps", mh.cluster({ state = "combine_stuck", fault = 0 }), "mc2")
    local listed, opens = listed_by(dir, dir .. "/dumps", "moe", "TARGET_DIR=" .. dir .. "/dumps", "SOC_VERSION=950",
      "-o", dir .. "/o_moe", "--rules", rules)
    assert.same({ OUT = 1, ["OUT/0"] = 1, ["OUT/1"] = 1 }, listed)
    assert.equal(1, opens[real_rules].r)
    -- graph: the rule file checked and used from one load
    h.write(dir .. "/g/graph_1_device0.json", '{"op": [{"name": "MoeDistributeDispatchV2_1"}]}')
    listed, opens = listed_by(dir, dir .. "/g", "graph", dir .. "/g", "-o", dir .. "/o_graph", "--rules", rules)
    assert.same({ OUT = 1 }, listed)
    assert.equal(1, opens[real_rules].r)
    -- memory and timeline over a tree of two rank folders, and over one rank folder (no tree
    -- walk: each folder listed the first time it is asked for), also with the ranks in workers
    local tree = h.real .. "/msinsight_pytorch_text_level0"
    local all = { OUT = 1 }
    for _, r in ipairs({ "rank0_ascend_pt", "rank1_ascend_pt" }) do
      all["OUT/" .. r], all["OUT/" .. r .. "/ASCEND_PROFILER_OUTPUT"] = 1, 1
    end
    local one = { OUT = 1, ["OUT/ASCEND_PROFILER_OUTPUT"] = 1 }
    for _, job in ipairs({ "memory", "timeline" }) do
      assert.same(all, (listed_by(dir, tree, job, tree, "-o", dir .. "/o_" .. job, "-q", "-j", "2")))
      assert.same(all, (listed_by(dir, tree, job, tree, "-o", dir .. "/o_" .. job, "-q", "-j", "1")))
      local rank0 = tree .. "/rank0_ascend_pt"
      assert.same(one, (listed_by(dir, rank0, job, rank0, "-o", dir .. "/o1_" .. job, "-q")))
    end
  end)
end)
