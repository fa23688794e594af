local core = require "ascope_core"
local h = require "helper"
local fs, par = core.fs, core.par

describe("fs", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("counts the CPUs this process may use and caps workers by them", function()
    local cpus = fs.cpus()
    assert.truthy(cpus >= 1)
    local online = tonumber(io.popen("getconf _NPROCESSORS_ONLN"):read("a"))
    assert.truthy(cpus <= online)
    assert.equal(1, fs.workers(1))
    local w = fs.workers()
    assert.truthy(w >= 1 and w <= cpus)
    assert.truthy(fs.workers(1000) <= cpus)
    assert.has_error(function() fs.workers(0) end)
    -- a process bound to one CPU sees one, whatever the machine has
    if os.execute("command -v taskset > /dev/null 2>&1") then
      local script = dir .. "/cpus.lua"
      assert(fs.write(script, 'print(require("ascope_core").fs.cpus())'))
      local out = io.popen(("taskset -c 0 %s run %s 2>&1"):format(h.bin, script)):read("a")
      assert.equal("1\n", out)
    end
  end)

  it("takes a CPU that another process keeps busy for a taken one", function()
    local cpus = fs.cpus()
    local script = dir .. "/workers.lua"
    assert(fs.write(script, 'print(require("ascope_core").fs.workers())'))
    local pid = io.popen("timeout 10 sh -c 'while :; do :; done' > /dev/null 2>&1 & echo $!"):read("l")
    os.execute("sleep 0.3") -- the burner runs
    local busy = tonumber(io.popen(("%s run %s"):format(h.bin, script)):read("a"))
    os.execute("kill " .. pid)
    -- runnable at every look: one CPU fewer (one at least), however many the machine has
    assert.truthy(busy >= 1 and busy <= math.max(1, cpus - 1), ("%d of %d CPUs"):format(busy, cpus))
  end)

  it("walks folders depth first in name order and writes files atomically", function()
    assert(fs.write(dir .. "/b/2.txt", "two"))
    assert(fs.write(dir .. "/b/1.txt", "one"))
    assert(fs.write(dir .. "/a.txt", "a"))
    assert.same({ dir .. "/a.txt", dir .. "/b/1.txt", dir .. "/b/2.txt" }, fs.walk(dir))
    assert.same({ dir .. "/a.txt", dir .. "/b", dir .. "/b/1.txt", dir .. "/b/2.txt" }, fs.walk(dir, { dirs = true }))
    assert.same({ "a.txt", "b" }, fs.list(dir))
    assert.equal("two", h.read(dir .. "/b/2.txt"))
    assert.equal(3, fs.stat(dir .. "/b/2.txt").size)
    local none, err = fs.stat(dir .. "/missing")
    assert.is_nil(none)
    assert.truthy(err:find("missing", 1, true))
  end)

  it("gives the names that are neither file nor folder only when asked, so a walk lists a folder as fs.list does", function()
    assert(fs.write(dir .. "/b/1.txt", "one"))
    assert.is_true(os.execute(("mkfifo %s/b/fifo && ln -s %s/nowhere %s/b/dangling"):format(dir, dir, dir)))
    assert.same({ dir .. "/b/1.txt" }, fs.walk(dir))
    assert.same({ dir .. "/b", dir .. "/b/1.txt" }, fs.walk(dir, { dirs = true }))
    assert.same({ dir .. "/b", dir .. "/b/1.txt", dir .. "/b/dangling", dir .. "/b/fifo" },
      fs.walk(dir, { dirs = true, others = true }))
    assert.same({ "1.txt", "dangling", "fifo" }, fs.list(dir .. "/b"))
    -- and a tree holding them can still be removed
    assert.is_true(fs.remove_tree(dir .. "/b"))
    assert.is_nil(fs.stat(dir .. "/b"))
  end)

  it("remove_tree removes a link to a folder, not what it points at, and a tree deeper than a walk goes", function()
    assert(fs.mkdirs(dir .. "/keep"))
    h.write(dir .. "/keep/k.txt", "k")
    local deep = dir .. "/t" .. ("/d"):rep(70)
    assert(fs.mkdirs(deep))
    h.write(deep .. "/x.txt", "x")
    assert.is_true(os.execute(("ln -s %s/keep %s/t/link"):format(dir, dir)))
    assert.is_true(fs.remove_tree(dir .. "/t"))
    assert.is_nil(fs.stat(dir .. "/t"))
    assert.equal("k", h.read(dir .. "/keep/k.txt"))
    assert.is_true(fs.remove_tree(dir .. "/t")) -- nothing there: nothing to do
  end)
end)

describe("par.map", function()
  it("runs items in worker processes and returns results by index", function()
    local res, errs, nfail = par.map({ 1, 2, 3, 4, 5 }, function(x) return { x * x, tag = "t" .. x } end, { jobs = 3 })
    assert.equal(0, nfail)
    assert.same({}, errs)
    for i = 1, 5 do
      assert.equal(i * i, res[i][1])
      assert.equal("t" .. i, res[i].tag)
    end
  end)

  it("isolates a failing or crashing item and keeps the others", function()
    local res, errs, nfail = par.map({ "ok", "raise", "exit", "ok" }, function(x)
      if x == "raise" then error("bad rank file", 0) end
      if x == "exit" then os.exit(3) end
      return x
    end, { jobs = 2 })
    assert.equal(2, nfail)
    assert.equal("ok", res[1])
    assert.equal("ok", res[4])
    assert.equal("bad rank file", errs[2])
    assert.truthy(errs[3]:find("exited with code 3", 1, true))
  end)

  -- With more items than workers, a process forked when the map starts (the zygote) forks the
  -- workers, by default once the caller has grown by 32 MiB (spec/c/test_par.c checks that
  -- switch), here from the first (zygote_after_mb = 0); it reaps them and reports how they ended.
  local function stat_field(pattern)
    local f = assert(io.open("/proc/self/stat"))
    local v = f:read("l"):match(pattern)
    f:close()
    return v
  end
  local function busy(seconds)
    local stop = core.fs.clock() + seconds
    repeat until core.fs.clock() > stop
  end

  it("with more items than workers, reports a killed worker and keeps every other result in place", function()
    local caller = stat_field("^(%d+)")
    local items = {}
    for i = 1, 60 do items[i] = i end
    local res, errs, nfail = par.map(items, function(x)
      if x == 7 then
        if stat_field("^%d+ %b() %a (%d+)") == caller then error("forked by the caller, not the zygote", 0) end
        os.execute("kill -9 " .. stat_field("^(%d+)"))
      end
      if x == 9 then os.exit(4) end
      return x * 2
    end, { jobs = 3, zygote_after_mb = 0 })
    assert.equal(2, nfail)
    assert.truthy(errs[7]:find("killed by signal 9", 1, true), errs[7])
    assert.truthy(errs[9]:find("exited with code 4", 1, true), errs[9])
    for i = 1, 60 do
      if i ~= 7 and i ~= 9 then assert.equal(i * 2, res[i]) end
    end
  end)

  it("takes any number for zygote_after_mb and refuses anything else by name", function()
    for _, mb in ipairs({ 0 / 0, -5, 1e300, 0.5 }) do
      local res, _, nfail = par.map({ 1, 2, 3, 4 }, function(x) return x end, { jobs = 2, zygote_after_mb = mb })
      assert.same({ 0, 1, 2, 3, 4 }, { nfail, res[1], res[2], res[3], res[4] })
    end
    assert.has_error(function() par.map({ 1, 2, 3 }, tostring, { jobs = 2, zygote_after_mb = "lots" }) end,
      "par.map: zygote_after_mb must be a number, got a string")
  end)

  it("goes on forking workers itself when the process that forks them is gone", function()
    -- items 3 and 4 are the zygote's (as are 1 and 2); 3 kills it once 4 runs, which ends them
    -- both; 5 and 6 can only start after that, in workers the caller forks
    local caller = stat_field("^(%d+)")
    local mark = os.tmpname()
    os.remove(mark)
    local res, errs = par.map({ 1, 2, 3, 4, 5, 6 }, function(x)
      local parent = stat_field("^%d+ %b() %a (%d+)")
      if x == 4 then
        core.fs.write(mark, "running")
        busy(5)
        return "outlived the zygote"
      elseif x == 3 then
        if parent == caller then error("forked by the caller, not the zygote", 0) end
        local stop = core.fs.clock() + 120 -- item 4 starts when item 1 or 2 ends: slow under valgrind
        repeat until core.fs.stat(mark) or core.fs.clock() > stop
        if not core.fs.stat(mark) then error("item 4 never ran", 0) end
        busy(0.2) -- the zygote's reply for item 4 has reached the caller (see below)
        os.execute("kill -9 " .. parent)
        busy(5)
        return "outlived the zygote"
      end
      return { x = x, parent = parent }
    end, { jobs = 2, zygote_after_mb = 0 })
    os.remove(mark)
    assert.equal("worker stopped before finishing its item", errs[3])
    -- had the zygote died between forking item 4's worker and telling the caller, item 4 would
    -- have run again in a worker of the caller (its first worker ended with the zygote)
    if errs[4] then
      assert.equal("worker stopped before finishing its item", errs[4])
    else
      assert.equal("outlived the zygote", res[4])
    end
    assert.same({ 5, 6 }, { res[5].x, res[6].x })
    assert.same({ caller, caller }, { res[5].parent, res[6].parent })
  end)

  it("sends columns across, strings included", function()
    local res = par.map({ 1, 2 }, function(i)
      local c = core.column.new("string", { "x" .. i, "y", "x" .. i })
      c:push(nil)
      return { c = c, n = core.column.new("number", { 1.5 * i }) }
    end, { jobs = 2 })
    assert.same({ "x2", "y", "x2" }, res[2].c:totable())
    assert.equal(4, #res[2].c)
    assert.is_nil(res[2].c[4])
    assert.equal(res[2].c:id(1), res[2].c:id(3))
    assert.equal(3.0, res[2].n[1])
  end)

  it("sends results of many megabytes whole", function()
    local res = par.map({ 1, 2 }, function(i)
      local c = core.column.new("integer")
      for k = 1, 400000 do c:push(k * i) end -- 3.2 MB of values, written in blocks
      return { c = c, s = ("x"):rep(3 << 20) .. i }
    end, { jobs = 2 })
    assert.equal(400000, #res[2].c)
    assert.equal(800000, res[2].c[400000])
    assert.equal(3 * 2 ^ 20 + 1, #res[1].s)
    assert.equal("1", res[1].s:sub(-1))
  end)

  it("reports a result that cannot be sent as that item's error, after a partial write too", function()
    local res, errs, nfail = par.map({ 1, 2, 3 }, function(i)
      if i == 1 then return { f = print } end
      if i == 2 then return { ("y"):rep(3 << 20), print } end -- fails after a block was written
      return i
    end, { jobs = 2 })
    assert.equal(2, nfail)
    assert.equal("par: cannot send a function", errs[1])
    assert.equal("par: cannot send a function", errs[2])
    assert.equal(3, res[3])
  end)

  it("with here = true and a worker for every item, does the first item in the calling process", function()
    local seen = {}
    local function fn(x)
      seen[x] = true -- only the calling process's table is seen after the map
      if x == "c" then error("c failed", 0) end
      return x .. "!"
    end
    local res, errs = par.map({ "a", "b", "c" }, fn, { jobs = 3, here = true })
    assert.same({ "a!", "b!" }, res)
    assert.equal("c failed", errs[3])
    assert.same({ a = true }, seen)
    seen = {}
    par.map({ "a", "b" }, fn, { jobs = 2 }) -- without here: every item in a worker
    assert.same({}, seen)
    par.map({ "a", "b", "c" }, fn, { jobs = 2, here = true }) -- more items than jobs: all in workers
    assert.same({}, seen)
  end)

  -- A worker does item after item; it leaves after an item it could not finish (os.exit), one
  -- that grew it by 64 MiB, or when the items run out.
  local function pids(res)
    local seen, n = {}, 0
    for _, r in pairs(res) do
      if not seen[r.pid] then seen[r.pid], n = true, n + 1 end
    end
    return n
  end

  it("does item after item in one worker, a Lua error included, and balances the worker's stack", function()
    local items = {}
    for i = 1, 600 do items[i] = i end
    local res, errs, nfail = par.map(items, function(x)
      if x % 3 == 0 then error("item " .. x .. " failed", 0) end
      return { x = x, pid = stat_field("^(%d+)") }
    end, { jobs = 2 })
    assert.equal(200, nfail)
    assert.equal("item 600 failed", errs[600])
    assert.same({ 1, 599 }, { res[1].x, res[599].x })
    assert.equal(2, pids(res)) -- 600 items, 200 of them errors, in two processes
  end)

  it("replaces a worker that left, and with fresh = true or gc = false gives every item a process", function()
    local items = {}
    for i = 1, 30 do items[i] = i end
    local function fn(x)
      if x == 10 then os.exit(3) end
      return { pid = stat_field("^(%d+)") }
    end
    local res, errs, nfail = par.map(items, fn, { jobs = 2 })
    assert.equal(1, nfail)
    assert.truthy(errs[10]:find("exited with code 3", 1, true))
    -- the other worker may have done every item left while this one ended (slow under valgrind)
    assert.truthy(pids(res) >= 2 and pids(res) <= 3, pids(res))
    for _, o in ipairs({ { jobs = 2, fresh = true }, { jobs = 2, gc = false } }) do
      res = par.map(items, fn, o)
      assert.equal(29, pids(res))
    end
  end)

  it("starts a new worker after an item that grew it by 64 MiB", function()
    -- A worker grows by the pages it adds to what it was forked with. Freed memory still mapped
    -- in the caller (a long test run leaves much of it) may take item 1's string without a new
    -- page, and then the worker has not grown: so the map runs in a fresh process.
    local tmp = h.tmpdir()
    local script = tmp .. "/grow.lua"
    assert(fs.write(script, [[
      local core = require "ascope_core"
      local function pid()
        local f = assert(io.open("/proc/self/stat"))
        local v = f:read("l"):match("^(%d+)")
        f:close()
        return v
      end
      local items = {}
      for i = 1, 12 do items[i] = i end
      local held
      local res = core.par.map(items, function(x)
        -- kept: the worker's size is what counts; the others take long enough that a new
        -- worker takes its place before the items run out
        if x == 1 then
          held = string.rep("x", 80 << 20)
        else
          local stop = core.fs.clock() + 0.1
          repeat until core.fs.clock() > stop
        end
        return { pid = pid(), held = held and #held }
      end, { jobs = 2 })
      for i = 1, 12 do print(res[i].pid, res[i].held or "-") end
    ]]))
    local out = io.popen(("%s run %s 2>&1"):format(h.bin, script)):read("a")
    h.cleanup(tmp)
    local rows = {}
    for p, held in out:gmatch("(%d+)\t(%S+)\n") do rows[#rows + 1] = { pid = p, held = held } end
    assert.equal(12, #rows, out)
    assert.equal(tostring(80 << 20), rows[1].held)
    for i = 2, 12 do
      assert.is_not.equal(rows[1].pid, rows[i].pid)
      assert.equal("-", rows[i].held) -- no later item ran where item 1's memory is
    end
  end)

  it("runs in process with jobs = 1, with the same results", function()
    local res, errs = par.map({ 1, 2 }, function(x) if x == 2 then error("no", 0) end return x end, { jobs = 1 })
    assert.equal(1, res[1])
    assert.equal("no", errs[2])
  end)
end)

describe("columns", function()
  it("orders stably, takes rows (nil for none), concatenates and summarises", function()
    local c = core.column.new("integer", { 30, 10, 20, 10 })
    assert.same({ 2, 4, 3, 1 }, c:order():totable())
    local rows = core.column.new("integer", { 4, 1 })
    rows:push(nil)
    local s = core.column.new("string", { "a", "b", "c", "d" }):take(rows)
    assert.same({ "d", "a" }, { s[1], s[2] })
    assert.is_nil(s[3])
    local all = core.column.concat({ c, core.column.new("integer", { 5 }) })
    assert.same({ 30, 10, 20, 10, 5 }, all:totable())
    local n, sum, mn, mx = all:stats()
    assert.same({ 5, 75, 5, 30 }, { n, sum, mn, mx })
    assert.equal("column<integer>(5 rows)", tostring(all))
  end)
end)
