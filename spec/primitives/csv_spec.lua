local core = require "ascope_core"
local h = require "helper"
local csv = core.csv

local KERNELS = h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"

describe("csv.read on a real kernel_details.csv", function()
  it("maps headers to typed columns (values checked with Python's csv module)", function()
    local r = assert(csv.read(KERNELS, { columns = {
      ["Name"] = "string", ["Type"] = "string", ["Start Time(us)"] = "us", ["Duration(us)"] = "number",
      ["Step Id"] = "integer", ["Block Dim"] = "integer",
    } }))
    assert.equal(191, r.n)
    local c = r.columns
    assert.equal("trans_TransData_0", c["Name"][1])
    assert.equal("N/A", c["Type"][1])                          -- strings are kept as written
    assert.equal(1736405443881410320, c["Start Time(us)"][1])  -- "1736405443881410.320\t"
    assert.equal(50.621, c["Duration(us)"][1])
    assert.equal(50, c["Step Id"][1])
    assert.equal("aclnnForeachAddListV2_ForeachAddListV2_ForeachAddList", c["Name"][191])
    assert.equal(1736405443997036830, c["Start Time(us)"][191])
    local _, sum = c["Duration(us)"]:stats()
    assert.near(94344.34, sum, 1e-6)
  end)

  it("names the missing column and the file", function()
    local r, err = csv.read(KERNELS, { columns = { ["Name"] = "string", ["Task Duration(us)"] = "number" } })
    assert.is_nil(r)
    assert.truthy(err:find(KERNELS, 1, true))
    assert.truthy(err:find('missing column "Task Duration(us)"', 1, true))
  end)

  it("refuses a column read that the header names twice, naming both fields", function()
    local dir = h.tmpdir()
    local p = dir .. "/dup.csv"
    h.write(p, "Size(KB),Name,Size(KB)\n99999,aten::empty,5\n")
    local r, err = csv.read(p, { columns = { ["Name"] = "string", ["Size(KB)"] = "number" } })
    assert.is_nil(r)
    assert.equal(p .. ':1: column "Size(KB)" appears twice in the header (fields 1 and 3)', err)
    -- a twice-named column that is not read is no matter
    r = assert(csv.read(p, { columns = { ["Name"] = "string" } }))
    assert.equal("aten::empty", r.columns["Name"][1])
    h.cleanup(dir)
  end)

  it("reads rows of another width than the header without their numbers, counting them and naming the first", function()
    local dir = h.tmpdir()
    local p = dir .. "/ragged.csv"
    -- line 3 one field short, line 5 one too many, a quoted newline on line 3 keeps the count right
    h.write(p, 'Name,Size(KB),Note\na,1,x\n"b\nc",2\nd,3,y\ne,4,z,extra\n')
    local r = assert(csv.read(p, { columns = { ["Name"] = "string", ["Size(KB)"] = "number", ["Note"] = "string" } }))
    assert.equal(4, r.n)
    assert.equal(2, r.ragged_rows)
    assert.equal(p .. ":3: 2 fields where the header has 3", r.first_ragged)
    assert.same({ "a", "b\nc", "d", "e" }, r.columns["Name"]:totable())
    -- which column a ragged row's value belongs to cannot be told: its numbers are missing
    local size = r.columns["Size(KB)"]
    assert.same({ 1, nil, 3, nil }, { size[1], size[2], size[3], size[4] })
    assert.is_nil(r.columns["Note"][2])
    assert.equal("z", r.columns["Note"][4])
    -- rows of the header's width: none counted, nothing named
    h.write(p, "Name,Size(KB)\na,1\n\nb,2\n")
    r = assert(csv.read(p, { columns = { ["Name"] = "string" } }))
    assert.equal(0, r.ragged_rows)
    assert.is_nil(r.first_ragged)
    h.cleanup(dir)
  end)

  it("refuses a header of more than 65536 fields, and keeps no span for a row's fields past the header's", function()
    local dir = h.tmpdir()
    local p = dir .. "/wide.csv"
    h.write(p, "Name,Size(KB)" .. (","):rep(65535) .. "\na,1\n")
    local r, err = csv.read(p, { columns = { ["Name"] = "string" } })
    assert.is_nil(r)
    assert.equal(p .. ":1: the header has more than 65536 fields: not a table this reads", err)
    local rec = assert(csv.open(p))
    local _, _, rerr = rec:next()
    rec:close()
    assert.equal(p .. ":1: a record has more than 65536 fields: not a table this reads", rerr)
    -- one field less is a header; a row of two million fields is read as a ragged row
    h.write(p, "Name,Size(KB)" .. (","):rep(65534) .. "\na,1" .. (","):rep(2000000) .. "\nb,2\n")
    r = assert(csv.read(p, { columns = { ["Name"] = "string", ["Size(KB)"] = "number" } }))
    assert.equal(2, r.n)
    assert.equal(2, r.ragged_rows) -- neither row has the header's 65536 fields
    assert.equal(p .. ":2: 2000002 fields where the header has 65536", r.first_ragged)
    assert.same({ "a", "b" }, r.columns["Name"]:totable())
    h.cleanup(dir)
  end)

  it("gives an all-empty column for a missing optional one", function()
    local r = assert(csv.read(KERNELS, { columns = { ["Name"] = "string", ["aiv_vec_time(us)"] = "?number" } }))
    assert.is_false(r.present["aiv_vec_time(us)"])
    assert.is_nil(r.columns["aiv_vec_time(us)"][1])
    assert.equal(191, #r.columns["aiv_vec_time(us)"])
  end)
end)

describe("csv quirks of real files", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("accepts a BOM, CRLF, quoted numbers with tabs, N/A and empty cells", function()
    local p = dir .. "/q.csv"
    h.write(p, '\239\187\191Name,Size(KB),Time(us)\r\n"a,b","1.5\t",N/A\r\nc,,"1779785515596661.420\t"\r\n\r\nd,-2,1\r\n')
    local r = assert(csv.read(p, { columns = { Name = "string", ["Size(KB)"] = "number", ["Time(us)"] = "us" } }))
    assert.equal(3, r.n)
    assert.equal("a,b", r.columns.Name[1])
    assert.equal(1.5, r.columns["Size(KB)"][1])
    assert.is_nil(r.columns["Time(us)"][1])
    assert.is_nil(r.columns["Size(KB)"][2])
    assert.equal(1779785515596661420, r.columns["Time(us)"][2])
    assert.equal(-2.0, r.columns["Size(KB)"][3])
  end)

  it("reports a value that is not a number with file, line and column", function()
    local p = dir .. "/bad.csv"
    h.write(p, "Name,Size(KB)\na,1\nb,lots\n")
    local r, err = csv.read(p, { columns = { Name = "string", ["Size(KB)"] = "number" } })
    assert.is_nil(r)
    assert.truthy(err:find(p .. ":3:2", 1, true), err)
    assert.truthy(err:find('"lots" is not a number', 1, true))
    local r2 = assert(csv.read(p, { columns = { Name = "string", ["Size(KB)"] = "number" }, bad = "null" }))
    assert.equal(1, r2.bad_cells)
    assert.is_nil(r2.columns["Size(KB)"][2])
    assert.truthy(r2.first_bad:find(":3:", 1, true))
  end)

  it("reports malformed quoting with the file and line", function()
    local p = dir .. "/quote.csv"
    h.write(p, 'a,b\n1,2\n3,"x"y\n')
    local r, err = csv.read(p, { columns = { a = "string" } })
    assert.is_nil(r)
    assert.truthy(err:find(p .. ":3", 1, true), err)
    assert.truthy(err:find("malformed CSV", 1, true))
  end)

  it("reads records that cross read-buffer boundaries, quoted newlines and quotes included", function()
    local p = dir .. "/big.csv"
    local w = assert(csv.writer(p))
    w:row("Name", "Stack", "Time(us)")
    for i = 1, 40000 do
      w:row("op" .. i, ('a.py(%d): "f";\r\nb.py(2): g, h'):format(i), ("%d.%03d"):format(1700000000000000 + i, i % 1000))
    end
    assert(w:close())
    local r = assert(csv.read(p, { columns = { Name = "string", Stack = "string", ["Time(us)"] = "us" } }))
    assert.equal(40000, r.n)
    for _, i in ipairs({ 1, 9999, 23456, 40000 }) do
      assert.equal("op" .. i, r.columns.Name[i])
      assert.equal(('a.py(%d): "f";\r\nb.py(2): g, h'):format(i), r.columns.Stack[i])
      assert.equal((1700000000000000 + i) * 1000 + i % 1000, r.columns["Time(us)"][i])
    end
    -- every record but the header spans two lines: the last one starts on line 2 * 40000
    h.write(p, h.read(p) .. "bad,x,y\n")
    local r2, err = csv.read(p, { columns = { Name = "string", ["Time(us)"] = "us" } })
    assert.is_nil(r2)
    assert.truthy(err:find(p .. ":80002:3", 1, true), err)
  end)

  it("rejects an empty file", function()
    local p = dir .. "/e.csv"
    h.write(p, "")
    local _, err = csv.read(p, { columns = { a = "string" } })
    assert.truthy(err:find("empty", 1, true))
  end)

  it("writes call stacks with ;\\r\\n, quotes and commas so they read back the same", function()
    local p = dir .. "/out/w.csv"
    local w = assert(csv.writer(p))
    local stack = 'a.py(1): f;\r\nb.py(2): "g", h'
    w:row("name", "call_stack", "size", "t")
    w:row("x", stack, 1024.0, 7)
    w:row({ "y", "", 0.1, -1 })
    assert.equal(3, w:close())
    local r = assert(csv.open(p))
    assert.same({ "name", "call_stack", "size", "t" }, (r:next()))
    local rec, line = r:next()
    assert.same({ "x", stack, "1024.0", "7" }, rec)
    assert.equal(2, line)
    local rec2, line2 = r:next()
    assert.same({ "y", "", "0.1", "-1" }, rec2)
    assert.equal(4, line2) -- the quoted field spans two lines
    assert.is_nil(r:next())
    r:close()
  end)

  it("takes the order as a row list (column.group's 4-byte rows), an integer column or a list alike", function()
    local col = core.column
    local _, _, rows = col.group(col.new("string", { "a", "b", "a", "c", "a" })) -- rows[1]: 1, 3, 5
    local n = col.new("integer", { 10, 20, 30, 40, 50 })
    local p = dir .. "/o.csv"
    local function write(order)
      local w = assert(csv.writer(p))
      w:columns({ n }, order)
      assert(w:close())
      return h.read(p)
    end
    assert.equal("10\n30\n50\n", write(rows[1]))
    assert.equal(write(rows[1]), write({ 1, 3, 5 }))
    assert.equal(write(rows[1]), write(col.new("integer", { 1, 3, 5 })))
    assert.has_error(function() write(col.new("integer", { 1, 6 })) end, "writer:columns: row 6 out of range")
  end)

  it("writes columns in a given order; repeated strings and numbers come out as the first time", function()
    local col = core.column
    local texts = { "plain", "x,y", 'say "hi"', " lead", "a;\r\nb" }
    local names, sizes, times = col.new("string"), col.new("number"), col.new("integer")
    local want = {}
    for i = 1, 3000 do
      local t = texts[i % #texts + 1]
      -- 700 distinct numbers against a cache of 64 slots: hits, misses and evictions
      local v = (i % 7 == 0) and (i % 700) * 64.0 or (i % 700) / 8 + 0.1
      local ns = 1736405443000000000 + i * 1001
      if i % 11 == 0 then ns = nil end
      if i % 13 == 0 then v = nil end
      names:push(t)
      sizes:push(v)
      times:push(ns)
      want[i] = { t, v or "0.0", ns }
    end
    local order = col.new("integer")
    for i = 3000, 1, -1 do order:push(i) end
    local p = dir .. "/cols.csv"
    local w = assert(csv.writer(p))
    assert.equal(3000, w:columns({ names, "r,0", { sizes, missing = "0.0" }, { times, scale = 6, missing = "" } }, order))
    assert(w:close())
    assert.truthy(h.read(p):find('\n" lead","r,0",', 1, true)) -- the reader trims it, as Ascend files need
    local r = assert(csv.open(p))
    for k = 1, 3000 do
      local i = 3001 - k
      local rec = r:next()
      assert.equal(want[i][1] == " lead" and "lead" or want[i][1], rec[1])
      assert.equal("r,0", rec[2])
      if type(want[i][2]) == "number" then
        assert.equal(want[i][2], tonumber(rec[3]))
        assert.truthy(rec[3]:find("[.e]"), rec[3]) -- whole numbers keep a ".0"
      else
        assert.equal("0.0", rec[3])
      end
      if want[i][3] then
        assert.equal(("%d.%06d"):format(want[i][3] // 1000000, want[i][3] % 1000000):gsub("0+$", ""), rec[4])
      else
        assert.equal("", rec[4])
      end
    end
    assert.is_nil(r:next())
    r:close()
  end)

  it("leaves no file behind when a writer is dropped without close", function()
    local p = dir .. "/never.csv"
    local w = assert(csv.writer(p))
    w:row("a")
    w = nil -- luacheck: ignore
    collectgarbage()
    collectgarbage()
    assert.same({}, core.fs.list(dir))
  end)
end)

describe("csv.read with beside", function()
  local COLS = { ["Name"] = "string", ["Type"] = "string", ["Start Time(us)"] = "us", ["Duration(us)"] = "number" }

  local function same(a, b)
    assert.equal(a.n, b.n)
    for name in pairs(COLS) do
      for i = 1, a.n do assert.equal(a.columns[name][i], b.columns[name][i]) end
    end
  end

  it("reads the same columns on its thread while the function runs, which may intern meanwhile", function()
    local plain = assert(csv.read(KERNELS, { columns = COLS }))
    local ran, names
    local r = assert(csv.read(KERNELS, { columns = COLS, beside = function()
      -- a read of the same file here interns the same names into the shared table at once
      names = assert(csv.read(KERNELS, { columns = { ["Name"] = "string" } })).columns["Name"]
      ran = true
    end }))
    assert.is_true(ran)
    same(plain, r)
    -- the ids are the shared table's: grouping the two columns together finds one group a name
    local _, values = core.column.group(core.column.concat({ names, r.columns["Name"] }))
    local _, alone = core.column.group(names)
    assert.equal(#alone, #values)
  end)

  it("raises the function's error once the read is done, and reports the file's own error", function()
    assert.error_matches(function()
      csv.read(KERNELS, { columns = COLS, beside = function() error("beside failed", 0) end })
    end, "beside failed")
    local ran = false
    local r, err = csv.read(KERNELS .. ".missing", { columns = COLS, beside = function() ran = true end })
    assert.is_nil(r)
    assert.truthy(err:find("kernel_details.csv.missing", 1, true))
    assert.is_true(ran)
    assert.error_matches(function() csv.read(KERNELS, { columns = COLS, beside = 5 }) end, "beside: a function")
  end)
end)
