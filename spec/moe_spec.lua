local core = require "ascope_core"
local h = require "helper"
local mh = require "moe_helper"
local moe = require "ascope.moe"

local function run(dir, soc, params)
  params = params or {}
  local lines = {}
  local opts = { target_dir = dir, soc_version = soc, log = function(l, t) lines[#lines + 1] = l .. " " .. t end }
  for k, v in pairs(params) do opts[k] = v end
  local r = assert(moe.run(opts))
  local by = {}
  for _, c in ipairs(r.cards) do by[c.card] = c end
  return r, by, lines
end

local function errors_of(r, analysis)
  local out = {}
  for _, a in ipairs(r.anomalies) do
    if a.severity == "ERROR" and (not analysis or a.analysis == analysis) then out[#out + 1] = a end
  end
  return out
end

describe("moe window analysis", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  for _, form in ipairs({ { "raw", "910_93" }, { "msaicerr", "910_93" }, { "mc2", "950" } }) do
    it("a healthy 2-card run reads the same from " .. form[1] .. " dumps", function()
      for rank = 0, 1 do mh.write_card(dir .. "/" .. rank, mh.card(rank), {}, form[1]) end
      local r, by = run(dir, form[2])
      assert.equal(2, #r.cards)
      assert.same({}, errors_of(r))
      local c0 = by[0]
      assert.equal("combine", c0.stuck_in)
      assert.equal("MoeDistributeCombineV2", c0.op)
      assert.equal(24, c0.dispatch.cores)
      assert.equal(4, c0.k)
      assert.equal(8, c0.local_experts)
      assert.equal(16, c0.dispatch.total_status_slots)   -- 8 local experts x epWorldSize 2
      assert.same({ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, c0.dispatch.slots_per_core)
      -- combine: bs 6 tokens over 24 cores, k 4: 4 slots on cores 0-5
      assert.same({ 4, 4, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, c0.combine.slots_per_core)
      assert.equal(1, c0.combine.live_status_buffer)
      assert.same({}, c0.combine.missing_slots)
    end)
  end

  it("stuck in dispatch: names the cores and the local slots that did not arrive", function()
    mh.write_card(dir .. "/0", mh.card(0, { dispatch = { run = 8 }, op = "MoeDistributeDispatchV2",
      missing = { dispatch = { [3] = { 0 }, [10] = { 0 } } } }), {}, "mc2")
    mh.write_card(dir .. "/1", mh.card(1, { dispatch = { run = 8 }, op = "MoeDistributeDispatchV2" }), {}, "mc2")
    local r, by = run(dir, "950")
    assert.equal("dispatch", by[0].stuck_in)
    assert.equal("dispatch", by[1].stuck_in)
    assert.same({ [3] = { 0 }, [10] = { 0 } }, by[0].dispatch.missing_slots)
    assert.same({}, by[1].dispatch.missing_slots)
    local e = errors_of(r, "3")
    assert.equal(1, #e)
    assert.truthy(e[1].message:find("card 0: 2 dispatch core(s) did not receive all their status slots: [3,10]", 1, true))
    -- the command speaks Chinese unless asked otherwise
    local code, out = h.run("moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950", "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[WARNING] 2. 卡0：dispatch执行次数:8，combine执行次数:7，该卡算子执行流程卡死在dispatch上", 1, true))
    assert.truthy(out:find("[ERROR] 3.2 卡0：2 个dispatch核未等到状态：[3,10]", 1, true))
  end)

  it("stuck in combine: the missing combine slots of each core", function()
    mh.write_card(dir .. "/0", mh.card(0, { missing = { combine = { [0] = { 1, 3 }, [5] = { 2 } } } }), {}, "raw")
    mh.write_card(dir .. "/1", mh.card(1), {}, "raw")
    local r, by = run(dir, "910_93")
    assert.equal("combine", by[0].stuck_in)
    assert.same({ [0] = { 1, 3 }, [5] = { 2 } }, by[0].combine.missing_slots)
    assert.equal(1, #errors_of(r, "4"))
  end)

  it("rank and EP size that differ from the HCCL link's, and a core that differs", function()
    mh.write_card(dir .. "/0", mh.card(0, { dispatch = { hccl_rank = 1, hccl_ep = 4, deviations = { moe = { [7] = 99 } } } }),
      {}, "mc2")
    local r, by = run(dir, "910B")
    local msgs = {}
    for _, a in ipairs(errors_of(r, "1")) do msgs[#msgs + 1] = a.message end
    table.sort(msgs)
    assert.same({
      "1.1 card 0: dispatch epWorldSize 2 in the window differs from the HCCL link's 4",
      "1.1 card 0: dispatch rankId 0 in the window differs from the HCCL link's rank id 1",
    }, msgs)
    assert.same({ moe_expert_num = { [7] = 99 } }, by[0].dispatch.deviations)
  end)

  it("expert counts and run counts that differ between cards name the odd card", function()
    mh.write_card(dir .. "/0", mh.card(0), {}, "mc2")
    mh.write_card(dir .. "/1", mh.card(1), {}, "mc2")
    mh.write_card(dir .. "/2", mh.card(0, { dispatch = { moe = 32 }, combine = { run = 6 } }), {}, "mc2")
    local r = run(dir, "950")
    local e = errors_of(r, "6")
    assert.equal(1, #e)
    assert.equal("6. dispatch moe_expert_num differs between cards: most 16, odd cards 2=32", e[1].message)
    assert.same({ "2=6" }, r.cross.combine_run_count.odd)
  end)

  it("a bad expertIds row: out of range and repeated", function()
    local card = mh.card(0)
    card.expert_ids[2] = { 1, 1, 2, 3 }
    card.expert_ids[4] = { 0, 40, 2, 3 }
    mh.write_card(dir .. "/0", card, {}, "msaicerr")
    local r = run(dir, "910_93")
    local msgs = {}
    for _, a in ipairs(errors_of(r, "1")) do msgs[#msgs + 1] = a.message end
    assert.same({ "1.3 card 0: expertIds row 1 repeats expert 1", "1.3 card 0: expertIds[3][1] = 40 is outside [0, 16)" },
      msgs)
  end)

  it("a shared-expert card expects epWorldSize dispatch slots", function()
    local params = { share_expert_card_count = 1, share_expert_num = 1 }
    mh.write_card(dir .. "/0", mh.card(0), params, "mc2")
    mh.write_card(dir .. "/1", mh.card(1), params, "mc2")
    local r, by = run(dir, "950", params)
    assert.is_true(by[0].shared_expert_card)
    assert.is_false(by[1].shared_expert_card)
    assert.equal(2, by[0].dispatch.total_status_slots)
    assert.equal(32, by[1].dispatch.total_status_slots) -- 16 experts on 1 card x epWorldSize 2
    assert.equal(30, by[1].combine.total_status_slots)   -- 6 tokens x (k 4 + 1 shared expert)
    assert.same({}, errors_of(r))
  end)

  it("checks epSendCounts and expandIdx of the cards stuck in combine against all cards' expertIds", function()
    local c0, c1 = mh.card(0), mh.card(1)
    -- independent expectation: rank r's experts are 8r..8r+7; counts per (expert, source) accumulated
    local per = {}
    for src, card in pairs({ [0] = c0, [1] = c1 }) do
      for _, row in ipairs(card.expert_ids) do
        for _, e in ipairs(row) do
          per[e] = per[e] or { [0] = 0, [1] = 0 }
          per[e][src] = per[e][src] + 1
        end
      end
    end
    local function counts(rank)
      local out, acc = {}, 0
      for e = rank * 8, rank * 8 + 7 do
        for src = 0, 1 do
          acc = acc + ((per[e] or {})[src] or 0)
          out[#out + 1] = acc
        end
      end
      return out
    end
    local function expand(card)
      local seen, out = {}, {}
      for _, row in ipairs(card.expert_ids) do
        for _, e in ipairs(row) do
          out[#out + 1] = seen[e] or 0
          seen[e] = (seen[e] or 0) + 1
        end
      end
      return out
    end
    c0.ep_send_counts, c0.expand_idx = counts(0), expand(c0)
    c1.ep_send_counts, c1.expand_idx = counts(1), expand(c1)
    c1.ep_send_counts[5] = c1.ep_send_counts[5] + 1
    mh.write_card(dir .. "/0", c0, {}, "raw")
    mh.write_card(dir .. "/1", c1, {}, "raw")
    local r = run(dir, "910_93")
    local e = errors_of(r, "7")
    assert.equal(1, #e)
    assert.truthy(e[1].message:find("7. card 1: epSendCounts[4] = ", 1, true))
    assert.same({ 0, 1 }, r.cross.checked)
  end)

  it("START_A2_CLUSTER=1 merges the machines' results and compares all cards", function()
    for m = 0, 1 do
      for local_card = 0, 1 do
        local rank = m * 2 + local_card
        local card = mh.card(rank, { dispatch = { ep = 4, hccl_ep = 4, global_bs = 24 },
                                     combine = { ep = 4, hccl_ep = 4, global_bs = 24, run = rank == 3 and 6 or 7 } })
        mh.write_card(("%s/m%d/dumps/%d"):format(dir, m, local_card), card, {}, "mc2")
      end
      local code = h.run("moe", ("TARGET_DIR=%s/m%d/dumps"):format(dir, m), "SOC_VERSION=910B", "-o",
        ("%s/results/m%d"):format(dir, m), "-q")
      assert.equal(0, code)
    end
    local code, out = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir .. "/results", "SOC_VERSION=910B",
      "START_A2_CLUSTER=1", "-o", dir .. "/merged")
    assert.equal(0, code)
    assert.truthy(out:find("merged 2 machine result(s): 4 card(s)", 1, true))
    assert.truthy(out:find("6. combine run_count differs between cards: most 7, odd cards 3=6", 1, true))
    local s = core.json.load(dir .. "/merged/moe_summary.json")
    assert.same({ "3=6" }, s.cross_card.combine_run_count.odd_cards)
    assert.equal("dispatch", s.cards["3"].stuck_in)
    local rows = h.csv_rows(dir .. "/merged/win_all_card_data.csv")
    assert.equal(4, #rows)
    assert.equal("3", rows[4].card)
  end)

  it("a truncated dump names the file and the sizes, and the other cards are still analysed", function()
    mh.write_card(dir .. "/0", mh.card(0), {}, "raw")
    mh.write_card(dir .. "/1", mh.card(1), {}, "raw")
    local names = core.fs.list(dir .. "/1")
    local p = dir .. "/1/" .. names[1]
    local data = h.read(p)
    h.write(p, data:sub(1, #data - 100))
    local r, by = run(dir, "910_93")
    assert.equal(1, #r.cards)
    assert.truthy(by[0])
    assert.equal(1, #r.failed)
    assert.truthy(r.failed[1].reason:find(p .. ": the dump does not add up: header and data need " .. #data
      .. " bytes", 1, true), r.failed[1].reason)
    assert.truthy(r.failed[1].reason:find("the file has " .. (#data - 100) .. " (truncated?)", 1, true))
    local code, out = h.run("moe", "TARGET_DIR=" .. dir .. "/", "SOC_VERSION=910_93", "-o", dir .. "/out", "--lang", "en")
    assert.equal(1, code)
    assert.truthy(out:find("[ERROR] " .. p, 1, true))
    local s = core.json.load(dir .. "/out/moe_summary.json")
    assert.equal("combine", s.cards["0"].stuck_in)
    assert.equal(24, s.cards["0"].dispatch.cores)
    for _, f in ipairs({ "win_data", "win_data_list", "win_status_list", "win_analysis_error", "win_all_card_data",
                         "win_all_card_expandidx" }) do
      assert.equal("\239\187\191", h.read(dir .. "/out/" .. f .. ".csv"):sub(1, 3))
    end
    local status = h.csv_rows(dir .. "/out/win_status_list.csv")
    assert.equal(2048 + 10240, #status) -- every slot of both live buffers of card 0
  end)
end)
