local core = require "ascope_core"
local h = require "helper"
local graph = require "ascope.graph"

-- an atc --json graph with the given node names (and some nodes that are filtered out)
local function atc(path, names)
  local ops = { '{"name": "Data_0", "type": "Data"}' }
  for i, n in ipairs(names) do
    ops[#ops + 1] = ('{"name": "%s", "type": "%s", "attr": [{"key": "id", "value": {"i": %d}}]}'):format(n, n:gsub("_%d+$", ""), i)
    ops[#ops + 1] = ('{"name": "Cast_%d", "type": "Cast"}'):format(i)
  end
  h.write(path, '{"graph": [{"name": "ge_default", "op": [' .. table.concat(ops, ", ") .. "]}]}")
end

describe("graph", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("keeps the node names a filter matches, case aside, as model.matches says", function()
    local model = require "ascope.analysis.timeline.model"
    local kept = model.matcher({ "MoeDistribute", "moe_distribute" })
    for _, name in ipairs({ "MoeDistributeDispatchV2_3", "xMOEDISTRIBUTEy", "aclnnMoe_Distribute_x", "MatMul_1", "" }) do
      assert.equal(model.matches(name, { "MoeDistribute", "moe_distribute" }), kept(name), name)
    end
    assert.is_true(kept("MOEDISTRIBUTECOMBINE"))
    assert.is_false(kept("MatMul_1"))
    assert.is_false(kept(nil))
    assert.is_true(model.matcher("matmul|^add")("MatMul_7"))
    assert.is_false(model.matcher("matmul|^add")("x_Add"))
  end)

  it("compares the dispatch/combine nodes in every spelling and no other node", function()
    local moe = { "MoeDistributeDispatch_1", "moe_distribute_combine_2", "MoeDistributeDispatchV2_3",
                  "MOEDISTRIBUTECOMBINEV2_4", "npu_moe_distribute_dispatch_v2_5" }
    atc(dir .. "/graph_1_device0.json", { moe[1], "MoeGatingTopK_1", moe[2], moe[3], "AllToAllV_1", moe[4], moe[5] })
    local r = assert(graph.run(dir))
    assert.same(moe, r.graphs[0].nodes)
  end)

  it("reads a file a block at a time and finds what one search of the whole text finds", function()
    local reader = require "ascope.ascend.graph"
    local block, overlap = reader.BLOCK, reader.OVERLAP
    math.randomseed(11)
    local parts = {}
    for i = 1, 3000 do -- names of 1 to 300 bytes, spaces and line ends between key and value
      local name = ("n%d_"):format(i) .. ("x"):rep(math.random(0, 300))
      parts[i] = ('"name"%s:%s"%s"'):format((" "):rep(math.random(0, 3)), math.random(1, 4) == 1 and "\n " or " ", name)
    end
    local text = '"name" "first" [' .. table.concat(parts, ",") .. ', ^"name"]'
    h.write(dir .. "/g.json", text)
    -- the second without a capture; the third anchored, which gmatch takes as a plain ^
    local kinds = { { node = '"name"%s*:%s*"([^"]+)"' }, { node = '"n%d+_' }, { node = '^"name"' } }
    for _, kind in ipairs(kinds) do
      local whole = {}
      for name in text:gmatch(kind.node) do whole[#whole + 1] = name end
      for _, sizes in ipairs({ { 1000, 400 }, { 4096, 330 }, { 1 << 20, 1 << 18 } }) do -- matches: at most 321 bytes
        reader.BLOCK, reader.OVERLAP = sizes[1], sizes[2]
        assert.same(whole, assert(reader.nodes(dir .. "/g.json", kind, { "" })))
      end
    end
    reader.BLOCK, reader.OVERLAP = block, overlap
  end)

  it("gives the three verdicts with the exact divergence", function()
    local D, C = "MoeDistributeDispatchV2_1", "MoeDistributeCombineV2_1"
    local D2, C2 = "MoeDistributeDispatchV2_2", "MoeDistributeCombineV2_2"
    atc(dir .. "/graph_1_device0.json", { D, C, D2, C2 })
    atc(dir .. "/graph_1_device1.json", { D, C, D2, C2 })
    atc(dir .. "/graph_1_device2.json", { D, C, C2, D2 })
    atc(dir .. "/graph_1_device3.json", { D, C, D2 })
    -- a torchair text graph in a global_rank folder
    h.write(dir .. "/world8global_rank4/dynamo_original_graph_1.txt",
      table.concat({ 'node { name: "arg0" }', ('node { name: "%s" op: "X" }'):format(D), ('node { name: "%s" }'):format(C),
                     ('node { name: "%s" }'):format(D2), ('node { name: "%s" }'):format(C2) }, "\n"))
    local r = assert(graph.run(dir))
    assert.same({ 0, 1, 2, 3, 4 }, r.cards)
    assert.same({ D, C, D2, C2 }, r.graphs[0].nodes)
    local v = {}
    for _, p in ipairs(r.pairs) do v[p.b] = p end
    assert.equal("identical", v[1].verdict)
    assert.equal("order", v[2].verdict)
    assert.equal(2, v[2].first_divergence)
    assert.same({ D2, C2 }, v[2].at)
    assert.equal("count", v[3].verdict)
    assert.same({ [C2] = { 1, 0 } }, v[3].counts)
    assert.equal("identical", v[4].verdict)
    local code, out = h.run("graph", "GRAPH_PATH=" .. dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[ERROR] card 0 vs card 2: same nodes in another order; first difference at index 2", 1, true))
    assert.truthy(out:find("[ERROR] card 0 vs card 3: node counts differ: " .. C2 .. " 1 vs 0", 1, true))
    -- a line names the first 20 nodes whose counts differ, by name, and counts the others
    local many = {}
    for i = 1, 25 do many[i] = ("MoeDistributeDispatchV2_%02d"):format(i) end
    atc(dir .. "/graph_1_device3.json", many)
    code, out = h.run("graph", "GRAPH_PATH=" .. dir, "-o", dir .. "/out") -- the folder of the run before: skipped
    assert.equal(0, code)
    local line = out:match("%[ERROR%] card 0 vs card 3: [^\n]*")
    -- 29 differ (the reference's 4 nodes, none of them on card 3, and its 25): the first 20 by name
    assert.truthy(line:find("MoeDistributeDispatchV2_17 0 vs 1; 9 more (graph_summary.json lists them all)", 1, true), line)
    assert.falsy(line:find("MoeDistributeDispatchV2_18", 1, true), line)
    local s = core.json.load(dir .. "/out/graph_summary.json")
    assert.equal(4, #s.cards["2"])
    assert.equal("order", s.pairs[2].verdict)
    assert.equal(2, s.pairs[2].first_divergence)
    assert.same({ 1, 0 }, s.pairs[3].counts[C2])
  end)

  it("reads a card's files one after the other, and groups cards by their whole sequences", function()
    local D, C = "MoeDistributeDispatchV2_1", "MoeDistributeCombineV2_1"
    atc(dir .. "/graph_1_device0.json", { D, C })
    atc(dir .. "/graph_2_device0.json", { D })
    atc(dir .. "/graph_1_device1.json", { D, C, D })
    atc(dir .. "/graph_1_device2.json", { D, C, D })
    atc(dir .. "/graph_1_device3.json", { D, C })
    atc(dir .. "/graph_2_device3.json", { C })
    local r = assert(graph.run(dir))
    assert.same({ D, C, D }, r.graphs[0].nodes)
    assert.same({ D, C, C }, r.graphs[3].nodes)
    assert.same({ card = 0, cards = { 0, 1, 2 }, tie = 0 }, r.reference)
    assert.same({ "identical", "identical", "count" }, { r.pairs[1].verdict, r.pairs[2].verdict, r.pairs[3].verdict })
    -- a prefix, or the same names in another order, is no member of the group
    local analysis = require "ascope.analysis.graph"
    local by_card = { { nodes = { D, C } }, { nodes = { D } }, { nodes = { C, D } }, { nodes = { D, C } } }
    assert.same({ card = 1, cards = { 1, 4 }, tie = 0 }, analysis.reference({ 1, 2, 3, 4 }, by_card))
    -- every sequence ending in the same name looked up under one number: still told apart
    local factor = analysis.KEY_FACTOR
    analysis.KEY_FACTOR = 0
    local ok, ref = pcall(analysis.reference, { 1, 2, 3, 4 }, by_card)
    analysis.KEY_FACTOR = factor
    assert(ok, ref)
    assert.same({ card = 1, cards = { 1, 4 }, tie = 0 }, ref)
  end)

  it("compares every card with the order most cards have, and names card 0 when it is the odd one", function()
    local D, C = "MoeDistributeDispatchV2_1", "MoeDistributeCombineV2_1"
    atc(dir .. "/graph_1_device0.json", { C, D })
    for card = 1, 3 do atc(("%s/graph_1_device%d.json"):format(dir, card), { D, C }) end
    local r = assert(graph.run(dir))
    assert.same({ card = 1, cards = { 1, 2, 3 }, tie = 0 }, r.reference)
    local v = {}
    for _, p in ipairs(r.pairs) do v[p.b] = p.a .. " " .. p.verdict end
    assert.same({ [0] = "1 order", [2] = "1 identical", [3] = "1 identical" }, v)
    local found = {}
    for _, a in ipairs(graph.anomalies(r)) do found[#found + 1] = a.severity .. " " .. a.card end
    assert.same({ "ERROR 0" }, found)
    local code, out = h.run("--lang", "en", "graph", dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[INFO] reference: card 1, whose order 3 of the 4 cards have", 1, true), out)
    assert.truthy(out:find("[ERROR] card 1 vs card 0: same nodes in another order", 1, true), out)
    assert.equal(1, core.json.load(dir .. "/out/graph_summary.json").reference.card)
    -- two orders of two cards each: no majority, said so; the group of the lowest card is the
    -- reference, whatever order the files are read in
    atc(dir .. "/graph_1_device0.json", { C, D })
    atc(dir .. "/graph_1_device3.json", { C, D })
    r = assert(graph.run(dir))
    assert.same({ card = 0, cards = { 0, 3 }, tie = 1 }, r.reference)
    found = {}
    for _, a in ipairs(graph.anomalies(r)) do found[#found + 1] = a.severity .. " " .. a.card end
    assert.same({ "WARNING 0", "ERROR 1", "ERROR 2" }, found)
    code, out = h.run("--lang", "en", "graph", dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[WARNING] no order has a majority: 2 orders of 2 card(s) each; the reference is card 0", 1, true), out)
  end)

  it("warns naming the cards between others that have no graph file, and only those", function()
    for _, card in ipairs({ 0, 1, 3, 7 }) do atc(("%s/graph_1_device%d.json"):format(dir, card), { "MoeDistributeDispatch_1" }) end
    local r = assert(graph.run(dir))
    assert.same({ { 2, 2 }, { 4, 6 } }, r.missing)
    local found = {}
    for _, a in ipairs(graph.anomalies(r)) do found[#found + 1] = a.severity .. " " .. a.card .. " " .. a.message end
    assert.same({ "WARNING 2 no graph file for card(s) 2, 4-6, between cards that have one: their order is not compared" },
      found)
    local code, out = h.run("--lang", "en", "graph", dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[WARNING] no graph file for card(s) 2, 4-6,", 1, true), out)
    assert.same({ { 2, 2 }, { 4, 6 } }, core.json.load(dir .. "/out/graph_summary.json").missing_cards)
    -- cards 8 to 10 alone (a node's cards): nothing below the lowest is missing; an unreadable
    -- graph is named as such, not as missing
    h.cleanup(dir)
    dir = h.tmpdir()
    for card = 8, 10 do atc(("%s/graph_1_device%d.json"):format(dir, card), { "MoeDistributeDispatch_1" }) end
    h.write(dir .. "/graph_1_device9.json", "")
    r = assert(graph.run(dir))
    assert.same({}, r.missing)
    assert.equal(1, #r.failed)
  end)

  it("reports a graph file whose card cannot be told, and a user filter", function()
    atc(dir .. "/graph_a.json", { "MoeDistributeDispatchV2_1" })
    atc(dir .. "/graph_x_device0.json", { "MoeDistributeDispatchV2_1", "AllToAllV_1" })
    local r = assert(graph.run(dir, { filter = "AllToAll" }))
    assert.same({ "AllToAllV_1" }, r.graphs[0].nodes)
    assert.equal(1, #r.failed)
    assert.truthy(r.failed[1].reason:find("cannot tell the card", 1, true))
    local code = h.run("graph", dir, "-o", dir .. "/out")
    assert.equal(1, code)
  end)

  it("takes an empty, foreign, cut or damaged graph file for unreadable, not for a card with fewer nodes", function()
    local nodes = { "MoeDistributeDispatchV2_1", "MoeDistributeCombineV2_1" }
    atc(dir .. "/graph_1_device0.json", nodes)
    atc(dir .. "/graph_1_device1.json", nodes)
    local whole = h.read(dir .. "/graph_1_device1.json")
    local bad = {
      [2] = { "", "no node name found" },
      [3] = { ("\0x"):rep(200), "no node name found" }, -- UTF-16 text, in effect
      [4] = { ("["):rep(100000), "no node name found" },
      [5] = { whole:sub(1, #whole - 30), (":1:%d (byte %d): invalid JSON (the file ends early: truncated?)"):format(#whole - 29,
        #whole - 30) },
    }
    -- cut after a node, at a "}": it ends as a graph ends, and has a node fewer
    local after = select(2, whole:find('"Cast"}', 1, true))
    bad[6] = { whole:sub(1, after), (":1:%d (byte %d): invalid JSON (the file ends early: truncated?)"):format(after + 1, after) }
    -- yajl's place for what follows the document: past the token it stopped at
    bad[7] = { whole .. "}", (":1:%d (byte %d): invalid JSON: parse error: trailing garbage"):format(#whole + 2, #whole + 1) }
    -- on several lines, cut inside a name: the line and column of the end
    local lines = whole:gsub(", ", ",\n  "):sub(1, -60)
    local last = lines:match(".*\n()")
    bad[8] = { lines, (":%d:%d (byte %d): invalid JSON (the file ends early: truncated?)"):format(select(2, lines:gsub("\n", "")) + 1,
      #lines - last + 2, #lines) }
    for card, b in pairs(bad) do h.write(("%s/graph_1_device%d.json"):format(dir, card), b[1]) end
    local reader = require "ascope.ascend.graph"
    local block, overlap = reader.BLOCK, reader.OVERLAP
    -- the JSON is checked as the blocks are read: the place is the same whatever their size
    for _, sizes in ipairs({ { block, overlap }, { 100, 60 } }) do
      reader.BLOCK, reader.OVERLAP = sizes[1], sizes[2]
      local r = assert(graph.run(dir, {}))
      assert.same({ 0, 1 }, r.cards)
      assert.equal("identical", r.pairs[1].verdict)
      assert.equal(7, #r.failed)
      for _, f in ipairs(r.failed) do
        local sep = bad[f.card][2]:sub(1, 1) == ":" and "" or ": "
        assert.truthy(f.reason:find(f.path .. sep .. bad[f.card][2], 1, true), f.reason)
      end
    end
    reader.BLOCK, reader.OVERLAP = block, overlap
    local code, _, err = h.run("graph", dir, "-o", dir .. "/out")
    assert.equal(1, code)
    assert.falsy(err:find("node counts differ", 1, true), err)
  end)
end)
