local h = require "helper"
local shard = require "ascope.shard"
local gen = require "gen_tree"

local files, unpath, count = h.files, h.unpath, h.count

local function shards(dir, n, args) return (h.shards(dir, n, args, { "-q" })) end

describe("shard selection", function()
  it("reads K/N and refuses anything else", function()
    assert.same({ k = 2, n = 7 }, shard.parse("2/7"))
    assert.same({ k = 1, n = 1 }, shard.parse(" 1 / 1 "))
    for _, bad in ipairs({ "0/3", "4/3", "3", "a/b", "1/0", "-1/3", "1/100001" }) do
      local ok, e = pcall(shard.parse, bad)
      assert.is_false(ok, bad)
      assert.truthy(tostring(e.msg or e):find(bad, 1, true), bad)
    end
  end)

  it("gives every unit to exactly one shard, the same way every time", function()
    local w = { 5, 900, 3, 3, 70, 0, 0, 0, 120, 44, 44, 1000 }
    local a = shard.assign(w, 4)
    local b = shard.assign(w, 4)
    assert.same(a, b)
    assert.equal(#w, #a)
    for i = 1, #w do assert.truthy(a[i] >= 1 and a[i] <= 4) end
  end)

  it("balances by bytes, not by count", function()
    -- one big rank and eight small ones: the big one is a shard of its own
    local w = { 10, 10, 10, 10, 800, 10, 10, 10, 10 }
    local owner, load = shard.assign(w, 2)
    local big = owner[5]
    for i, s in ipairs(owner) do
      if i ~= 5 then assert.are_not.equal(big, s) end
    end
    assert.equal(801, load[big])
    assert.equal(88, load[3 - big])
  end)

  it("stays within the greedy bound on uneven sizes (max load <= mean + largest unit)", function()
    local w, seed, total, largest = {}, 7, 0, 0
    for i = 1, 200 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      w[i] = seed % 100000
      total, largest = total + w[i] + 1, math.max(largest, w[i] + 1)
    end
    for _, n in ipairs({ 1, 3, 7, 16 }) do
      local owner, load = shard.assign(w, n)
      local sum, mx = {}, 0
      for i, s in ipairs(owner) do sum[s] = (sum[s] or 0) + w[i] + 1 end
      for s = 1, n do
        assert.equal(sum[s] or 0, load[s])
        mx = math.max(mx, load[s])
      end
      assert.truthy(mx <= total / n + largest, ("n=%d: %d > %f"):format(n, mx, total / n + largest))
    end
  end)

  it("spreads empty units by count", function()
    local owner = shard.assign({ 0, 0, 0, 0, 0, 0 }, 3)
    local per = {}
    for _, s in ipairs(owner) do per[s] = (per[s] or 0) + 1 end
    assert.same({ 2, 2, 2 }, per)
  end)
end)

-- A generated 12-rank tree for the specs of one describe block: fills t.dir and t.tree.
local function tree_for_block(events)
  local t = {}
  setup(function()
    t.dir = h.tmpdir()
    t.tree = gen.tree(t.dir .. "/tree", 12, events)
  end)
  teardown(function() h.cleanup(t.dir) end)
  return t
end

describe("file scans beside other workers", function()
  it("share the idle CPUs between the units read at once, and only while they run", function()
    local workers = require "ascope.workers"
    local core = require "ascope_core"
    assert.is_nil(workers.scan_threads)
    assert.equal(1, workers.share(100000))
    assert.truthy(workers.share(1) >= 1 and workers.share(1) <= core.fs.cpus())
    local recipe = { work = function() return workers.scan_threads or "none" end }
    -- one unit: the scan decides alone
    assert.same({ ok = "none" }, shard.compute(recipe, {}, { 1 }, 2)[1])
    -- two units with two workers: each scan is given its share (at least one thread)
    local out = shard.compute(recipe, {}, { 1, 2 }, 2)
    for i = 1, 2 do
      local ok = out[i].ok
      assert.truthy(ok == "none" or (math.type(ok) == "integer" and ok >= 1 and ok <= core.fs.cpus()), tostring(ok))
    end
    assert.is_nil(workers.scan_threads)
  end)
end)

describe("--shard K/N and merge on a generated 12-rank tree", function()
  local fixture = tree_for_block(25)
  local dir, tree
  before_each(function() dir, tree = fixture.dir, fixture.tree end)

  for _, case in ipairs({
    { "memory", { "memory" }, 5 },
    { "timeline", { "timeline" }, 3 },
    { "opjitter", { "opjitter" }, 4 },
  }) do
    local command, args, nfiles = case[1], case[2], case[3]
    it(command .. ": N = 1, 3 and 7 shards merge to the single run's bytes, stdout and exit code", function()
      local single = dir .. "/" .. command .. "-single"
      local a = { table.unpack(args) }
      a[#a + 1] = tree
      local run_args = { table.unpack(a) }
      for _, x in ipairs({ "-o", single, "-q" }) do run_args[#run_args + 1] = x end
      local code, out = h.run(table.unpack(run_args))
      local want = files(single)
      assert.equal(nfiles, count(want))
      for _, n in ipairs({ 1, 3, 7 }) do
        local parts = shards(dir .. "/" .. command, n, a)
        local merged = ("%s/%s-merged-%d"):format(dir, command, n)
        local margs = { "merge" }
        for _, part in ipairs(parts) do margs[#margs + 1] = part end
        for _, x in ipairs({ "-o", merged, "-q" }) do margs[#margs + 1] = x end
        local mcode, mout, merr = h.run(table.unpack(margs))
        assert.equal(code, mcode, merr)
        assert.equal(unpath(out, single), unpath(mout, merged))
        local got = files(merged)
        assert.equal(count(want), count(got))
        for name, bytes in pairs(want) do
          assert.is_true(got[name] == bytes, ("%s: %s differs after %d shard(s)"):format(command, name, n))
        end
      end
    end)
  end

  it("gives each shard its own ranks, all of them once, balanced by bytes", function()
    local seen, bytes = {}, {}
    for k, part in ipairs(shards(dir .. "/sel", 3, { "memory", tree })) do
      local m = require("ascope_core").json.decode(h.read(part .. "/manifest.json"))
      assert.equal("ascope-partial", m.format)
      assert.equal(1, m.format_version)
      assert.equal(require("ascope.main").VERSION, m.ascope_version)
      assert.equal(12, #m.units)
      bytes[k] = 0
      for _, r in ipairs(m.data.records) do
        assert.is_nil(seen[r.unit])
        seen[r.unit] = k
        assert.equal(k, m.units[r.unit].shard)
        bytes[k] = bytes[k] + m.units[r.unit].bytes
        -- the manifest's sizes are the files' sizes
        for _, f in ipairs(m.units[r.unit].files) do
          local st = require("ascope_core").fs.stat(f.path)
          assert.equal(st and st.size or -1, f.size)
        end
      end
    end
    assert.equal(12, count(seen))
    local lo, hi = math.min(table.unpack(bytes)), math.max(table.unpack(bytes))
    -- the ranks are 1x to 5x each other; greedy by bytes keeps the shards within one rank
    assert.truthy(hi - lo < 0.2 * hi, ("%d vs %d bytes"):format(lo, hi))
  end)

  describe("merge refuses parts that do not make one run", function()
    local parts
    setup(function() parts = shards(fixture.dir .. "/bad", 3, { "memory", fixture.tree }) end)

    it("names a missing shard", function()
      local code, _, err = h.run("merge", parts[1], parts[3], "-o", dir .. "/x1")
      assert.equal(1, code)
      assert.truthy(err:find("shard(s) 2/3 missing", 1, true), err)
      assert.is_nil(require("ascope_core").fs.stat(dir .. "/x1"))
    end)

    it("names a duplicated shard and both parts", function()
      local copy = dir .. "/bad/copy-of-2"
      os.execute(("cp -r '%s' '%s'"):format(parts[2], copy))
      local code, _, err = h.run("merge", parts[1], parts[2], copy, parts[3], "-o", dir .. "/x2")
      assert.equal(1, code)
      assert.truthy(err:find("shard 2/3 is given twice: " .. parts[2] .. " and " .. copy, 1, true), err)
    end)

    it("names the option that differs", function()
      local other = dir .. "/bad/within"
      local code = h.run("memory", tree, "--match", "within", "--shard", "2/3", "-o", other, "-q")
      assert.equal(0, code)
      local mcode, _, err = h.run("merge", parts[1], other, parts[3], "-o", dir .. "/x3")
      assert.equal(1, mcode)
      assert.truthy(err:find("--match is (not given) in one and \"within\" in the other", 1, true), err)
      -- the language of the messages in the outputs is one of the options
      local zh = dir .. "/bad/zh"
      assert.equal(0, (h.run("--lang", "zh", "memory", tree, "--shard", "2/3", "-o", zh, "-q")))
      mcode, _, err = h.run("merge", parts[1], zh, parts[3], "-o", dir .. "/x3")
      assert.equal(1, mcode)
      assert.truthy(err:find("--lang is \"en\" in one and \"zh\" in the other", 1, true), err)
    end)

    it("refuses parts of another command, another N or another ascope version", function()
      local tl = dir .. "/bad/timeline"
      assert.equal(0, (h.run("timeline", tree, "--shard", "2/3", "-o", tl, "-q")))
      local code, _, err = h.run("merge", parts[1], tl, parts[3], "-o", dir .. "/x4")
      assert.equal(1, code)
      assert.truthy(err:find("command is memory in one and timeline in the other", 1, true), err)
      local four = dir .. "/bad/four"
      assert.equal(0, (h.run("memory", tree, "--shard", "2/4", "-o", four, "-q")))
      code, _, err = h.run("merge", parts[1], four, parts[3], "-o", dir .. "/x5")
      assert.equal(1, code)
      assert.truthy(err:find("N of --shard K/N is 3 in one and 4 in the other", 1, true), err)
      local old = dir .. "/bad/old"
      os.execute(("cp -r '%s' '%s'"):format(parts[2], old))
      local m = h.read(old .. "/manifest.json"):gsub('"ascope_version": "[^"]*"', '"ascope_version": "0.0.1"')
      h.write(old .. "/manifest.json", m)
      code, _, err = h.run("merge", parts[1], old, parts[3], "-o", dir .. "/x6")
      assert.equal(1, code)
      assert.truthy(err:find(old .. " was written by ascope 0.0.1", 1, true), err)
      -- the same version number, another build (its code fingerprint differs)
      local other = dir .. "/bad/other-build"
      os.execute(("cp -r '%s' '%s'"):format(parts[2], other))
      m = h.read(other .. "/manifest.json"):gsub('"ascope_build": "[^"]*"', '"ascope_build": "0123456789abcdef"')
      h.write(other .. "/manifest.json", m)
      code, _, err = h.run("merge", parts[1], other, parts[3], "-o", dir .. "/x6b")
      assert.equal(1, code)
      assert.truthy(err:find(other .. " was written by another build of ascope " .. require("ascope.main").VERSION
        .. " (code fingerprint 0123456789abcdef, not ", 1, true), err)
    end)

    it("refuses a damaged or unfinished part, naming it", function()
      local cut = dir .. "/bad/cut"
      os.execute(("cp -r '%s' '%s'"):format(parts[2], cut))
      local data = h.read(cut .. "/results.bin")
      h.write(cut .. "/results.bin", data:sub(1, #data - 10))
      local code, _, err = h.run("merge", parts[1], cut, parts[3], "-o", dir .. "/x7")
      assert.equal(1, code)
      assert.truthy(err:find(cut .. "/results.bin: " .. (#data - 10) .. " bytes, the manifest says " .. #data, 1, true), err)
      local flipped = dir .. "/bad/flipped"
      os.execute(("cp -r '%s' '%s'"):format(parts[2], flipped))
      local at = assert(tonumber(h.read(flipped .. "/manifest.json"):match('"offset": (%d+),%s*"unit"')))
      h.write(flipped .. "/results.bin", data:sub(1, at) .. "\255" .. data:sub(at + 2))
      code, _, err = h.run("merge", parts[1], flipped, parts[3], "-o", dir .. "/x8")
      assert.equal(1, code)
      assert.truthy(err:find(flipped .. "/results.bin: damaged record", 1, true), err)
      code, _, err = h.run("merge", parts[1], dir .. "/tree", parts[3], "-o", dir .. "/x9")
      assert.equal(1, code)
      assert.truthy(err:find(dir .. "/tree: not a partial result", 1, true), err)
      -- a manifest cut short says where its JSON ends; one that is JSON but no object says so
      local manifest = h.read(parts[2] .. "/manifest.json")
      for k, case in ipairs({ { manifest:sub(1, 26), "2:25 (byte 26): invalid JSON" }, { "", "1:1 (byte 0): invalid JSON" },
                              { "null", "its JSON is not an object" } }) do
        local bad = dir .. "/bad/manifest" .. k
        os.execute(("cp -r '%s' '%s'"):format(parts[2], bad))
        h.write(bad .. "/manifest.json", case[1])
        code, _, err = h.run("merge", parts[1], bad, parts[3], "-o", dir .. "/x9" .. k)
        assert.equal(1, code)
        assert.truthy(err:find(bad .. "/manifest.json: not a usable partial result: " .. case[2], 1, true), err)
      end
    end)

    it("refuses parts whose input files changed between the shards' runs", function()
      local later = dir .. "/later"
      os.execute(("cp -r '%s' '%s'"):format(tree, later))
      local p1 = dir .. "/later-1"
      assert.equal(0, (h.run("memory", later, "--shard", "1/2", "-o", p1, "-q")))
      local victim = later .. "/actor/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
      local f = assert(io.open(victim, "ab"))
      f:write("aten::empty,512,9000000,,,,,1,2,1,,,,1,NPU:0\n")
      f:close()
      local p2 = dir .. "/later-2"
      assert.equal(0, (h.run("memory", later, "--shard", "2/2", "-o", p2, "-q")))
      local code, _, err = h.run("merge", p1, p2, "-o", dir .. "/x10")
      assert.equal(1, code)
      assert.truthy(err:find("saw different inputs (actor/0: " .. victim, 1, true), err)
    end)
  end)

  it("keeps a bad rank as the single run does: shards succeed, merge reports it and exits 1", function()
    local broken = dir .. "/broken"
    os.execute(("cp -r '%s' '%s'"):format(tree, broken))
    h.write(broken .. "/critic/r3_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv", "not,a,memory,file\n")
    local code, out, err = h.run("memory", broken, "-o", dir .. "/broken-single", "-q")
    assert.equal(1, code)
    assert.truthy(err:find("rank 3 (critic)", 1, true), err)
    local parts = shards(dir .. "/broken", 3, { "memory", broken })
    local mcode, mout, merr = h.run("merge", parts[1], parts[2], parts[3], "-o", dir .. "/broken-merged", "-q")
    assert.equal(1, mcode)
    assert.equal(unpath(out, dir .. "/broken-single"), unpath(mout, dir .. "/broken-merged"))
    assert.equal(err, merr)
    assert.same(files(dir .. "/broken-single"), files(dir .. "/broken-merged"))
  end)

  it("merge needs parts", function()
    local code, _, err = h.run("merge", "-o", dir .. "/none")
    assert.equal(2, code)
    assert.truthy(err:find("ascope merge needs the PART folders", 1, true), err)
  end)
end)

describe("examples/slurm", function()
  local fixture = tree_for_block(10)
  local dir, tree
  before_each(function() dir, tree = fixture.dir, fixture.tree end)

  local function sh(env, script)
    local words = {}
    for k, v in pairs(env) do words[#words + 1] = ("%s='%s'"):format(k, v) end
    local out = os.tmpname()
    local _, _, code = os.execute(("env %s sh %s >%s 2>&1"):format(table.concat(words, " "), script, out))
    local text = h.read(out)
    os.remove(out)
    return code, text
  end

  it("array tasks, as Slurm starts them, and the merge job give the single run's outputs", function()
    local code = h.run("timeline", tree, "-o", dir .. "/single", "-q")
    assert.equal(0, code)
    for k = 1, 3 do
      local c, out = sh({ SLURM_ARRAY_TASK_ID = k, SLURM_ARRAY_TASK_COUNT = 3, SLURM_CPUS_PER_TASK = 1,
                          ASCOPE = h.bin, ASCOPE_COMMAND = "timeline", ASCOPE_INPUT = tree, ASCOPE_PARTS = dir .. "/parts" },
        "examples/slurm/ascope-array.sbatch")
      assert.equal(0, c, out)
      assert.truthy(out:find(("shard %d/3:"):format(k), 1, true), out)
    end
    -- the merge names every part: one that is missing is named
    os.execute(("mv '%s/parts/part-2' '%s/part-2'"):format(dir, dir))
    local c, out = sh({ ASCOPE = h.bin, ASCOPE_PARTS = dir .. "/parts", ASCOPE_OUT = dir .. "/merged", ASCOPE_SHARDS = 3 },
      "examples/slurm/ascope-merge.sbatch")
    assert.equal(1, c)
    assert.truthy(out:find(dir .. "/parts/part-2: not a partial result", 1, true), out)
    os.execute(("mv '%s/part-2' '%s/parts/part-2'"):format(dir, dir))
    c, out = sh({ ASCOPE = h.bin, ASCOPE_PARTS = dir .. "/parts", ASCOPE_OUT = dir .. "/merged", ASCOPE_SHARDS = 3 },
      "examples/slurm/ascope-merge.sbatch")
    assert.equal(0, c, out)
    assert.same(files(dir .. "/single"), files(dir .. "/merged"))
  end)

  it("submit.sh submits an array of N and a merge after it, and prints both job ids", function()
    -- a stand-in sbatch on PATH: records its arguments, answers job ids 41 and 42
    local bin = dir .. "/bin"
    h.write(bin .. "/sbatch", "#!/bin/sh\necho \"$*\" >> '" .. dir .. "/sbatch.log'\n"
      .. "n=$(wc -l < '" .. dir .. "/sbatch.log')\necho $((40 + n))\n")
    os.execute(("chmod +x '%s/sbatch'"):format(bin))
    local c, out = sh({ PATH = bin .. ":" .. os.getenv("PATH"), ASCOPE_CPUS = 3 },
      ("examples/slurm/submit.sh '%s' '%s' 5"):format(tree, dir .. "/report"))
    assert.equal(0, c, out)
    assert.truthy(out:find("array job 41: 5 shard(s)", 1, true), out)
    assert.truthy(out:find("merge job 42: runs after every shard succeeded", 1, true), out)
    assert.truthy(out:find("\n41 42\n$"), out)
    local log = h.read(dir .. "/sbatch.log")
    assert.truthy(log:find("--array=1-5 --cpus-per-task=3", 1, true), log)
    assert.truthy(log:find("--dependency=afterok:41", 1, true), log)
    c, out = sh({ PATH = bin .. ":" .. os.getenv("PATH") }, ("examples/slurm/submit.sh '%s' '%s' 0"):format(tree, dir .. "/r"))
    assert.equal(2, c)
    assert.truthy(out:find("N must be a whole number >= 1", 1, true), out)
  end)
end)
