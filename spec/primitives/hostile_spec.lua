-- Hostile input against the C primitives: sizes that overflow, spans outside a file, JSON that
-- only yajl's grammar tells apart, times at the ends of int64, empty columns, FIFOs, hostile
-- SQLite schemas and files the disk refuses. Each case names the expected outcome; run under
-- `make sanitize` the same cases catch undefined behaviour and out-of-bounds reads.
local core = require "ascope_core"
local h = require "helper"
local bin, json = core.bin, core.json

local function npy(header_dict, data)
  local header = header_dict .. (" "):rep(64 - 10 - #header_dict - 1) .. "\n"
  return "\147NUMPY\1\0" .. string.pack("<I2", #header) .. header .. (data or "")
end

describe("hostile binary input", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("refuses .npy shapes whose element or byte count overflows, and malformed shapes", function()
    local cases = {
      { "{'descr': '<i8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "shape in .npy header is too large" },
      { "{'descr': '<i8', 'fortran_order': False, 'shape': (2305843009213693952,), }", "shape in .npy header is too large" },
      { "{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", "shape in .npy header is too large" },
      { "{'descr': '<i4', 'fortran_order': False, 'shape': (-1,), }", "bad shape in .npy header" },
      { "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3", "bad shape in .npy header" },
      { "{'descr': '<", "unsupported dtype <" },
    }
    for _, c in ipairs(cases) do
      local v = bin.from_string(npy(c[1], string.pack("<i8", 7)))
      local a, err = v:npy()
      assert.is_nil(a, c[1])
      assert.truthy(err:find(c[2], 1, true), err)
    end
    -- the healthy case next to them: a shape that fits is read
    local ok = assert(bin.from_string(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }",
      string.pack("<i8", 7))):npy())
    assert.same({ 7 }, ok.data:totable())
  end)

  it("keeps every view, array and struct read inside the file whatever sizes Lua passes", function()
    local v = bin.from_string(string.pack("<i4i4i4i4", 1, 2, 3, 4))
    local bad = {
      function() return v:sub(0, -5) end,                      -- a negative window size
      function() return v:sub(8, 9) end,
      function() return v:sub(-17) end,
      function() return v:bytes(4, math.maxinteger) end,
      function() return v:read("i64", 12) end,
      function() return v:read("i32", math.mininteger) end,
      function() return v:array("i32", 0, math.maxinteger // 2, 4) end, -- count x stride overflows
      function() return v:array("i32", 0, 5) end,
      function() return v:struct(0, { size = 16, fields = { x = { 0, "i32", -1 } } }) end,
      function() return v:struct(0, { size = 16, fields = { x = { 0, "i32", math.maxinteger } } }) end,
      function() return v:struct(4, { size = 16, fields = { x = { 12, "i32" } } }) end,
      function() return v:structs(0, 2, { size = -8, fields = { x = { 0, "i32" } } }) end,
      function() return v:structs(0, math.maxinteger, { size = 8, fields = { x = { 0, "i32" } } }) end,
      function() return v:structs(0, 3, { size = 8, fields = { x = { 0, "i32" } } }) end,
      function() return v:protobuf({}, 0, -2) end,
    }
    for i, f in ipairs(bad) do
      local ok, err = pcall(f)
      assert.is_false(ok, "case " .. i)
      assert.truthy(tostring(err):find("(string)", 1, true), "case " .. i .. ": " .. tostring(err))
    end
    -- the same calls with sizes that fit
    assert.equal(8, #v:sub(8))
    assert.equal(4, v:read("i32", -4))
    assert.same({ 1, 2, 3, 4 }, v:array("i32", 0, 4):totable())
    assert.same({ { x = 1 }, { x = 3 } }, v:structs(0, 2, { size = 8, fields = { x = { 0, "i32" } } }))
    assert.same({ x = { 2, 3, 4 } }, v:struct(4, { size = 12, fields = { x = { 0, "i32", 3 } } }))
  end)

  it("refuses a FIFO instead of waiting for a writer, in every reader", function()
    local fifo = dir .. "/trace_view.json"
    assert(os.execute("mkfifo " .. fifo))
    local function refused(what, r, err)
      assert.is_nil(r, what)
      assert.truthy(err:find("not a regular file", 1, true), what .. ": " .. tostring(err))
      assert.truthy(err:find(fifo, 1, true), what)
    end
    refused("json.scan", json.scan(fifo, { fields = { name = "string" } }))
    refused("json.load", json.load(fifo))
    refused("csv.read", core.csv.read(fifo, { columns = { a = "string" } }))
    refused("csv.open", core.csv.open(fifo))
    refused("bin.open", bin.open(fifo))
    refused("db.open", core.db.open(fifo))
    refused("fs.grep", core.fs.grep(fifo, { "x" }))
  end)
end)

describe("hostile JSON", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  local function scan(text)
    local p = dir .. "/t.json"
    h.write(p, text)
    return json.scan(p, { fields = { name = "string", ts = "us" } })
  end

  it("rejects what yajl rejects, also inside values no field reads", function()
    local bad = {
      '[{"a":[1,,2]}]', '[{"a":{"b" 1}}]', '[{"a":"x\1y"}]', '[{"a":"\\q"}]', '[{"a":1.}]', '[{"a":-}]',
      '[{"a":01}]', '[{"a":[1 2]}]', '[{"a":{"b":1,}}]', '[{"a":tru}]', '[{"a":"\\u12G4"}]', '[{"a":[}]]',
      '[1,]', '{"x":[1,2,],"traceEvents":[]}', '[{"a":1e}]', '[{"a":.5}]', '[{"a":+1}]', '[{"a":[1]]}]',
      '[{"name":"\\x"}]', '[{"a":{"b":{"c":nul}}}]', '[{"a":"\t"}]',
      ' \239\187\191[]', '[\239\187\191]', -- a byte order mark only at the very start
      '[{"a":"' .. ("x"):rep(70) .. "\1" .. ("y"):rep(60) .. '"}]',  -- control characters in a long string,
      '[{"a":"' .. ("x"):rep(200) .. "\31" .. '"}]', '[{"a":"' .. ("x"):rep(9) .. "\n" .. '"}]', -- wherever they sit
    }
    for _, text in ipairs(bad) do
      assert.is_nil(json.decode(text), "yajl accepts " .. text) -- the oracle agrees it is invalid
      local r, err = scan(text)
      assert.is_nil(r, text)
      assert.truthy(err:find("invalid JSON", 1, true), text .. ": " .. tostring(err))
    end
  end)

  it("accepts what yajl accepts, including a UTF-8 byte order mark before the trace", function()
    local good = {
      '[{"a":[1,{"b":[true,false,null]},"s\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9"],"n":-0.5e+3,"name":"x","ts":"1.5"}]',
      '{"traceEvents":[{"name":"x","ts":2}],"x":{"y":[]},"z":0}',
      '\239\187\191[{"name":"x","ts":"3"}]',
      ' [ { "name" : "x" , "ts" : 4 } , 5 , [ ] ] ',
      '[{"name":"x","a":"' .. (" \127\255~"):rep(40) .. '"}]', -- 0x20, DEL and bytes above 0x7F are no control characters
      '\f[\v{"name":"x","ts":5,"a":[\f1\v]}\f]\v', -- yajl's white space includes form feed and vertical tab
    }
    for _, text in ipairs(good) do
      local r, err = scan(text)
      assert.is_not_nil(r, text .. ": " .. tostring(err))
      assert.equal(1, r.n, text)
      assert.equal("x", r.columns.name[1])
    end
  end)

  it("says what is wrong with valid JSON that is no trace (a bare null, nesting deeper than 256)", function()
    local r, err = scan("null")
    assert.is_nil(r)
    assert.truthy(err:find("no event array", 1, true), err)
    assert.falsy(err:find("invalid JSON", 1, true))
    r, err = scan("[" .. ("["):rep(300) .. ("]"):rep(300) .. "]")
    assert.is_nil(r)
    assert.truthy(err:find("nesting deeper than 256 levels", 1, true), err)
    local v, derr = json.decode(("["):rep(300) .. ("]"):rep(300))
    assert.is_nil(v)
    assert.truthy(derr:find("nesting deeper than 255 levels is not supported", 1, true), derr)
    -- 250 levels are fine
    r = assert(scan('[{"name":"x","a":' .. ("["):rep(250) .. ("]"):rep(250) .. "}]"))
    assert.equal(1, r.n)
  end)

  it("loads a document whole only up to 256 MiB, and names the end of one cut short", function()
    local p = dir .. "/big.json"
    local f = assert(io.open(p, "wb"))
    assert(f:seek("set", 256 * 1048576)) -- sparse: a byte past 256 MiB, nothing read to refuse it
    f:write("]")
    f:close()
    local v, err = json.load(p)
    assert.is_nil(v)
    assert.equal(p .. " (byte 268435456): larger than 256 MiB: not a document this reads whole (a trace is "
      .. "scanned, not loaded)", err)
    -- a document that ends inside itself is named at its end, where the parse stopped
    h.write(dir .. "/cut.json", '{"rank_id": 0, "trunc')
    v, err = json.load(dir .. "/cut.json")
    assert.is_nil(v)
    assert.truthy(err:find(dir .. "/cut.json:1:22 (byte 21): invalid JSON", 1, true), err)
  end)
end)

describe("hostile numbers", function()
  it("saturates interval arithmetic at the ends of int64 instead of wrapping", function()
    local iv = core.interval
    local big, small = math.maxinteger - 10, math.mininteger + 10
    local s = iv.union({ small }, { big })
    assert.equal(math.maxinteger, s:total()) -- the true length does not fit: it saturates
    local st = s:stats()
    assert.equal(math.maxinteger, st.max)
    local d = iv.from_durations({ big }, { 1000 }) -- start + duration saturates
    local a, b = d:get(1)
    assert.equal(big, a)
    assert.equal(math.maxinteger, b)
    assert.equal(10, d:total())
    -- within range nothing changes
    assert.equal(30, iv.union({ 0, 100 }, { 10, 120 }):total())
    local ix = core.match.index({ 1 }, { big }, { 1000 })
    assert.is_not_nil(ix)
  end)

  it("handles empty columns everywhere without touching a NULL pointer", function()
    local column = core.column
    local e = column.new("integer")
    assert.equal(0, #e:take({}))
    assert.equal(0, #e:order())
    assert.equal(0, #column.concat({ e, column.new("integer") }))
    assert.equal(0, core.interval.union(e, e):total())
    local dir = h.tmpdir()
    local w = assert(json.writer(dir .. "/e.json"))
    w:write("")
    assert.equal(0, w:rows({ "", { e } }))
    assert(w:close())
    local cw = assert(core.csv.writer(dir .. "/e.csv"))
    cw:row("")
    assert.equal(0, cw:columns({ { e } }))
    assert(cw:close())
    assert.equal("\n", h.read(dir .. "/e.csv"))
    assert.equal(0, #core.par.decode(core.par.encode(e)))
    h.cleanup(dir)
  end)
end)

describe("hostile SQLite files", function()
  local DB = h.real .. "/msinsight_pytorch_db_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"

  it("does not count a view as a table, so a recursive view is never run", function()
    local db = assert(core.db.open(h.fixtures .. "/hostile/view_task.db"))
    assert.is_false(db:has_table("TASK"))
    assert.is_true(db:has_table("STRING_IDS"))
    db:close()
    local tl, err = require("ascope.ascend.timeline").read(h.fixtures .. "/hostile/view_task.db")
    assert.is_nil(tl)
    assert.truthy(err:find("no TASK table", 1, true), err)
  end)

  it("stops a query that runs past its step budget", function()
    local db = assert(core.db.open(DB, { max_steps = 200000 }))
    local r, err = db:query("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
    assert.is_nil(r)
    assert.truthy(err:find("query stopped", 1, true), err)
    assert.truthy(err:find(DB, 1, true))
    -- the real tables are read under the same budget
    local t = assert(db:query("SELECT count(*) AS n FROM TASK"))
    assert.equal(550, t.columns.n[1])
    db:close()
  end)

  it("names a copy cut short as such, not as a database without its tables", function()
    local dir = h.tmpdir()
    local whole = h.read(DB)
    assert.equal(679936, #whole) -- 166 pages of 4096 bytes, as its header gives
    h.write(dir .. "/cut.db", whole:sub(1, 200000))
    local db, err = core.db.open(dir .. "/cut.db")
    assert.is_nil(db)
    assert.equal(dir .. "/cut.db (byte 200000): the file is cut short: 200000 bytes of the 679936 its header gives", err)
    -- and a memory run names it for that rank
    local rank = dir .. "/run/r0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    h.write(rank .. "/ascend_pytorch_profiler_0.db", whole:sub(1, 200000))
    h.write(dir .. "/run/r0_ascend_pt/profiler_info_0.json", '{"rank_id": 0}')
    local r = assert(require("ascope.memory").parse(dir .. "/run", {}))
    assert.equal(1, #r.failed)
    assert.equal(rank .. "/ascend_pytorch_profiler_0.db (byte 200000): the file is cut short: 200000 bytes of the "
      .. "679936 its header gives", r.failed[1].reason)
    h.cleanup(dir)
  end)

  it("names a schema it cannot read, not a table missing", function()
    local dir = h.tmpdir()
    local whole = h.read(DB)
    -- the first page past its 100-byte header holds the schema
    h.write(dir .. "/bad.db", whole:sub(1, 100) .. string.rep("\255", 3996) .. whole:sub(4097))
    local db = assert(core.db.open(dir .. "/bad.db"))
    local has, err = db:has_table("TASK")
    assert.is_nil(has)
    assert.equal(dir .. "/bad.db: cannot read the schema: database disk image is malformed", err)
    db:close()
    local tl, terr = require("ascope.ascend.timeline").read(dir .. "/bad.db")
    assert.is_nil(tl)
    assert.equal(err, terr)
    h.cleanup(dir)
  end)

  it("names a write cut off (a hot -journal beside the file), which a read-only open cannot roll back", function()
    local db = h.fixtures .. "/hostile/hot.db"
    local before = h.read(db .. "-journal")
    local tl, err = require("ascope.ascend.timeline").read_db(db)
    assert.is_nil(tl)
    assert.equal(db .. ": a write to it was cut off: the -journal beside it must be rolled back before it can be read, "
      .. "and it is opened read-only (open a copy of its folder)", err)
    assert.equal(before, h.read(db .. "-journal")) -- and nothing beside it was touched
  end)

  it("reads a WAL database without making a -wal or -shm beside it, whatever its folder's name", function()
    local dir = h.tmpdir()
    local whole = h.read(DB)
    -- header bytes 18-19 = 2: the file is in WAL mode (as PRAGMA journal_mode=WAL leaves it);
    -- SQLite would read it through a -shm index made beside it, and fail where it cannot
    local folder = dir .. "/d%41 ?#&x" -- as a URI: dA, a query, a fragment
    h.write(folder .. "/p.db", whole:sub(1, 18) .. "\2\2" .. whole:sub(21))
    local db = assert(core.db.open(folder .. "/p.db"))
    assert.is_true(db:has_table("TASK"))
    local plain = assert(core.db.open(DB))
    local sql = "SELECT COUNT(*) AS n, SUM(startNs % 1000) AS s FROM TASK"
    local plain_sum = plain:query(sql).columns.s:totable()
    assert.same(plain_sum, db:query(sql).columns.s:totable())
    db:close()
    plain:close()
    assert.same({ "p.db" }, core.fs.list(folder))
    -- an absolute path written with a doubled first slash is the same file, not a URI's host
    assert(folder:sub(1, 1) == "/", folder)
    local doubled = assert(core.db.open("/" .. folder .. "/p.db"))
    assert.same(plain_sum, doubled:query(sql).columns.s:totable())
    doubled:close()
    h.cleanup(dir)
  end)

  it("reads the writes a WAL database's -wal holds, which its file does not", function()
    -- hostile/wal_pending.db: row 1 checkpointed into the file, row 2 committed to the -wal only
    local dir = h.tmpdir()
    h.copy(h.fixtures .. "/hostile/wal_pending.db", dir .. "/w.db")
    h.copy(h.fixtures .. "/hostile/wal_pending.db-wal", dir .. "/w.db-wal")
    local db = assert(core.db.open(dir .. "/w.db"))
    assert.same({ "in the file", "in the wal only" }, assert(db:query("SELECT s FROM T ORDER BY x")).columns.s:totable())
    db:close()
    -- through a link from another folder: the -wal read is the one beside the link's target
    os.execute(("mkdir -p %s/l && ln -s %s/w.db %s/l/link.db"):format(dir, dir, dir))
    local linked = assert(core.db.open(dir .. "/l/link.db"))
    assert.same({ "in the file", "in the wal only" }, assert(linked:query("SELECT s FROM T ORDER BY x")).columns.s:totable())
    linked:close()
    h.cleanup(dir)
  end)

  it("opens the path as a file name, never as a URI", function()
    local dir = h.tmpdir()
    h.copy(DB, dir .. "/d%41/p.db") -- as a URI, d%41 would mean dA
    h.write(dir .. "/dA/p.db", "not a database at all, but 16+ bytes long")
    local db = assert(core.db.open(dir .. "/d%41/p.db"))
    assert.is_true(db:has_table("TASK"))
    db:close()
    h.cleanup(dir)
  end)
end)

describe("hostile disks", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  -- the writer inside a shell that limits file size: writes past 2048 bytes fail with EFBIG
  local function limited(script)
    local p = dir .. "/w.lua"
    h.write(p, script)
    local cmd = ("cd %s && sh -c 'trap \"\" XFSZ; ulimit -f 4; exec %s run w.lua' >out 2>err"):format(dir, h.bin)
    local _, _, code = os.execute(cmd)
    return code, h.read(dir .. "/out"), h.read(dir .. "/err")
  end

  local function leftovers()
    local names = {}
    for _, n in ipairs(core.fs.list(dir .. "/o") or {}) do names[#names + 1] = n end
    return names
  end

  it("reports a full disk at close for every writer, naming the file, and leaves nothing behind", function()
    local code, out = limited([[
      local core = require "ascope_core"
      local big = ("x"):rep(5000)
      local f = assert(core.fs.create("o/a.txt")); f:write(big); print(f:close())
      print(core.fs.write("o/b.txt", big))
      local c = assert(core.csv.writer("o/c.csv")); c:row(big); print(c:close())
      local j = assert(core.json.writer("o/d.json")); j:write(big); print(j:close())
      local w = require("ascope.report.writer").open("o/e.md"); w:write(big); print(w:close())
      local s = assert(core.fs.create("o/small.txt")); s:write("fits"); print(s:close())
    ]])
    assert.equal(0, code)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal(6, #lines, out)
    for i, name in ipairs({ "a.txt", "b.txt", "c.csv", "d.json", "e.md" }) do
      assert.truthy(lines[i]:find("o/" .. name .. ": cannot write: File too large", 1, true), lines[i])
    end
    assert.equal("true", lines[6])
    assert.same({ "small.txt" }, leftovers()) -- no half file, no temporary file
  end)

  it("removes the temporary files still open when interrupted", function()
    for _, sig in ipairs({ "INT", "TERM" }) do
      h.write(dir .. "/w.lua", ([[
        local core = require "ascope_core"
        local f = assert(core.fs.create("o/a.txt")); f:write("partial")
        local c = assert(core.csv.writer("o/b.csv")); c:row("partial")
        local n = 0
        for _, name in ipairs(core.fs.list("o")) do if name:find(".tmp-", 1, true) then n = n + 1 end end
        print(n)
        io.stdout:flush()
        io.popen("kill -%s $PPID"):close() -- the signal arrives while both files are open
        local t = os.clock()
        while os.clock() - t < 5 do end
        print("survived")
      ]]):format(sig))
      local _, _, code = os.execute(("cd %s && %s run w.lua >out 2>err"):format(dir, h.bin))
      assert.equal(sig == "INT" and 130 or 143, code, sig .. ": " .. h.read(dir .. "/err"))
      assert.equal("2\n", h.read(dir .. "/out"), sig) -- both were open as temporary files, then it died
      assert.same({}, leftovers(), sig)
    end
  end)

  it("ends the workers with their parent, and they remove their temporary files too", function()
    h.write(dir .. "/w.lua", [[
      local core = require "ascope_core"
      core.par.map({ 1, 2, 3 }, function(i)
        local f = assert(core.fs.create("o/x" .. i)); f:write("partial")
        local t = os.clock()
        while os.clock() - t < 20 do end
        assert(f:close())
      end, { jobs = 3 })
    ]])
    -- the parent alone is killed once the three workers have their files open
    local cmd = ("cd %s && { %s run w.lua & p=$!; n=0; while [ $n -lt 200 ] && [ $(ls o 2>/dev/null | wc -l) -lt 3 ]; do " ..
                 "sleep 0.05; n=$((n+1)); done; ls o | wc -l > during; kill -TERM $p; wait $p; echo $? > rc; sleep 0.5; " ..
                 "ps -eo args | grep -c '^%s run w.lua' > left; true; } 2>/dev/null"):format(dir, h.bin, h.bin)
    assert(os.execute(cmd))
    assert.equal("3", h.read(dir .. "/during"):match("%d+"))
    assert.equal("143", h.read(dir .. "/rc"):match("%d+"))
    assert.equal("0", h.read(dir .. "/left"):match("%d+")) -- no worker outlived the parent
    assert.same({}, leftovers())
  end)
end)
