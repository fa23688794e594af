-- ascope moe on damaged and hostile input: a card whose dump does not hold is named with the
-- file and the field, the other cards are analysed and written, the run ends within seconds,
-- under a memory cap, with exit 1. Inputs come from the generator (spec/moe_helper.lua), which
-- knows the healthy truth, and are then damaged byte by byte.
local core = require "ascope_core"
local h = require "helper"
local mh = require "moe_helper"

local WIN = 1048576 -- the window is the last MiB of the window file
local INFO_D = 768 * 1024 -- dispatch per-core info area (rules/win_layout.lua, v2)
local BLOCK = 512
local EP_WORD = 4

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- Run the ascope executable with a wall-clock timeout and (except under ASan, which reserves
-- terabytes of address space) a 1.5 GB address-space cap. Returns code, stdout, stderr, seconds.
local function run_bounded(...)
  local args = {}
  for i = 1, select("#", ...) do args[i] = shq(select(i, ...)) end
  local out, err = os.tmpname(), os.tmpname()
  local cap = h.bin:find("asan", 1, true) and "" or "ulimit -v 1500000; "
  local cmd = ("(%sexec timeout 30 %s %s) >%s 2>%s"):format(cap, shq(h.bin), table.concat(args, " "), out, err)
  local t0 = core.fs.clock()
  local _, _, code = os.execute(cmd)
  local secs = core.fs.clock() - t0
  local o, e = h.read(out), h.read(err)
  os.remove(out)
  os.remove(err)
  return code, o, e, secs
end

-- A 3-card combine hang (card 0 sent nothing) in one form; returns the cards and the path of
-- card 1's window file (raw: the raw dump, mc2: the mc2_exception_info file).
local function cluster(dir, form, over)
  local cards = mh.cluster({ state = "combine_stuck", fault = 0, cards = 3 })
  for k, v in pairs(over or {}) do cards[1][k] = v end
  mh.write_cluster(dir, cards, form)
  for _, n in ipairs(core.fs.list(dir .. "/1")) do
    if (form == "mc2" and n:match("^mc2_exception_info")) or (form == "raw" and n:match("%.%d+$")) then
      return cards, dir .. "/1/" .. n
    end
  end
end

local function set_i32(data, at, v) return data:sub(1, at) .. string.pack("<i4", v) .. data:sub(at + 5) end

-- ep_world_size (word 4) of every dispatch core of a window file's data
local function set_dispatch_ep(data, v, cores)
  local base = #data - WIN + INFO_D
  for c = 0, (cores or 24) - 1 do data = set_i32(data, base + c * BLOCK + EP_WORD * 4, v) end
  return data
end

-- The run's summary: cards 0 and 2 analysed as the generator's truth says, card 1 reported.
local function others_analysed(out, truth_cards)
  local s = core.json.load(out .. "/moe_summary.json")
  assert.truthy(s, "no moe_summary.json")
  for _, card in ipairs({ 0, 2 }) do
    local c = s.cards[tostring(card)]
    assert.truthy(c, "card " .. card .. " missing")
    assert.equal("combine", c.stuck_in)
    assert.equal(truth_cards[card].combine.run, c.combine.run_count)
    assert.equal(24, c.dispatch.cores)
  end
  local rows = h.csv_rows(out .. "/win_data.csv")
  local seen = {}
  for _, r in ipairs(rows) do seen[r.card] = true end
  assert.truthy(seen["0"] and seen["2"])
  return s
end

describe("ascope moe and graph on hostile input", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  describe("moe on damaged dumps", function()
    local function moe(...) return run_bounded("--lang", "en", "moe", "TARGET_DIR=" .. dir, "-o", dir .. "/out", ...) end

    for _, case in ipairs({ { "epWorldSize 0x7fffffff", 0x7fffffff }, { "epWorldSize 0", 0 }, { "epWorldSize -1", -1 } }) do
      it(case[1] .. " on every core: the card is named with file, field, value and what the window holds", function()
        local cards, win = cluster(dir, "mc2")
        h.write(win, set_dispatch_ep(h.read(win), case[2]))
        local code, out, err, secs = moe("SOC_VERSION=950")
        assert.equal(1, code, out:sub(-1500) .. err)
        assert.truthy(secs < 30)
        local msg = ("%s: card 1, dispatch ep_world_size = %d is not a value the window can hold (1..2048)"):format(win, case[2])
        assert.truthy(out:find(msg, 1, true), out:sub(-1500))
        local _, n = out:gsub(msg:gsub("%p", "%%%0"), "")
        assert.equal(1, n) -- printed once
        local s = others_analysed(dir .. "/out", cards)
        assert.equal(1, #s.failed)
        assert.equal(1, s.failed[1].card)
        -- the compared inputs need card 1's expertIds: no false epSendCounts finding on 0 and 2
        for _, a in ipairs(s.anomalies) do assert.not_equal("7", a.analysis, a.message) end
      end)
    end

    it("an epWorldSize the window can hold but the other cards do not share: no epSendCounts comparison", function()
      local _, win = cluster(dir, "mc2")
      h.write(win, set_dispatch_ep(h.read(win), 4))
      local code, out, err = moe("SOC_VERSION=950")
      assert.equal(0, code)
      -- the step says it on stderr, the finding is in the recap on stdout
      assert.truthy(err:find("7. the cards disagree on epWorldSize (3; 1=4)", 1, true), err:sub(-3000))
      assert.truthy(out:find("[ERROR] 1.1 card 1: dispatch epWorldSize 4 in the window differs from the HCCL link's 3", 1, true),
        out:sub(-3000))
      local s = core.json.load(dir .. "/out/moe_summary.json")
      for _, a in ipairs(s.anomalies) do assert.not_equal("7", a.analysis, a.message) end
      assert.same({}, s.cross_card.ep_send_counts_checked)
    end)

    it("one core's epWorldSize flipped is a WARNING on that core, the card is still analysed", function()
      local cards, win = cluster(dir, "mc2")
      local data = h.read(win)
      h.write(win, set_i32(data, #data - WIN + INFO_D + 5 * BLOCK + EP_WORD * 4, 0x7fffffff))
      local code, out = moe("SOC_VERSION=950")
      assert.equal(0, code)
      assert.truthy(out:find("1.1 card 1: dispatch ep_world_size differs on cores 5=2147483647 (most cores: 3)", 1, true), out)
      local s = core.json.load(dir .. "/out/moe_summary.json")
      assert.equal(cards[1].combine.run, s.cards["1"].combine.run_count)
    end)

    it("a window file one byte too long shifts every field: the card is reported, not analysed", function()
      local cards, win = cluster(dir, "mc2")
      h.write(win, h.read(win) .. "\0")
      local code, out, err = moe("SOC_VERSION=950")
      assert.equal(1, code, err)
      -- read one byte late, epWorldSize's word is its three high zero bytes and the low byte of
      -- the next word, globalBs 18 (6 tokens x 3 cards): 18 << 24
      assert.truthy(out:find(win .. ": card 1, dispatch ep_world_size = " .. (18 << 24) .. " is not", 1, true), out:sub(-1500))
      others_analysed(dir .. "/out", cards)
    end)

    it("a raw dump with a negative input size is named; the others are analysed", function()
      -- sizes -16 and 16 + 96 still add up to the file: only the sign tells
      local cards, raw = cluster(dir, "raw", { input_sizes = { [1] = -16, [2] = 16 + 96 } })
      local code, out, err = moe("SOC_VERSION=910_93")
      assert.equal(1, code, err)
      assert.truthy(out:find(raw .. ": input 0 has size -16, impossible in a ", 1, true), out:sub(-1500))
      others_analysed(dir .. "/out", cards)
    end)

    it("expertIds cut to 4 bytes: the card is analysed without them, exit 1, no divide by zero", function()
      local cards = cluster(dir, "raw", { cut_inputs = { [2] = 4 } })
      local code, out, err = moe("SOC_VERSION=910_93")
      assert.equal(1, code, err)
      -- stderr holds the steps only: no warning, error or traceback
      assert.falsy(err:find("[WARNING]", 1, true) or err:find("[ERROR]", 1, true) or err:find("ascope:", 1, true), err)
      assert.truthy(out:find("1.3 card 1: expertIds holds 1 value(s), its shape (6, 4) does not fit them", 1, true),
        out:sub(-1500))
      local s = others_analysed(dir .. "/out", cards)
      assert.equal("combine", s.cards["1"].stuck_in)
      assert.equal(0, #s.failed)
    end)

    it("a damaged .npy dtype with bytes that are not UTF-8 is quoted as \\xNN: the summary stays valid JSON", function()
      local cards = cluster(dir, "mc2")
      local p
      for _, n in ipairs(core.fs.list(dir .. "/1")) do if n:match("%.input%.3%.0%.npy$") then p = dir .. "/1/" .. n end end
      local data = h.read(p)
      local at = data:find("<i4", 1, true)
      h.write(p, data:sub(1, at + 1) .. "\200" .. data:sub(at + 3))
      local code, out = moe("SOC_VERSION=950")
      assert.equal(1, code)
      assert.truthy(out:find(p .. ": unsupported dtype <i\\xC8", 1, true), out:sub(-1500))
      local s = others_analysed(dir .. "/out", cards)
      assert.equal(p .. ": unsupported dtype <i\\xC8", s.failed[1].reason)
    end)

    it("an operator name with a byte that is not UTF-8 in a raw dump header is kept readable", function()
      local cards, raw = cluster(dir, "raw")
      local data = h.read(raw)
      local at = assert(data:find("MoeDistributeCombineV2", 9, true))
      h.write(raw, data:sub(1, at + 17) .. "\200" .. data:sub(at + 19)) -- same length: the sizes still add up
      local code, _, err = moe("SOC_VERSION=910_93")
      assert.equal(0, code, err)
      local s = others_analysed(dir .. "/out", cards)
      assert.equal("MoeDistributeCombi\\xC8eV2", s.cards["1"].op)
      assert.truthy(err:find("MoeDistributeCombi\\xC8eV2", 1, true)) -- in the steps, on stderr
    end)

    it("a card folder numbered 99999999 is analysed like any other, within seconds and the memory cap", function()
      local cards = mh.cluster({ state = "combine_stuck", fault = 0 })
      mh.write_card(dir .. "/0", cards[0], {}, "mc2")
      mh.write_card(dir .. "/99999999", cards[1], {}, "mc2")
      local code, out, err, secs = moe("SOC_VERSION=950")
      assert.equal(0, code, err)
      assert.truthy(secs < 30)
      -- the folder holds rank 1: the card is named by its rankId
      assert.truthy(out:find("8. card 1 (combine, cores [0,1,2,3,4,5]) waits for card(s) [0]", 1, true), out)
      local s = core.json.load(dir .. "/out/moe_summary.json")
      assert.equal("combine", s.cards["1"].stuck_in)
    end)

    -- Mutations of a valid dump (a fixed seed: the same cases every run): bytes flipped in the
    -- per-core info areas and the status buffers, the file cut, or a field set to 0 / 0x7fffffff /
    -- -1. Each run ends within the timeout and the memory cap with 0 or 1, prints no traceback,
    -- and cards 0 and 2 are analysed as the generator says.
    it("survives mutated window dumps of one card", function()
      local base_cards, win = cluster(dir, "mc2")
      local pristine = h.read(win)
      local start = #pristine - WIN
      math.randomseed(1414)
      local mutations = {
        function(d) -- bytes flipped in the per-core areas
          for _ = 1, 64 do
            local at = start + INFO_D + math.random(0, 100 * 1024 - 1)
            d = d:sub(1, at) .. string.char(math.random(0, 255)) .. d:sub(at + 2)
          end
          return d, "flips in the info areas"
        end,
        function(d) -- bytes flipped anywhere in the window
          for _ = 1, 256 do
            local at = start + math.random(0, WIN - 1)
            d = d:sub(1, at) .. string.char(math.random(0, 255)) .. d:sub(at + 2)
          end
          return d, "flips in the window"
        end,
        function(d) -- one field of every core set to an extreme
          local word = ({ 0, 2, 3, 4, 5, 6 })[math.random(1, 6)]
          local v = ({ 0, 0x7fffffff, -1, -0x80000000 })[math.random(1, 4)]
          local side = math.random(0, 1) == 0 and INFO_D or 818 * 1024
          for c = 0, 23 do d = set_i32(d, start + side + c * BLOCK + word * 4, v) end
          return d, ("word %d = %d"):format(word, v)
        end,
        function(d) return d:sub(1, #d - math.random(1, 4096)), "cut" end,
        function(d) return d .. string.rep("\0", math.random(1, 3)), "extended" end,
      }
      for i = 1, 15 do
        local m = mutations[(i - 1) % #mutations + 1]
        local data, what = m(pristine)
        h.write(win, data)
        local code, out, err, secs = moe("SOC_VERSION=950", "-q")
        local label = ("case %d (%s): exit %s, %.1f s\n%s%s"):format(i, what, tostring(code), secs, out:sub(-800), err)
        assert.truthy(code == 0 or code == 1, label)
        assert.truthy(secs < 30, label)
        assert.falsy(err:find("traceback", 1, true), label)
        assert.falsy((out .. err):find("attempt to", 1, true), label)
        if code == 1 then assert.truthy(out:find("[ERROR] " .. win, 1, true) or out:find("card 1", 1, true), label) end
        others_analysed(dir .. "/out", base_cards)
      end
    end)
  end)

  describe("moe merge of machines (START_A2_CLUSTER=1)", function()
    local function machines()
      assert.same({ 0, 0 }, mh.machine_results(dir, mh.cluster({ state = "dispatch_stuck", cards = 4, fault = 3 })))
    end

    local function merge()
      return run_bounded("--lang", "en", "moe", "TARGET_DIR=" .. dir .. "/results", "SOC_VERSION=910B",
        "START_A2_CLUSTER=1", "-o", dir .. "/merged")
    end

    local function cards_of(path)
      local s = assert(core.json.load(path))
      local list = {}
      for k in pairs(s.cards) do list[#list + 1] = tonumber(k) end
      table.sort(list)
      return list, s
    end

    it("a cut moe_summary.json names that machine; the other machine's cards are merged, exit 1", function()
      machines()
      local bad = dir .. "/results/m0/moe_summary.json"
      local text = h.read(bad)
      h.write(bad, text:sub(1, #text // 2))
      local code, out, err = merge()
      assert.equal(1, code, err)
      assert.truthy(out:find("[ERROR] " .. bad, 1, true), out)
      assert.truthy(out:find("merged 1 machine result(s): 2 card(s)", 1, true), out)
      local list, s = cards_of(dir .. "/merged/moe_summary.json")
      assert.same({ 2, 3 }, list)
      assert.equal(bad, s.failed[1].dir)
    end)

    it("a summary whose card holds an impossible epWorldSize or k is not merged", function()
      machines()
      for _, edit in ipairs({ { '"ep_world_size": 4', '"ep_world_size": 2147483647', "ep_world_size = 2147483647" },
                              { '"k": 4', '"k": 0', "card 0: k is not what a moe_summary.json holds" },
                              { '"slots_per_core": %[', '"slots_per_core": ["x", ',
                                "card 0: dispatch.slots_per_core is not what a moe_summary.json holds" },
                              { '"global_bs": 24', '"global_bs": "24"', "global_bs is not what a moe_summary.json holds" } }) do
        local bad = dir .. "/results/m0/moe_summary.json"
        local pristine = h.read(bad)
        local edited, n = pristine:gsub(edit[1], edit[2])
        assert.truthy(n > 0, edit[1])
        h.write(bad, edited)
        local code, out = merge()
        assert.equal(1, code)
        assert.truthy(out:find(edit[3], 1, true), out:sub(-1500))
        assert.same({ 2, 3 }, (cards_of(dir .. "/merged/moe_summary.json")))
        h.write(bad, pristine)
      end
    end)
  end)

  describe("moe --encoding gbk", function()
    it("converts in memory: quotes and apostrophes in -o are only a folder name", function()
      local cards = mh.cluster({ state = "combine_stuck", fault = 0 })
      mh.write_cluster(dir .. "/in", cards, "mc2")
      local out = dir .. [[/it's "out" $(touch pwned) `touch pwned2`]]
      local code, stdout, err = h.run("--lang", "zh", "moe", "TARGET_DIR=" .. dir .. "/in", "SOC_VERSION=950", "-o", out,
        "--encoding", "gbk")
      assert.equal(0, code, stdout:sub(-800) .. err)
      assert.falsy(core.fs.stat("pwned"))
      assert.falsy(core.fs.stat("pwned2"))
      assert.falsy(core.fs.stat(dir .. "/pwned"))
      local text = h.read(out .. "/win_analysis_error.csv")
      assert.not_equal("\239\187\191", text:sub(1, 3)) -- no UTF-8 BOM
      -- "卡1" in GBK: 卡 = BF A8 (GB 2312 row 31, cell 8)
      assert.truthy(text:find("\191\168" .. "1", 1, true))
      assert.equal(text, core.iconv.convert(assert(core.iconv.convert(text, "GBK", "UTF-8")), "UTF-8", "GBK"))
      local utf8 = assert(core.iconv.convert(text, "GBK", "UTF-8"))
      assert.truthy(utf8:find("卡1", 1, true))
    end)
  end)

  describe("moe and graph messages", function()
    it("a window layout rule that does not hold is one usage error naming the file and key", function()
      mh.write_cluster(dir .. "/in", mh.cluster({ state = "healthy" }), "mc2")
      h.write(dir .. "/r.lua", "return { layouts = { v2 = { slot_bytes = -32 } } }")
      local code, out, err = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir .. "/in", "SOC_VERSION=950", "-o",
        dir .. "/out", "--rules", dir .. "/r.lua")
      assert.equal(2, code)
      assert.equal("", out)
      local _, n = err:gsub("key layouts%.v2%.slot_bytes: %-32 is below the least allowed, 4", "")
      assert.equal(1, n, err)
      assert.truthy(err:find(dir .. "/r.lua: key layouts.v2.slot_bytes", 1, true), err)
      -- a size that only the window's size can refuse
      h.write(dir .. "/r.lua", "return { layouts = { v2 = { window_bytes = 256 } } }")
      code, _, err = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir .. "/in", "SOC_VERSION=950", "-o",
        dir .. "/out", "--rules", dir .. "/r.lua")
      assert.equal(2, code)
      assert.truthy(err:find(dir .. "/r.lua: key layouts.v2: block_bytes (512) is larger than window_bytes (256)",
        1, true), err)
      h.write(dir .. "/r.lua", "return { layouts = { v2 = { slot_byts = 32 } } }")
      code, _, err = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir .. "/in", "SOC_VERSION=950", "-o",
        dir .. "/out", "--rules", dir .. "/r.lua")
      assert.equal(2, code)
      assert.truthy(err:find(dir .. '/r.lua: key layouts.v2.slot_byts: unknown key "slot_byts"', 1, true), err)
    end)

    -- moe: the steps, then the findings once and the verdict with the root card; diagnose: moe
    -- leaves its findings and verdict to the one summary of all analyses
    for _, command in ipairs({ "moe", "diagnose" }) do
      it(command .. " prints each moe finding once", function()
        mh.write_cluster(dir .. "/in", (mh.cluster({ state = "combine_stuck", fault = 0 })), "mc2")
        local code, out = h.run("--lang", "en", command, "TARGET_DIR=" .. dir .. "/in", "SOC_VERSION=950", "-o",
          dir .. "/out")
        assert.equal(0, code)
        for _, line in ipairs({ "4.2 card 1: 6 waiting combine core(s) did not receive all their status slots",
                                "2. card 1: stuck in combine: 6 core(s) waiting", "8. card 0 started the hang" }) do
          local _, n = out:gsub(line:gsub("%p", "%%%0"), "")
          assert.equal(1, n, line)
        end
      end)
    end

    it("a graph rule file that does not hold is one usage error naming the file", function()
      h.write(dir .. "/graph_1_device0.json", '{"graph": [{"op": [{"name": "MoeDistributeDispatchV2_1"}]}]}')
      h.write(dir .. "/r.lua", "return { files = 3 }")
      local code, out, err = h.run("--lang", "en", "graph", dir, "-o", dir .. "/out", "--rules", dir .. "/r.lua")
      assert.equal(2, code)
      assert.equal("", out)
      assert.truthy(err:find(dir .. "/r.lua: key files: must be a list, not number", 1, true), err)
      local _, n = err:gsub("must be a list", "")
      assert.equal(1, n)
    end)

    it("diagnose names an output folder it cannot make once", function()
      mh.write_cluster(dir .. "/in", mh.cluster({ state = "healthy" }), "mc2")
      h.write(dir .. "/file", "")
      -- under a file: a usage error before anything is read
      local code, out, err = h.run("--lang", "en", "diagnose", "TARGET_DIR=" .. dir .. "/in", "SOC_VERSION=950",
        "GRAPH_PATH=" .. dir .. "/in", "-o", dir .. "/file/out")
      assert.equal(2, code)
      local _, n = (out .. err):gsub("is a file, not a folder", "")
      assert.equal(1, n, out .. err)
      -- a place where no folder can be made (/proc takes none)
      code, out, err = h.run("--lang", "en", "diagnose", "TARGET_DIR=" .. dir .. "/in", "SOC_VERSION=950",
        "GRAPH_PATH=" .. dir .. "/in", "-o", "/proc/ascope-spec-none/out")
      assert.equal(1, code)
      _, n = (out .. err):gsub("cannot create folder", "")
      assert.equal(1, n, out .. err)
    end)

    it("graph does not read its own output folder inside GRAPH_PATH, however it is spelled", function()
      local g = '{"graph": [{"op": [{"name": "MoeDistributeDispatchV2_1"}, {"name": "MoeDistributeCombineV2_1"}]}]}'
      h.write(dir .. "/graph_1_device0.json", g)
      h.write(dir .. "/graph_1_device1.json", g)
      assert.equal(0, (h.run("graph", dir, "-o", dir .. "/out", "-q")))
      -- an earlier output named like a card's graph file, too
      h.write(dir .. "/out/graph_2_device7.json", g)
      assert(core.fs.mkdirs(dir .. "/sub"))
      local code, out, err = h.run("--lang", "en", "graph", dir, "-o", dir .. "/sub/../out")
      assert.equal(0, code, out)
      -- a note about the run itself, on stderr
      assert.truthy(err:find("2 file(s) inside the output folder " .. dir .. "/sub/../out are not read as graphs", 1, true),
        err)
      local s = core.json.load(dir .. "/out/graph_summary.json")
      assert.same({ "0", "1" }, (function()
        local k = {}
        for c in pairs(s.cards) do k[#k + 1] = c end
        table.sort(k)
        return k
      end)())
      assert.equal(0, #s.failed)
    end)
  end)
end)
