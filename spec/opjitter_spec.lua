local core = require "ascope_core"
local h = require "helper"
local opjitter = require "ascope.opjitter"
local analysis = require "ascope.analysis.opjitter"

local HEADER = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),aiv_vec_time(us),aiv_scalar_time(us)\n"

-- one card's kernel_details.csv from {type, duration, aiv_vec} rows
local function card(dir, n, rows)
  local lines = { HEADER }
  for i, r in ipairs(rows) do
    lines[#lines + 1] = ("1,%s_%d,%s,AI_VECTOR_CORE,%d.000,%s,%s,1.0\n"):format(r[1], i, r[1], 1000 + i, r[2], r[3] or "1.0")
  end
  h.write(("%s/card_%d/kernel_details.csv"):format(dir, n), table.concat(lines))
end

describe("opjitter", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("fills the gaps of a card range as missing cards, not those of sparse card numbers", function()
    local D = "MoeDistributeDispatchV2"
    card(dir, 0, { { D, "10", "100" } })
    card(dir, 60, { { D, "12", "100" } })
    local r = assert(opjitter.run(dir))
    assert.equal(59, #r.missing) -- 59 gaps: no more than the 2 cards seen and 64
    assert.equal(61, #r.cards)
    card(dir, 500, { { D, "11", "100" } })
    r = assert(opjitter.run(dir))
    assert.same({ 0, 60, 500 }, r.found)
    assert.same({}, r.missing) -- 498 gaps are not one job's missing cards
    assert.equal(3, #r.cards)
    assert.equal(1, #r.warnings)
    assert.truthy(r.warnings[1]:find("card numbers up to 500 with 3 card(s) found: the 498 numbers", 1, true))
    r = assert(opjitter.run(dir, { cards = 501 })) -- the job's size given: every card is listed
    assert.equal(498, #r.missing)
  end)

  it("lines up the n-th call of each type across cards; NA and missing cards are left out", function()
    local D, C = "MoeDistributeDispatchV2", "MoeDistributeCombineV2"
    card(dir, 0, { { D, "10", "100" }, { C, "20" }, { D, "12", "100" }, { C, "21" }, { D, "11", "100" } })
    card(dir, 1, { { D, "14", "100" }, { C, "x" }, { D, "15", "100" }, { C, "29" }, { D, "13", "100" } })
    card(dir, 3, { { D, "9", "100" }, { C, "25" }, { D, "N/A", "100" }, { C, "23" }, { D, "20", "100" } })
    local r = assert(opjitter.run(dir))
    assert.same({ 0, 1, 3 }, r.found)
    assert.same({ 2 }, r.missing)
    local rows = {}
    for _, x in ipairs(r.rows) do rows[x.type .. "#" .. x.call] = x end
    -- dispatch call 1: cards 0, 1, 3 have 12, 15, NA -> max 15, min 12
    assert.equal(15, rows[D .. "#1"].max)
    assert.equal(12, rows[D .. "#1"].min)
    assert.equal(3, rows[D .. "#1"].jitter)
    assert.is_nil(rows[D .. "#1"].values[3])
    assert.is_nil(rows[D .. "#1"].values[2])
    -- combine call 0: 20, x (not a number), 25 -> 5
    assert.equal(5, rows[C .. "#0"].jitter)
    -- averages over calls >= 1 with two values or more: dispatch (3 + 9) / 2, combine 8 / 1
    local avg = {}
    for _, a in ipairs(r.avg) do avg[a.type] = a end
    assert.equal(6, avg[D].avg_jitter)
    assert.equal(2, avg[D].valid)
    assert.equal(3, avg[D].calls)
    assert.equal(8, avg[C].avg_jitter)
    local code, out = h.run("opjitter", dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[ERROR] card 2: no profiling data; its values are NA", 1, true))
    local all = h.csv_rows(dir .. "/out/profiling_all_data.csv")
    assert.equal("NA", all[1].card_2)
    assert.equal(D, all[1].type)
    assert.equal("0", all[1].call)
    local s = core.json.load(dir .. "/out/opjitter_summary.json")
    assert.same({ 2 }, s.missing_cards)
    assert.equal(6, s.avg_jitter[D])
    assert.equal(9, s.top_jitter[1].jitter) -- dispatch call 2: 20 - 11
  end)

  it("one rank's folder alone is that card: no card below it is missing, and it says there is no jitter", function()
    local rank1 = h.real .. "/msinsight_pytorch_text_level0/rank1_ascend_pt"
    local code, out = h.run("opjitter", rank1, "-o", dir .. "/one")
    assert.equal(0, code)
    assert.falsy(out:find("[ERROR]", 1, true), out)
    assert.truthy(out:find("[INFO] 82 operator type(s) read; no call has values on two cards, so no jitter", 1, true), out)
    local s = core.json.load(dir .. "/one/opjitter_summary.json")
    assert.same({}, s.missing_cards)
    -- --cards says the job's size: then card 0 is missing
    local _, out2 = h.run("opjitter", rank1, "-o", dir .. "/two", "--cards", "2")
    assert.truthy(out2:find("[ERROR] card 0: no profiling data; its values are NA", 1, true), out2)
  end)

  it("a job of several nodes: the rank of profiler_info_<N>.json is the card, not the node-local Device_id", function()
    local D = "MoeDistributeDispatchV2"
    for r = 0, 3 do
      local pt = ("%s/node%d/rank%d_ascend_pt"):format(dir, r // 2, r)
      h.write(("%s/profiler_info_%d.json"):format(pt, r), ('{"rank_id": %d}'):format(r))
      h.write(pt .. "/ASCEND_PROFILER_OUTPUT/kernel_details.csv", "Device_id," .. HEADER
        .. ("%d,1,%s_1,%s,AI_VECTOR_CORE,1001.000,%d,100,1.0\n"):format(r % 2, D, D, 10 + r))
    end
    local r = assert(opjitter.run(dir))
    assert.same({}, r.failed)
    assert.same({ 0, 1, 2, 3 }, r.found)
    assert.equal(3, r.rows[1].jitter)
  end)

  it("reports an unreadable card file by name, keeps the other cards, and exits 1", function()
    local D = "MoeDistributeDispatchV2"
    card(dir, 0, { { D, "10" }, { D, "12" } })
    card(dir, 1, { { D, "14" }, { D, "15" } })
    h.write(dir .. "/card_2/kernel_details.csv", "Step Id,Name,Start Time(us)\n1,x,1.0\n")
    h.write(dir .. "/card_3/kernel_details.csv", "")
    for _, jobs in ipairs({ "1", "2" }) do
      local code, out, err = h.run("opjitter", dir, "-o", dir .. "/out", "-j", jobs)
      assert.equal(1, code)
      local msg = err .. out
      assert.truthy(msg:find(dir .. "/card_2/kernel_details.csv: missing columns", 1, true))
      assert.truthy(msg:find(dir .. "/card_3/kernel_details.csv: the file is empty", 1, true))
      local all = h.csv_rows(dir .. "/out/profiling_all_data.csv")
      assert.equal(3, tonumber(all[2].jitter)) -- call 1: 15 - 12
      assert.equal("NA", all[1].card_2)
      assert.equal("NA", all[1].card_3)
    end
  end)

  it("checks the aiv columns of dispatch/combine against the card's mean, and takes a rule file", function()
    local D = "MoeDistributeDispatchV3"
    card(dir, 0, { { D, "10", "999" }, { D, "10", "100" }, { D, "10", "104" }, { D, "10", "40" }, { D, "10", "abc" },
                   { D, "10", "-1" }, { "Other", "5", "1" } })
    local r = assert(opjitter.run(dir))
    -- calls 1..5 (call 0 left out): numeric values 100, 104, 40, -1 -> mean 60.75, range 30.375 - 91.125
    local by = {}
    for _, v in ipairs(r.aiv) do
      if v.column == "aiv_vec_time(us)" then by[v.call] = v end
    end
    assert.equal("out_of_range", by[1].kind)
    assert.near(60.75, by[1].mean, 1e-12)
    assert.near(30.375, by[1].low, 1e-12)
    assert.near(91.125, by[1].high, 1e-12)
    assert.equal("out_of_range", by[2].kind)
    assert.is_nil(by[3])
    assert.equal("non_numeric", by[4].kind)
    assert.equal("not_positive", by[5].kind)
    assert.is_nil(by[0])
    -- a user rule file with a wider tolerance keeps only the kinds that are not about range
    h.write(dir .. "/r.lua", "return { tolerance = 0.9 }")
    local r2 = assert(opjitter.run(dir, { rules = dir .. "/r.lua" }))
    local kinds = {}
    for _, v in ipairs(r2.aiv) do if v.column == "aiv_vec_time(us)" then kinds[v.call] = v.kind end end
    assert.same({ [4] = "non_numeric", [5] = "not_positive" }, kinds)
    local code, out = h.run("opjitter", "PROFILING_PATH=" .. dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[ERROR] card 0 | type MoeDistributeDispatchV3 | call 1 | aiv_vec_time(us) = 100.0 is out of range: "
      .. "mean 60.750, allowed 30.375 - 91.125", 1, true))
  end)

  it("checks the aiv columns of dispatch/combine types in every spelling, the kernels plog and graph pick out", function()
    -- calls 1..4 of each type: 100, 100, 400, 100 -> mean 175, allowed 87.5 - 262.5: call 3 is out
    local rows = {}
    for _, ty in ipairs({ "moe_distribute_combine", "MoeDistributeDispatchV2", "MOE_DISTRIBUTE_DISPATCH_V3", "Add" }) do
      for _, v in ipairs({ "100", "100", "100", "400", "100" }) do rows[#rows + 1] = { ty, "10", v } end
    end
    card(dir, 0, rows)
    local function out_of_range(r)
      local got = {}
      for _, v in ipairs(r.aiv) do
        if v.column == "aiv_vec_time(us)" then got[#got + 1] = ("%s %d %s"):format(v.type, v.call, v.kind) end
      end
      table.sort(got)
      return got
    end
    assert.same({ "MOE_DISTRIBUTE_DISPATCH_V3 3 out_of_range", "MoeDistributeDispatchV2 3 out_of_range",
                  "moe_distribute_combine 3 out_of_range" }, out_of_range(assert(opjitter.run(dir))))
    -- one definition: the types checked are the kernels plog judges failures by
    assert.same(require("ascope.plog").rules().moe_kernels, opjitter.rules().aiv_types)
    -- a user's own aiv_types replace them
    h.write(dir .. "/r.lua", 'return { aiv_types = { "^add$", "dispatch_v3" } }')
    assert.same({ "Add 3 out_of_range", "MOE_DISTRIBUTE_DISPATCH_V3 3 out_of_range" },
      out_of_range(assert(opjitter.run(dir, { rules = dir .. "/r.lua" }))))
  end)

  it("real kernel_details of two cards (values from an independent Python computation)", function()
    local r = assert(opjitter.run(h.real .. "/msinsight_pytorch_text_level0"))
    assert.same({ 0, 1 }, r.found)
    assert.equal(82, #r.avg) -- types by name: this CANN wrote "N/A" as every Type
    local avg = {}
    for _, a in ipairs(r.avg) do avg[a.type] = a end
    assert.near(4.2, avg["aclnnAdaptiveAvgPool2dBackward_TransposeAiCore_Transpose"].avg_jitter, 1e-9)
    assert.near(3.57, avg["trans_TransData_12"].avg_jitter, 1e-9)
    assert.equal(2, avg["trans_TransData_12"].valid)
    assert.equal("trans_TransData_0", r.rows[1].type)
    assert.equal(1.46, r.rows[1].jitter) -- 52.081 - 50.621
  end)

  it("reads a rank exported as a database like its kernel_details.csv, and a rank exported both ways once", function()
    -- the real level-0 database export: its compute tasks (COMPUTE_TASK_INFO + TASK) and HCCL
    -- operators (COMMUNICATION_OP) are the 191 rows of the same model's text export, with the
    -- same calls of every operator (the allreduces' names carry another number); durations are
    -- the tasks' end - start (sqlite3: Conv2D1 324527 ns)
    local db = h.real .. "/msinsight_pytorch_db_level0"
    local r = assert(opjitter.run(db))
    assert.same({ 0 }, r.found)
    assert.same({}, r.failed)
    assert.equal(82, #r.avg)
    local function calls(rows, key)
      local n = {}
      for _, x in ipairs(rows) do
        local k = x[key]:gsub("__%d+_", "__N_")
        n[k] = (n[k] or 0) + 1
      end
      return n
    end
    local text = h.csv_rows(h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv")
    assert.equal(191, #r.rows)
    assert.same(calls(text, "Name"), calls(r.rows, "type"))
    assert.same({ "trans_TransData_0", "trans_TransData_1", "Conv2D1" }, { r.rows[1].type, r.rows[2].type, r.rows[3].type })
    assert.near(324.527, r.rows[3].max, 1e-9)
    -- diagnose on it: no finding (it was an ERROR, "no kernel_details.csv ... found", and exit 1)
    local code, out = h.run("diagnose", "PROFILING_PATH=" .. db, "-o", dir .. "/diag")
    assert.equal(0, code, out)
    assert.truthy(out:find("summary: 0 finding(s)", 1, true), out)
    -- a rank folder with both: its CSV is read, the database not a second time
    local both = dir .. "/both/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    h.copy(db .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db", both .. "/ascend_pytorch_profiler_0.db")
    h.copy(h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
      both .. "/kernel_details.csv")
    local files = assert(opjitter.find(dir .. "/both"))
    assert.same({ both .. "/kernel_details.csv" }, files)
    -- a database of odd kinds (hostile/timeline_odd.db: 'abc' times in rows 10-14 of TASK, no
    -- end in rows 20-22, COMPUTE_TASK_INFO with each row twice): each task once; the 8 kernels
    -- without a duration counted and the first in start order named (a start that is no number
    -- sorts last)
    local kernel_db = require "ascope.ascend.kernel_db"
    local odd = assert(kernel_db.read(h.fixtures .. "/hostile/timeline_odd.db"))
    assert.equal(191, odd.n)
    assert.same({ 8, "trans_TransData_7 (kernel 13, in start order)" }, { odd.bad_cells, odd.first_bad })
    -- kernels whose name STRING_IDS lacks (hostile/kernels_unnamed.db: 2) are said to be, with the file
    local plain = assert(kernel_db.read(db .. "/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"))
    assert.same({}, plain.notes)
    local unnamed = dir .. "/unnamed/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    h.copy(h.fixtures .. "/hostile/kernels_unnamed.db", unnamed)
    local u = assert(opjitter.run(dir .. "/unnamed"))
    assert.same({ unnamed .. ": 2 row(s) of COMPUTE_TASK_INFO hold in column name a string id STRING_IDS does not name: "
      .. "those names are empty" }, u.warnings)
  end)

  it("does not take a real row one field short for a duration, and says which row it is", function()
    -- line 17 of this real op_summary lacks its Duration: its next field, the Wait Time 1.8414,
    -- would stand as a 1.8 us FlashAttentionScore among calls of 7000 us
    local path = h.real .. "/msinsight_legacy_2023_2024/test_kernel_parse/op_summary_1.csv"
    local r = assert(opjitter.run(path))
    assert.same({ path .. ": 1 row(s) have another number of fields than the header, so which column a value is in "
                  .. "cannot be told: their numbers were left empty; first: " .. path .. ":17: 31 fields where the header has 32" },
      r.warnings)
    local fa = {}
    for _, row in ipairs(r.rows) do
      if row.type == "FlashAttentionScore" then fa[#fa + 1] = row end
    end
    assert.equal(4, #fa)
    assert.equal(3, fa[4].call)
    assert.is_nil(fa[4].values[0])
    assert.equal(7023.5739, fa[3].values[0])
  end)

  it("checks the aiv columns of a real file for a configured family", function()
    local p = h.real .. "/mstt_msprof_analyze_tests/compute_advice_data/kernel_details.csv"
    local dir2 = h.tmpdir()
    h.write(dir2 .. "/r.lua", 'return { aiv_types = { "^Add$" } }')
    local r = assert(opjitter.run(p, { rules = dir2 .. "/r.lua" }))
    -- independent: the Add rows' aiv_vec_time(us) from the CSV text
    local rows = h.csv_rows(p)
    local vals = {}
    for _, row in ipairs(rows) do if row.Type == "Add" then vals[#vals + 1] = tonumber(row["aiv_vec_time(us)"]) end end
    local sum, n = 0, 0
    for i = 2, #vals do if vals[i] then sum, n = sum + vals[i], n + 1 end end
    local mean = sum / n
    local expect = 0
    for i = 2, #vals do
      local v = vals[i]
      if v == nil or v <= 0 or v < mean * 0.5 or v > mean * 1.5 then expect = expect + 1 end
    end
    local got = 0
    for _, v in ipairs(r.aiv) do
      if v.column == "aiv_vec_time(us)" then
        got = got + 1
        assert.near(mean, v.mean or mean, 1e-9)
      end
    end
    assert.is_true(#vals > 2)
    assert.equal(expect, got)
    h.cleanup(dir2)
  end)

  -- The rows and aiv checks computed directly from the rows written: each card's calls of a type
  -- in file order, the i-th call of the reference card's (card 0) types side by side.
  local function oracle(cards)
    local per, order = {}, {}
    for c, rows in pairs(cards) do
      per[c] = {}
      for _, r in ipairs(rows) do
        local l = per[c][r[1]]
        if not l then
          l = {}
          per[c][r[1]] = l
          if c == 0 then order[#order + 1] = r[1] end
        end
        l[#l + 1] = r
      end
    end
    local out = {}
    for _, ty in ipairs(order) do
      for i = 1, #per[0][ty] do
        local mx, mn, n, values = nil, nil, 0, {}
        for c in pairs(cards) do
          local call = per[c][ty] and per[c][ty][i]
          local v = call and tonumber(call[2])
          values[c] = v
          if v then
            n = n + 1
            mx, mn = math.max(mx or v, v), math.min(mn or v, v)
          end
        end
        out[#out + 1] = { type = ty, call = i - 1, max = mx, min = mn, n = n, values = values,
                          jitter = n >= 2 and math.floor((mx - mn) * 1e6 + 0.5) / 1e6 or nil }
      end
    end
    local aiv = {}
    for c = 0, 2 do
      local seen = {}
      for _, r in ipairs(cards[c]) do
        if r[1]:find("MoeDistribute", 1, true) and not seen[r[1]] then
          seen[r[1]] = true
          local l, sum, cnt = per[c][r[1]], 0, 0
          for i = 2, #l do
            local v = tonumber(l[i][3])
            if v then sum, cnt = sum + v, cnt + 1 end
          end
          local mean = cnt > 0 and sum / cnt or nil
          for i = 2, #l do
            local v = tonumber(l[i][3])
            if v == nil or v <= 0 or (mean and (v < mean * 0.5 or v > mean * 1.5)) then
              aiv[#aiv + 1] = ("%d %s %d %s"):format(c, r[1], i - 1, tostring(v))
            end
          end
        end
      end
    end
    return out, aiv
  end

  it("agrees with a direct computation on cards with thousands of types in different orders", function()
    math.randomseed(7)
    local cards = {}
    for c = 0, 2 do
      local rows = {}
      for _ = 1, 6000 do
        local k = math.random(1, 3000) -- most types a few calls, in another order on each card
        local ty = k <= 40 and "MoeDistributeDispatchV2" or k <= 80 and "MoeDistributeCombineV2" or "Type_" .. k
        local d = math.random(1, 50) == 1 and "N/A" or ("%d.%03d"):format(math.random(1, 90), math.random(0, 999))
        local a = math.random(1, 40) == 1 and "abc" or ("%d.5"):format(math.random(-2, 130))
        rows[#rows + 1] = { ty, d, a }
      end
      cards[c] = rows
      card(dir, c, rows)
    end
    local r = assert(opjitter.run(dir))
    local want_rows, want_aiv = oracle(cards)
    assert.equal(#want_rows, #r.rows)
    for i, w in ipairs(want_rows) do
      local got = r.rows[i]
      assert.same(w, { type = got.type, call = got.call, max = got.max, min = got.min, n = got.n, values = got.values,
                       jitter = got.jitter })
    end
    -- the violations of a card, type and column: the first AIV_LISTED listed, the others counted
    local listed, counted, per = {}, {}, {}
    for _, w in ipairs(want_aiv) do
      local group = w:match("^(%d+ %S+)")
      per[group] = (per[group] or 0) + 1
      if per[group] <= analysis.AIV_LISTED then listed[#listed + 1] = w else counted[group] = (counted[group] or 0) + 1 end
    end
    local aiv = {}
    for _, v in ipairs(r.aiv) do
      if v.column == "aiv_vec_time(us)" then
        aiv[#aiv + 1] = ("%d %s %d %s"):format(v.card, v.type, v.call, tostring(v.value))
      end
    end
    assert.is_true(#want_aiv > 100 and next(counted) ~= nil)
    assert.same(listed, aiv)
    local got = {}
    for _, g in ipairs(r.aiv_unlisted) do
      if g.column == "aiv_vec_time(us)" then got[g.card .. " " .. g.type] = g.count end
    end
    assert.same(counted, got)
  end)

  it("says what other cards have beyond the reference card's types and calls", function()
    card(dir, 0, { { "Add", "1" }, { "Mul", "2" }, { "Add", "3" } })
    card(dir, 1, { { "Add", "1" }, { "Add", "2" }, { "Add", "9" }, { "Sub", "4" }, { "Div", "5" }, { "Sub", "6" } })
    card(dir, 2, { { "Add", "2" }, { "Mul", "2" }, { "Add", "3" } }) -- nothing beyond
    local r = assert(opjitter.run(dir))
    assert.equal(3, #r.rows) -- Add 0, Add 1, Mul 0: card 0's
    assert.same({ "1 card(s) (1) have calls that reference card 0 has not: 3 call(s) of 2 operator type(s) it lacks "
      .. "and 1 call(s) past its count of their type are left out of the rows" }, r.warnings)
    card(dir, 1, { { "Add", "1" }, { "Mul", "2" }, { "Add", "3" } })
    assert.same({}, assert(opjitter.run(dir)).warnings) -- the same calls: nothing to say
  end)

  it("lists 20 aiv violations of a card, type and column, and counts the others by kind", function()
    local D = "MoeDistributeDispatchV2"
    local rows = { { D, "10", "100" } }
    for i = 1, 60 do rows[#rows + 1] = { D, "10", i % 2 == 0 and "N/A" or "-1" } end -- aiv not filled in
    card(dir, 0, rows)
    local r = assert(opjitter.run(dir))
    local vec = {}
    for _, v in ipairs(r.aiv) do if v.column == "aiv_vec_time(us)" then vec[#vec + 1] = v end end
    assert.equal(20, #vec)
    assert.equal(1, vec[1].call)
    assert.same({ { card = 0, type = D, column = "aiv_vec_time(us)", count = 40,
                    kinds = { non_numeric = 20, not_positive = 20 } } }, r.aiv_unlisted)
    local code, out = h.run("--lang", "en", "opjitter", dir, "-o", dir .. "/out")
    assert.equal(0, code)
    assert.truthy(out:find("[ERROR] card 0 | type " .. D .. " | aiv_vec_time(us): 40 more value(s) not listed one by "
      .. "one (20 not a number, 20 not positive)", 1, true))
    local s = core.json.load(dir .. "/out/opjitter_summary.json")
    assert.equal(20, #s.aiv_violations)
    assert.equal(40, s.aiv_not_listed[1].count)
    assert.truthy(h.read(dir .. "/out/opjitter_report.html"):find("40 more value(s) not listed", 1, true))
  end)
end)
