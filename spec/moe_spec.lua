local core = require "ascope_core"
local h = require "helper"
local mh = require "moe_helper"
local moe = require "ascope.moe"
local i18n = require "ascope.i18n"

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

-- Every ERROR and WARNING as "SEVERITY message", sorted: what a field engineer would be told.
local function findings(r)
  local out = {}
  for _, a in ipairs(r.anomalies) do
    if a.severity == "ERROR" or a.severity == "WARNING" then out[#out + 1] = a.severity .. " " .. a.message end
  end
  table.sort(out)
  return out
end

-- The wait-for graph as the generator's truth states it: card -> {side, cores, waits_for, slots}.
local function graph_of(r)
  local out = {}
  for _, e in ipairs(r.cross.wait_for) do
    out[e.card] = { side = e.side, cores = e.cores, waits_for = e.waits_for, slots = e.slots }
  end
  return out
end

local function no_nil(lines)
  for _, l in ipairs(lines) do assert.falsy(l:find("nil", 1, true), l) end
end

describe("moe window analysis", function()
  local dir
  before_each(function()
    dir = h.tmpdir()
    i18n.set("en")
  end)
  after_each(function() h.cleanup(dir) end)

  for _, form in ipairs({ { "raw", "910_93" }, { "msaicerr", "910_93" }, { "mc2", "950" } }) do
    it("a healthy 2-card cluster gives no ERROR or WARNING from " .. form[1] .. " dumps", function()
      local cards = mh.cluster({ state = "healthy" })
      mh.write_cluster(dir, cards, form[1])
      local r, by, lines = run(dir, form[2])
      assert.equal(2, #r.cards)
      assert.same({}, findings(r))
      no_nil(lines)
      local c0 = by[0]
      assert.equal("combine", c0.stuck_in)
      assert.equal("run_count", c0.stuck_by)
      assert.equal("MoeDistributeCombineV2", c0.op)
      assert.equal(24, c0.dispatch.cores)
      assert.equal(4, c0.k)
      assert.equal(8, c0.local_experts)
      assert.equal(16, c0.dispatch.total_status_slots)   -- 8 local experts x epWorldSize 2
      assert.same({ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, c0.dispatch.slots_per_core)
      -- combine: bs 6 tokens over 24 cores, k 4: 4 slots on cores 0-5
      assert.same({ 4, 4, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, c0.combine.slots_per_core)
      assert.equal(1, c0.combine.live_status_buffer) -- flag 0 (6 runs): the live buffer is 1
      assert.same({}, c0.combine.missing_slots)
      assert.same({}, c0.combine.waiting_cores)
      assert.same({ 0, 1 }, r.cross.checked)      -- epSendCounts and assistInfoForCombine compared, equal
      assert.same(cards[1].ep_send_counts, by[1].ep_send_counts)
      assert.same({}, r.cross.wait_for)
      assert.same({}, r.cross.root_cards)
    end)
  end

  it("a healthy cluster: the command exits 0 even with --fail-on warning, and says no card waits", function()
    mh.write_cluster(dir, mh.cluster({ state = "healthy" }), "mc2")
    local code, out = h.run("--lang", "en", "--fail-on", "warning", "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950", "-o",
      dir .. "/out")
    assert.equal(0, code, out)
    assert.falsy(out:find("[WARNING]", 1, true))
    assert.falsy(out:find("[ERROR]", 1, true))
    assert.truthy(out:find("[INFO] verdict: no card is waiting for another", 1, true))
    local s = core.json.load(dir .. "/out/moe_summary.json")
    assert.equal(0, #s.wait_for)
    assert.equal(0, #s.root_cards)
    assert.equal(0, #s.anomalies)
    local rows = h.csv_rows(dir .. "/out/win_analysis_error.csv")
    assert.equal(0, #rows)
  end)

  it("a card folder missing between the others is a card not analysed, named, and the exit is 1", function()
    mh.write_cluster(dir, mh.cluster({ state = "healthy", cards = 4, moe = 16 }), "mc2")
    h.cleanup(dir .. "/2")
    local r = run(dir, "950")
    assert.same({ 0, 1, 3 }, (function()
      local l = {}
      for _, c in ipairs(r.cards) do l[#l + 1] = c.card end
      return l
    end)())
    assert.equal(1, #r.failed)
    assert.equal(2, r.failed[1].card)
    local want = ("card 2: no folder %s/2 between the cards found: not analysed"):format(dir)
    assert.equal(want, r.failed[1].reason)
    assert.same({ "ERROR " .. want }, findings(r))
    local code = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950", "-o", dir .. "/out")
    assert.equal(1, code)
  end)

  for _, gone in ipairs({ 0, 3 }) do
    it("a missing first or last card folder (card " .. gone .. " of epWorldSize 4) is a card not analysed, exit 1", function()
      mh.write_cluster(dir, mh.cluster({ state = "healthy", cards = 4, moe = 16 }), "mc2")
      h.cleanup(dir .. "/" .. gone)
      local r = run(dir, "950")
      assert.equal(3, #r.cards)
      local want = i18n.t("moe.rank_missing", gone, dir, 4)
      assert.same({ { card = gone, dir = dir, reason = want } }, r.failed)
      assert.same({ "ERROR " .. want }, findings(r))
      local code = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950", "-o", dir .. "/out")
      assert.equal(1, code)
    end)
  end

  it("cards are their rankIds: a folder numbering that differs, with the root card's folder missing", function()
    local cards, truth = mh.cluster({ state = "dispatch_stuck", cards = 4, moe = 16, cores = 8, fault = 2 })
    local folder = { [0] = 2, [1] = 0, [2] = 3, [3] = 1 } -- rank -> folder
    for rank, card in pairs(cards) do
      if rank ~= 2 then mh.write_card(dir .. "/" .. folder[rank], card, {}, "mc2") end
    end
    local r, by = run(dir, "950")
    for _, rank in ipairs({ 0, 1, 3 }) do
      assert.equal(rank, by[rank].rank)
      assert.equal(dir .. "/" .. folder[rank], by[rank].dir)
      assert.same({ 2 }, truth.waits[rank].waits_for)
      assert.same(truth.waits[rank], graph_of(r)[rank])
    end
    assert.same({ 2 }, r.cross.root_cards)
    assert.same({ { card = 2, dir = dir, reason = i18n.t("moe.rank_missing", 2, dir, 4) } }, r.failed)
    local code = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950", "-o", dir .. "/out")
    assert.equal(1, code)
  end)

  it("two folders holding one rank: the second is not analysed and names both", function()
    mh.write_card(dir .. "/0", mh.card(0), {}, "mc2")
    mh.write_card(dir .. "/1", mh.card(1), {}, "mc2")
    mh.write_card(dir .. "/2", mh.card(1), {}, "mc2")
    local r = run(dir, "950")
    assert.equal(2, #r.cards)
    assert.same({ { card = 1, dir = dir .. "/2", reason = i18n.t("moe.card_twice", dir .. "/2", 1, dir .. "/1") } }, r.failed)
  end)

  it("a folder with an older dump beside the new one: the newest is read, whole, and a WARNING names the rest", function()
    local cards, truth = mh.cluster({ state = "dispatch_stuck", cards = 4, moe = 16, cores = 8, fault = 2 })
    mh.write_cluster(dir, cards, "mc2")
    local old = mh.cluster({ state = "healthy", cards = 4, moe = 16, cores = 8 })[1]
    old.time, old.op = 1716000000, "MoeDistributeCombineV2"
    mh.write_card(dir .. "/1", old, {}, "mc2")
    local r, by = run(dir, "950")
    assert.equal("MoeDistributeDispatchV2", by[1].op)
    assert.equal(cards[1].time, by[1].time)
    assert.equal("dispatch", by[1].stuck_in)
    assert.same(truth.waits, graph_of(r))
    assert.same({ 2 }, r.cross.root_cards)
    local p = dir .. "/1/"
    local want = i18n.t("moe.several_dumps", 1, dir .. "/1", p .. "mc2_exception_info_MoeDistributeDispatchV2.5.12." .. cards[1].time,
      "[" .. table.concat({ p .. "MoeDistributeCombineV2.1.2.1716000000.input.0.0.npy",
        p .. "MoeDistributeCombineV2.1.2.1716000000.input.1.0.npy", p .. "MoeDistributeCombineV2.1.2.1716000000.input.2.0.npy",
        p .. "MoeDistributeCombineV2.1.2.1716000000.input.3.0.npy", p .. "MoeDistributeCombineV2_1a2b3c_host.o",
        p .. "mc2_exception_info_MoeDistributeCombineV2.5.12.1716000000" }, ",") .. "]")
    local said = false
    for _, a in ipairs(r.anomalies) do said = said or (a.severity == "WARNING" and a.card == 1 and a.message == want) end
    assert.is_true(said)
  end)

  it("dispatch stuck: the waiting cards name the card that did not send; that card is not waiting", function()
    local cards, truth = mh.cluster({ state = "dispatch_stuck", cards = 4, moe = 16, fault = 1 })
    mh.write_cluster(dir, cards, "mc2")
    local r, by, lines = run(dir, "950")
    no_nil(lines)
    for card = 0, 3 do assert.equal(truth.stuck_in[card], by[card].stuck_in) end
    -- 4 local experts x 4 ranks = 16 slots, one per core on cores 0-15; slot = expert x 4 + rank:
    -- the slots from rank 1 sit on cores 1, 5, 9, 13
    assert.same({ 1, 5, 9, 13 }, truth.waits[0].cores)
    assert.same(truth.waits, graph_of(r))
    assert.same({ 1 }, r.cross.root_cards)
    assert.same({ [1] = { 0 }, [5] = { 0 }, [9] = { 0 }, [13] = { 0 } }, by[2].dispatch.missing_slots)
    assert.same({}, by[1].dispatch.missing_slots)       -- card 1 is still sending: nothing is missing there
    assert.same({}, by[1].dispatch.waiting_cores)
    assert.equal(4, by[1].dispatch.idle_unarrived)    -- the 4 slots that it did not send itself are empty, not waited for
    local expected = {}
    for _, card in ipairs({ 0, 2, 3 }) do
      expected[#expected + 1] = ("ERROR 3.2 card %d: 4 waiting dispatch core(s) did not receive all their status slots: "
        .. "[1,5,9,13]"):format(card)
      expected[#expected + 1] = ("WARNING 2. card %d: stuck in dispatch: 4 core(s) waiting"):format(card)
    end
    expected[#expected + 1] = "ERROR 8. card 1 started the hang: other cards wait for it and it waits for nobody; "
      .. "first to fail (1717000000, dump time)"
    table.sort(expected)
    assert.same(expected, findings(r))
    local positions
    for _, l in ipairs(lines) do
      if l:find("3.1 dispatch run position per core", 1, true) then positions = positions or {} positions[#positions + 1] = l end
    end
    assert.equal("INFO 3.1 dispatch run position per core (0 sending, 1 waiting, 2 status received): "
      .. "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]", positions[2])
    assert.equal("INFO 3.1 dispatch run position per core (0 sending, 1 waiting, 2 status received): "
      .. "[2,1,2,2,2,1,2,2,2,1,2,2,2,1,2,2,2,2,2,2,2,2,2,2]", positions[1])
    -- Chinese under LANG=zh_*: the findings on stdout, the card-by-card steps on stderr
    local code, out, err = h.run({ LANG = "zh_CN.UTF-8", LC_ALL = false }, "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950",
      "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[WARNING] 2. 卡0：该卡算子执行流程卡死在dispatch上：4 个核处于等待", 1, true))
    assert.truthy(out:find("[ERROR] 3.2 卡0：4 个处于等待的dispatch核未等到状态：[1,5,9,13]", 1, true))
    assert.truthy(err:find("[INFO] 3.1 dispatch各核执行位置情况（0 发送中，1 等待中，2 已收到状态）：[0,0,0", 1, true))
    assert.falsy(out:find("[INFO] 3.1", 1, true))
    assert.truthy(out:find("[ERROR] 8. 卡1是卡住的起点", 1, true))
    -- the verdict that ends the run says the waiting cards in one line
    local _, en = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950", "-o", dir .. "/out")
    local verdict = en:match("\n(%[INFO%] verdict:\n.*)$")
    assert.equal("[INFO] verdict:\n[INFO] 8. cards [0,2,3] (3, dispatch) wait for card(s) [1] (12 slot(s) in all)\n"
      .. "[ERROR] 8. card 1 started the hang: other cards wait for it and it waits for nobody; first to fail (1717000000, "
      .. "dump time)\n", verdict)
    local s = core.json.load(dir .. "/out/moe_summary.json")
    assert.same({ 1 }, s.root_cards)
    assert.equal(3, #s.wait_for)
    assert.same({ card = 0, side = "dispatch", cores = { 1, 5, 9, 13 }, waits_for = { 1 }, slots = 4, unresolved_slots = 0 },
      s.wait_for[1])
    assert.same({ 2, 1, 2, 2 }, { table.unpack(s.cards["0"].dispatch.positions, 1, 4) })
    assert.equal(3, (h.run("--fail-on", "error", "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950", "-o", dir .. "/out", "-q")))
    _, _, err = h.run("--fail-on", "sometimes", "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=950", "-o", dir .. "/out")
    assert.truthy(err:find("--fail-on takes one of error, warning, not \"sometimes\"", 1, true))
  end)

  it("combine stuck: the card that raised the exception has empty slots and is not waiting; it is the root", function()
    local cards, truth = mh.cluster({ state = "combine_stuck", fault = 0 })
    mh.write_cluster(dir, cards, "raw")
    local r, by, lines = run(dir, "910_93")
    no_nil(lines)
    assert.equal("combine", by[0].stuck_in)
    assert.equal("combine", by[1].stuck_in)
    assert.same({}, by[0].combine.waiting_cores)
    assert.same({}, by[0].combine.missing_slots)
    assert.is_true(by[0].combine.idle_unarrived > 0)  -- its own experts' slots: it never sent them
    assert.same(cards[1].missing.combine, by[1].combine.missing_slots)
    assert.same(truth.waits, graph_of(r))
    assert.same({ 0 }, r.cross.root_cards)
    local cores = truth.waits[1].cores
    assert.same({
      ("ERROR 4.2 card 1: %d waiting combine core(s) did not receive all their status slots: [%s]"):format(#cores,
        table.concat(cores, ",")),
      "ERROR 8. card 0 started the hang: other cards wait for it and it waits for nobody; first to fail (1717000000, dump time)",
      ("WARNING 2. card 1: stuck in combine: %d core(s) waiting"):format(#cores),
    }, findings(r))
    assert.same({ 0, 1 }, r.cross.checked) -- the inputs of both cards are right: no finding from 7
  end)

  it("only dispatch ran: the side comes from the *_host.o name, and an empty combine is no cross-card difference",
    function()
      local cards, truth = mh.cluster({ state = "only_dispatch", fault = 1 })
      for _, c in pairs(cards) do c.op_in_header = false end
      mh.write_cluster(dir, cards, "raw")
      local r, by, lines = run(dir, "910_93")
      no_nil(lines)
      for card = 0, 1 do
        assert.equal("dispatch", by[card].stuck_in)
        assert.equal("host_o", by[card].stuck_by)
        assert.equal(0, by[card].combine.cores)
        assert.is_false(by[card].combine.ran)
      end
      assert.same(truth.waits, graph_of(r))
      assert.same({ 1 }, r.cross.root_cards)
      assert.same({}, r.cross.combine_run_count.odd)
      assert.same({
        "ERROR 3.2 card 0: 8 waiting dispatch core(s) did not receive all their status slots: [1,3,5,7,9,11,13,15]",
        "ERROR 8. card 1 started the hang: other cards wait for it and it waits for nobody; first to fail (1717000000, dump time)",
        "WARNING 2. card 0: stuck in dispatch: 8 core(s) waiting",
      }, findings(r))
      local said
      for _, l in ipairs(lines) do
        if l:find("2. card 0: dispatch ran 1 times, combine never: the card is in dispatch, from the *_host.o name "
          .. "MoeDistributeDispatchV2", 1, true) then said = true end
      end
      assert.is_true(said)
      -- with the op name in the dump header, the header decides
      local dir2 = dir .. "/header"
      for _, c in pairs(cards) do c.op_in_header = nil end
      mh.write_cluster(dir2, cards, "raw")
      local _, by2 = run(dir2, "910_93")
      assert.equal("header", by2[0].stuck_by)
      assert.equal("dispatch", by2[0].stuck_in)
      -- no "nil" in any CSV cell
      local code = h.run("moe", "TARGET_DIR=" .. dir, "SOC_VERSION=910_93", "-o", dir .. "/out", "-q")
      assert.equal(0, code)
      for _, f in ipairs({ "win_data", "win_data_list", "win_analysis_error", "win_all_card_data", "win_all_card_expandidx" }) do
        assert.falsy(h.read(dir .. "/out/" .. f .. ".csv"):find("nil", 1, true), f)
      end
    end)

  it("dispatch and combine cores in use differ on a card: that, and nothing else, is flagged", function()
    local cards = mh.cluster({ state = "healthy" })
    cards[1].combine.cores = 20
    mh.write_cluster(dir, cards, "mc2")
    local r = run(dir, "950")
    assert.same({ "WARNING 1.1 card 1: dispatch uses 24 cores, combine 20" }, findings(r))
  end)

  it("one corrupted epSendCounts element is flagged with its index, nothing else", function()
    local cards = mh.cluster({ state = "healthy" })
    local want = cards[1].ep_send_counts[6]
    cards[1].ep_send_counts[6] = want + 3
    mh.write_cluster(dir, cards, "mc2")
    local r = run(dir, "950")
    assert.same({ ("ERROR 7. card 1: epSendCounts[5] = %d, expected %d (from every card's expertIds; 1 of 16 elements "
      .. "differ)"):format(want + 3, want) }, findings(r))
  end)

  it("assistInfoForCombine: a wrong triple is an ERROR where the SOC's layout is known, INFO where it is not", function()
    local cards = mh.cluster({ state = "healthy" })
    -- card 0's second triple: (source rank, token, k) of local expert 0's second arrival
    local ai = cards[0].assist_info
    local good = { ai[4], ai[5], ai[6] }
    ai[5] = ai[5] + 1
    mh.write_cluster(dir, cards, "mc2")
    local r = run(dir, "950")
    assert.same({ ("ERROR 7. card 0: assistInfoForCombine triple 1 = (%d,%d,%d), expected (%d,%d,%d) (from every card's "
      .. "expertIds; 1 of 24 triples differ)"):format(good[1], good[2] + 1, good[3], good[1], good[2], good[3]) }, findings(r))
    local r2, _, lines = run(dir, "910B")
    assert.same({}, findings(r2))
    local shown
    for _, l in ipairs(lines) do
      if l:find("INFO 7. card 0: the assistInfoForCombine layout of SOC 910B is not known", 1, true) then shown = l end
    end
    assert.truthy(shown)
  end)

  it("V1 kernels keep the expandIdx rule (a per-(token, k) counter)", function()
    local cards = mh.cluster({ state = "healthy" })
    for _, c in pairs(cards) do
      c.op, c.assist_info = "MoeDistributeCombine", nil
      local seen = {}
      c.expand_idx = {}
      for _, row in ipairs(c.expert_ids) do
        for _, e in ipairs(row) do
          c.expand_idx[#c.expand_idx + 1] = seen[e] or 0
          seen[e] = (seen[e] or 0) + 1
        end
      end
    end
    cards[1].expand_idx[3] = 9
    mh.write_cluster(dir, cards, "mc2")
    local r = run(dir, "950")
    assert.same({ "ERROR 7. card 1: expandIdx[2] = 9, expected 0" }, findings(r))
  end)

  it("without expertIds: a WARNING per card, --k counts the combine slots, and 7 is not compared", function()
    mh.write_cluster(dir, mh.cluster({ state = "healthy" }), "mc2")
    for card = 0, 1 do
      for _, name in ipairs(core.fs.list(dir .. "/" .. card)) do
        if name:find("%.input%.1%.") then os.remove(dir .. "/" .. card .. "/" .. name) end
      end
    end
    local r, by, lines = run(dir, "950", { k = 4 })
    assert.same({ "WARNING 1.3 card 0: no expertIds input in the dump: k comes from --k or stays unknown",
                  "WARNING 1.3 card 1: no expertIds input in the dump: k comes from --k or stays unknown" }, findings(r))
    assert.equal(24, by[0].combine.total_status_slots)
    assert.same({}, r.cross.checked)
    local said
    for _, l in ipairs(lines) do if l:find("INFO 7. cards [0,1] have no expertIds input", 1, true) then said = true end end
    assert.is_true(said)
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
    local function three(over) -- a side of a 3-card cluster
      local s = { ep = 3, hccl_ep = 3, global_bs = 18 }
      for k, v in pairs(over or {}) do s[k] = v end
      return s
    end
    mh.write_card(dir .. "/0", mh.card(0, { dispatch = three(), combine = three() }), {}, "mc2")
    mh.write_card(dir .. "/1", mh.card(1, { dispatch = three(), combine = three() }), {}, "mc2")
    mh.write_card(dir .. "/2", mh.card(2, { dispatch = three({ moe = 32 }), combine = three({ run = 6 }) }), {}, "mc2")
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

  it("a card where neither side ran gives no expertIds range error (its expert count is unknown)", function()
    mh.write_card(dir .. "/0", mh.card(0), {}, "mc2")
    mh.write_card(dir .. "/1", mh.card(1, { dispatch = { ran = false }, combine = { ran = false } }), {}, "mc2")
    local r, by, lines = run(dir, "950")
    assert.same({}, findings(r))
    assert.is_false(by[1].dispatch.ran or by[1].combine.ran)
    local said = false
    for _, l in ipairs(lines) do said = said or l == "INFO " .. i18n.t("moe.ids_no_range", 1) end
    assert.is_true(said)
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

  it("a combine slot of a shared expert names the shared-expert card", function()
    local params = { share_expert_card_count = 1, share_expert_num = 1 }
    -- card 1 (routed experts 0-15) waits on core 0 for token 0's slots 0 (expert ids[0][0]) and 4 (the shared expert)
    local c1 = mh.card(1, { combine = { positions = { 1 } }, missing = { combine = { [0] = { 0, 4 } } } })
    c1.expert_ids[1] = { 3, 5, 7, 9 }
    mh.write_card(dir .. "/0", mh.card(0), params, "mc2")
    mh.write_card(dir .. "/1", c1, params, "mc2")
    local r = run(dir, "950", params)
    assert.same({ [1] = { side = "combine", cores = { 0 }, waits_for = { 0, 1 }, slots = 2 } }, graph_of(r))
    -- expert 3 is on rank 1 + 3 // 16 = 1; the shared expert on rank 1 % 1 = 0
    assert.same({ 0, 1 }, r.cross.wait_for[1].waits_for)
  end)

  it("a routed combine slot of a shared-expert card names the moe card holding the expert", function()
    local params = { share_expert_card_count = 1, share_expert_num = 1 }
    -- ep 4, moe 12: ranks 1-3 hold 4 experts each; shared card 0 misses token 0's expert 9 (rank 3)
    local sides = { ep = 4, hccl_ep = 4, global_bs = 24, moe = 12 }
    for rank = 0, 3 do
      local card = mh.card(rank, { dispatch = sides, combine = sides })
      for t = 1, 6 do card.expert_ids[t] = { (t + rank) % 12, (t + rank + 3) % 12, (t + rank + 6) % 12, (t + rank + 9) % 12 } end
      if rank == 0 then
        card.expert_ids[1] = { 9, 0, 4, 5 }
        card.combine.positions, card.missing = { 1 }, { combine = { [0] = { 0 } } }
      end
      mh.write_card(dir .. "/" .. rank, card, params, "mc2")
    end
    local r = run(dir, "950", params)
    assert.same({ [0] = { side = "combine", cores = { 0 }, waits_for = { 3 }, slots = 1 } }, graph_of(r))
    assert.same({ 3 }, r.cross.root_cards)
  end)

  it("START_A2_CLUSTER=1: each machine's per-card findings name the card by its global rank", function()
    local cards = mh.cluster({ state = "dispatch_stuck", cards = 4, moe = 16, cores = 8, fault = 3 })
    assert.same({ 0, 0 }, mh.machine_results(dir, cards)) -- machine 1 holds ranks 2 and 3 as its cards 0 and 1
    local code, out = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir .. "/results", "SOC_VERSION=910B",
      "START_A2_CLUSTER=1", "-o", dir .. "/merged")
    assert.equal(0, code, out)
    local s = core.json.load(dir .. "/merged/moe_summary.json")
    local stuck = {}
    for _, a in ipairs(s.anomalies) do
      if a.analysis == "2" then
        stuck[#stuck + 1] = a.card
        assert.equal(i18n.t("moe.stuck", a.card, "dispatch", 4), a.message)
      end
    end
    table.sort(stuck)
    assert.same({ 0, 1, 2 }, stuck)
  end)

  it("START_A2_CLUSTER=1: a rank that no machine holds is a card not analysed, exit 1", function()
    local cards = mh.cluster({ state = "healthy", cards = 4, moe = 16 })
    cards[3] = nil
    assert.same({ 0, 0 }, mh.machine_results(dir, cards)) -- a machine holds a slice of the ranks
    local code, out = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir .. "/results", "SOC_VERSION=910B",
      "START_A2_CLUSTER=1", "-o", dir .. "/merged")
    assert.equal(1, code)
    assert.truthy(out:find("[ERROR] " .. i18n.t("moe.rank_missing", 3, dir .. "/results", 4), 1, true), out)
    assert.truthy(out:find("merged 2 machine result(s): 3 card(s)", 1, true), out)
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

  it("START_A2_CLUSTER=1 builds the wait-for graph over all machines' cards", function()
    assert.same({ 0, 0 }, mh.machine_results(dir, mh.cluster({ state = "dispatch_stuck", cards = 4, fault = 3 })))
    local code = h.run("--lang", "en", "moe", "TARGET_DIR=" .. dir .. "/results", "SOC_VERSION=910B", "START_A2_CLUSTER=1",
      "-o", dir .. "/merged", "-q")
    assert.equal(0, code)
    local s = core.json.load(dir .. "/merged/moe_summary.json")
    assert.same({ 3 }, s.root_cards)
    local waiting = {}
    for _, e in ipairs(s.wait_for) do waiting[#waiting + 1] = e.card .. ">" .. table.concat(e.waits_for, ",") end
    assert.same({ "0>3", "1>3", "2>3" }, waiting)
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
    -- an unreadable input keeps exit code 1 under --fail-on
    assert.equal(1, (h.run("--fail-on", "warning", "moe", "TARGET_DIR=" .. dir, "SOC_VERSION=910_93", "-o", dir .. "/out",
      "-q")))
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
