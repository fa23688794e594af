local core = require "ascope_core"
local h = require "helper"
local lc = core.logclass

-- string.find's answer as {start, end, first capture or the match}, or nil
local function lua_find(s, p, init)
  local r = table.pack(string.find(s, p, init))
  if not r[1] then return nil end
  return { r[1], r[2], r.n >= 3 and r[3] or s:sub(r[1], r[2]) }
end

local function c_find(s, p, init)
  local a, b, cap = lc.find(s, p, init)
  if a == false then return false end
  if not a then return nil end
  return { a, b, cap }
end

describe("logclass.find (Lua patterns in linear time)", function()
  it("gives string.find's match and first capture on the rules' patterns", function()
    local cases = {
      { "device_id=0, task_id= 12, x", "task_id[=:]%s*(%d+)" },
      { "Error happened, origin_op_name [Moe_V2], op", "origin_op_name %[([^%]]+)%]" },
      { "x errcode:(0x800000, 0", "(errcode:%(0x%x+)" },
      { "XEZ9999 EZ9999: y", "%f[%w](E[ZEILK]%d%d%d%d)%f[%W]" },
      { "[ERROR] GE(3975660,python):2024-06-01-10:00:05.123.456 [f.cc:1]77 msg",
        "^%[(%u+)%]%s+([%w_%-]+)%((%d+),([^)]*)%):(%d%d%d%d%-%d%d%-%d%d%-[%d:%.]+)%s*(.*)$" },
      { "[3977663]msg here", "^%[?(%d+)%]?%s*(.*)$" },
      { "fault kernel_name=Moe.V2-x_1 more", "fault kernel_name[=:]%s*([%w_%.%-]+)" },
      { "aaa", "a-" }, { "baaa", "a-$" }, { "abc", "" }, { "xa$b", "a$b" }, { "a]", "[]]" },
    }
    for _, c in ipairs(cases) do assert.same(lua_find(c[1], c[2]), c_find(c[1], c[2]), c[2]) end
  end)

  it("refuses what would need backtracking or is not regular, with the reason", function()
    for _, p in ipairs({ "topo.-timeout", "%d+%d", "%b()", "(a)%1", "()a", "a*%f[%w]", "[x" }) do
      local ok, why = lc.find("x", p)
      assert.is_false(ok, p)
      assert.is_string(why)
    end
  end)

  it("agrees with string.find on 20000 random patterns and subjects (an independent oracle)", function()
    math.randomseed(7)
    local atoms = { "a", "b", "1", "%d", "%a", "[ab]", "[^a]", ".", "%s", "_", "%w", "[%d_]" }
    local quants = { "", "", "", "*", "+", "-", "?" }
    local letters = { "a", "b", "1", "2", " ", "_", "x" }
    local compared, refused = 0, 0
    for _ = 1, 4000 do
      local parts = {}
      if math.random(5) == 1 then parts[1] = "^" end
      local opened = false
      for _ = 1, math.random(1, 5) do
        if not opened and math.random(6) == 1 then
          parts[#parts + 1] = "("
          opened = true
        end
        if math.random(12) == 1 then parts[#parts + 1] = "%f[%w]" end
        parts[#parts + 1] = atoms[math.random(#atoms)] .. quants[math.random(#quants)]
        if opened and math.random(3) == 1 then
          parts[#parts + 1] = ")"
          opened = false
        end
      end
      if opened then parts[#parts + 1] = ")" end
      if math.random(6) == 1 then parts[#parts + 1] = "$" end
      local p = table.concat(parts)
      for _ = 1, 5 do
        local s = {}
        for k = 1, math.random(0, 14) do s[k] = letters[math.random(#letters)] end
        s = table.concat(s)
        local init = math.random(1, #s + 1)
        local got = c_find(s, p, init)
        if got == false then
          refused = refused + 1
        else
          compared = compared + 1
          assert.same(lua_find(s, p, init), got, ("pattern %q subject %q init %d"):format(p, s, init))
        end
      end
    end
    assert.is_true(compared > 10000) -- most random patterns are in the subset
    assert.is_true(refused > 0)
  end)

  it("finds a whole word as the plog classifiers' former loop did (no letter or digit on either side)", function()
    local function code_find(msg, p)
      local s, e = msg:find(p)
      while s do
        if not msg:sub(s - 1, s - 1):match("%w") and not msg:sub(e + 1, e + 1):match("%w") then return s, e end
        s, e = msg:find(p, s + 1)
      end
    end
    math.randomseed(11)
    local atoms = { "a", "1", "%d", "[ab]", ".", "_", "%w" }
    local quants = { "", "", "*", "+", "-", "?" }
    local compared = 0
    for _ = 1, 2000 do
      local p = {}
      for k = 1, math.random(1, 3) do p[k] = atoms[math.random(#atoms)] .. quants[math.random(#quants)] end
      p = table.concat(p)
      local s = {}
      for k = 1, math.random(0, 12) do s[k] = ({ "a", "b", "1", " ", "_" })[math.random(5)] end
      s = table.concat(s)
      local a, b = lc.find(s, p, 1, true)
      if a ~= false then
        compared = compared + 1
        local x, y = code_find(s, p)
        assert.same({ x, y }, { a, b }, ("pattern %q subject %q"):format(p, s))
      end
    end
    assert.is_true(compared > 1000)
  end)

  it("stays linear on thousands of repeats of a pattern's words", function()
    -- each of these would make Lua's matcher scan to the end of the line from every start:
    -- O(n^2) steps, hours at this size; linear they take milliseconds
    local line = ("task_id=task_id task_id "):rep(200000) .. ("a"):rep(2000000)
    assert.is_nil(lc.find(line, "task_id[=:]%s*(%d+)"))
    assert.is_nil(lc.find(line, "%a+%d"))
    assert.is_nil(lc.find(line, "[%w_]+=%d"))
    assert.same({ #line + 2, #line + 10, "5" }, c_find(line .. " task_id=5", "task_id[=:]%s*(%d+)"))
  end)
end)

describe("logclass classifier and tally", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  local function classifier(rules, fields)
    return assert(lc.new({ literals = { "[ERROR]", "ras=" }, header = "^%[(%u+)%]%s+(%w+):%s*(.*)$", level = 1,
                           module = 2, rest = 3, strips = {}, error_level = "ERROR", error_prefix = "[ERROR]",
                           rules = rules, fields = fields or {} }))
  end

  it("counts, keeps capped examples and the earliest error time per group, writes every record", function()
    h.write(dir .. "/a.log", table.concat({
      "[INFO] RT: fine",
      "[ERROR] RT: disk full dev=3",
      "[ERROR] HW: bus error (a(b)c) dev=3",
      "[WARNING] RT: link ras=7 dev=4",
      "[ERROR] continuation without a module",
      "[ERROR] RT: nobody knows this dev=5",
      "[ERROR] RT: disk full again dev=3",
      "[ERROR] RT: last line without end of line dev=9",
    }, "\r\n"))
    local cl = classifier({
      { mode = "any", patterns = { "disk full" } },
      { mode = "any", patterns = { "%b()" } }, -- outside the linear subset: Lua matches it
      { mode = "any", any_level = true, patterns = { "ras=%d+" } },
      { mode = "word", patterns = { "HW" }, modules = { "HW" } },
    }, { { patterns = { "dev=(%d+)" } } })
    assert.same({ "%b()" }, cl:slow())
    local t = assert(lc.tally({ rules = 4, examples = 2, group_field = 1, record_fields = { 1 },
                                csv = { header = { "type", "text", "group", "file", "line", "time", "dev" },
                                        titles = { "disk", "paren", "ras", "hw", "unknown" }, files = { "a.log" } } }))
    assert.is_true(cl:scan(dir .. "/a.log", t, 1, 42))
    assert.same({ 2, 1, 1, 1, 3 }, t:counts())
    assert.same({ { file = 1, line = 2, text = "[ERROR] RT: disk full dev=3" },
                  { file = 1, line = 7, text = "[ERROR] RT: disk full again dev=3" } }, t:examples(1))
    -- a line the layout does not parse is an error line when it starts with the error level
    assert.same({ 5, 6 }, { t:examples(5)[1].line, t:examples(5)[2].line })
    assert.same({ records = 8, cut = 0, groups_dropped = 0 }, t:stats())
    assert.is_nil(core.fs.stat(dir .. "/out")) -- the records wait in a nameless spool until saved
    assert.is_true(t:save(dir .. "/out/rec.csv"))
    assert.is_true(t:save(dir .. "/again/rec.csv")) -- the spool stays: a second save, the same bytes
    assert.equal(h.read(dir .. "/out/rec.csv"), h.read(dir .. "/again/rec.csv"))
    assert.same({ "rec.csv" }, core.fs.list(dir .. "/out")) -- no temporary file left beside it
    local rows = h.csv_rows(dir .. "/out/rec.csv")
    assert.equal(8, #rows)
    assert.same({ type = "paren", text = "[ERROR] HW: bus error (a(b)c) dev=3", group = "3", file = "a.log", line = "3",
                  time = "", dev = "3" }, rows[2])
    assert.same({ "hw", "3" }, { rows[3].type, rows[3].line })
    assert.same({ "unknown", "42", "" }, { rows[5].type, rows[5].group, rows[5].dev }) -- the file's group
    assert.same({ "last line without end of line dev=9" }, { rows[8].text:sub(13) })
  end)

  it("looks at a line longer than its buffer through its head, in bounded memory, and counts on", function()
    local f = assert(io.open(dir .. "/big.log", "wb"))
    f:write("[ERROR] RT: disk full at the head ", ("x"):rep(9 * 1024 * 1024), " disk full at the tail\n")
    f:write("[ERROR] RT: disk full after it\n")
    f:write("[ERROR] RT: ", ("y"):rep(100000), " disk full beyond the head\n")
    f:close()
    local cl = classifier({ { mode = "any", patterns = { "disk full" } } })
    local t = assert(lc.tally({ rules = 1, examples = 3 }))
    assert.is_true(cl:scan(dir .. "/big.log", t, 1))
    assert.same({ 2, 1 }, t:counts()) -- the third line's words are beyond its first 64 KiB
    local ex = t:examples(1)
    assert.same({ 1, 2 }, { ex[1].line, ex[2].line })
    assert.equal(4096 + 3, #ex[1].text) -- an example keeps 4 KiB and an ellipsis
    assert.equal("…", ex[1].text:sub(-3))
    assert.equal(2, t:stats().cut)
    assert.equal(3, t:examples(2)[1].line)
  end)

  it("names the file it cannot read, and a line layout outside the subset", function()
    local cl = classifier({})
    local t = assert(lc.tally({ rules = 0 }))
    local ok, err = cl:scan(dir .. "/missing.log", t, 1)
    assert.is_nil(ok)
    assert.truthy(err:find("missing.log", 1, true))
    local none, lerr = lc.new({ header = "^(%w+)x", rules = {} })
    assert.is_nil(none)
    assert.truthy(lerr:find("line layout pattern", 1, true))
  end)
end)

describe("logclass scan on several threads", function()
  local dir, path, want -- one log for every case (it takes a while to write under valgrind)

  -- A log (1.3 MB) whose blocks end in awkward places: lines of random lengths with multibyte
  -- UTF-8 (a block's end falls inside characters), CRLF, a line longer than a block, one longer
  -- than the 64 KiB a line is looked at through, a run of tiny error lines (more records than a
  -- block's worker keeps: the reading thread classifies the rest itself) and no end of line at
  -- the end. Returns the path and the number of lines of each kind written.
  local function awkward_log()
    math.randomseed(23)
    local file = dir .. "/awkward.log"
    local f = assert(io.open(file, "wb"))
    local counts = { disk = 0, tiny = 0, lines = 0 }
    local size = 0
    local function put(l, eol)
      eol = eol or "\n"
      f:write(l, eol)
      size = size + #l + #eol
      counts.lines = counts.lines + 1
    end
    local function disk(l, eol)
      put(l, eol)
      counts.disk = counts.disk + 1
    end
    local function mixed(bytes) -- lines of random lengths and kinds
      local stop = size + bytes
      while size < stop do
        if math.random(3) == 1 then
          disk(("[ERROR] RT: disk full dev=%d task=%d 设备%s"):format(math.random(0, 9), math.random(0, 99),
            ("é中"):rep(math.random(0, 60))), math.random(4) == 1 and "\r\n" or "\n")
        else
          put(("[INFO] RT: fine %s"):format(("ok "):rep(math.random(0, 50))))
        end
      end
    end
    mixed(300 * 1024)
    for _ = 1, 20000 do put("[ERROR]") end -- 160 KB of the lines with the most record words
    counts.tiny = 20000
    mixed(200 * 1024)
    disk("[ERROR] RT: disk full " .. ("长"):rep(100000) .. " disk full dev=1") -- longer than a block
    mixed(100 * 1024)
    disk("[ERROR] RT: disk full " .. ("长"):rep(30000) .. " dev=2") -- longer than the 64 KiB looked at
    mixed(200 * 1024)
    f:write("[ERROR] RT: disk full at the end dev=4")
    counts.disk, counts.lines = counts.disk + 1, counts.lines + 1
    f:close()
    return file, counts
  end
  setup(function()
    dir = h.tmpdir()
    path, want = awkward_log()
  end)
  teardown(function() h.cleanup(dir) end)

  -- every rule and field matches a tiny line: the most record words per line
  local rules, fields = {}, {}
  for i = 1, 6 do rules[i] = { mode = "any", patterns = { "ERR" } } end
  rules[7] = { mode = "any", patterns = { "disk full" } }
  for i = 1, 6 do fields[i] = { patterns = { "(E)R" } } end
  fields[7] = { patterns = { "dev=(%d+)" } }
  fields[8] = { patterns = { "task=(%d+)" } }

  -- everything a scan tells: counts, examples, first times, stats, the key calls and the CSV
  local function scan(opts)
    local cl = assert(lc.new({ literals = { "[ERROR]" }, header = "^%[(%u+)%]%s+(%w+):%s*(.*)$", level = 1,
                               module = 2, rest = 3, time = 2, strips = {}, error_level = "ERROR",
                               error_prefix = "[ERROR]", rules = rules, fields = fields }))
    local header = { "type", "text", "group", "file", "line", "time" }
    local titles = {}
    for i = 1, 8 do
      header[#header + 1] = "f" .. i
      titles[i] = "t" .. i
    end
    local t = assert(lc.tally({ rules = 7, examples = 5, group_field = 7, record_fields = { 1, 2, 3, 4, 5, 6, 7, 8 },
                                key_fields = { 8 }, csv = { header = header, titles = titles, files = { "a" } } }))
    local keys = {}
    assert.is_true(cl:scan(path, t, 1, 77, function(g, line, time, task)
      keys[#keys + 1] = table.concat({ g, line, time, task }, ",")
    end, opts))
    local ex = {}
    for slot = 1, 8 do ex[slot] = t:examples(slot) end
    assert.is_true(t:save(dir .. "/rec.csv"))
    return { counts = t:counts(), examples = ex, first = t:first(), stats = t:stats(), keys = keys,
             csv = h.read(dir .. "/rec.csv") }
  end

  it("tallies exactly what one thread tallies, whatever the blocks and threads", function()
    for _, case in ipairs({ { 128 * 1024, { 2, 3, 4 } }, { 300 * 1024, { 2 } } }) do
      local block = case[1]
      local one = scan({ threads = 1, block = block })
      -- an independent count: the generator's
      assert.equal(want.disk, one.counts[7])
      assert.equal(want.tiny, one.counts[1]) -- a header line's rules look at its message only
      for _, threads in ipairs(case[2]) do
        local many = scan({ threads = threads, block = block })
        assert.equal(#one.csv, #many.csv, ("%d threads, block %d"):format(threads, block))
        assert.is_true(one.csv == many.csv, ("%d threads, block %d: the CSV differs"):format(threads, block))
        local csv = one.csv
        one.csv, many.csv = nil, nil
        assert.same(one, many)
        one.csv = csv
      end
    end
  end)

  it("numbers every line as one thread does: the last line is the file's last", function()
    local got = scan({ threads = 2, block = 128 * 1024 })
    local rows = {}
    for line in got.csv:gmatch("[^\n]+") do rows[#rows + 1] = line end
    local last = ("t7,[ERROR] RT: disk full at the end dev=4,4,a,%d,RT,E,E,E,E,E,E,4,"):format(want.lines)
    assert.equal(last, rows[#rows])
  end)

  it("refuses threads below 1 and blocks out of range", function()
    local cl = assert(lc.new({ header = "^x", rules = {} }))
    local t = assert(lc.tally({ rules = 0 }))
    assert.has_error(function() cl:scan(path, t, 1, nil, nil, { threads = 0 }) end)
    assert.has_error(function() cl:scan(path, t, 1, nil, nil, { block = 1000 }) end)
    assert.has_error(function() cl:scan(path, t, 1, nil, nil, { block = 64 * 1024 * 1024 }) end)
  end)
end)
