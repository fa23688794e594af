-- A progress callback that raises: the error reaches the caller, and C frees its file and
-- buffers first (valgrind runs this file: a leaked 1 MiB buffer is an error there).
local core = require "ascope_core"
local h = require "helper"

local function open_fds()
  local n = 0
  for _ in pairs(assert(core.fs.list("/proc/self/fd"))) do n = n + 1 end
  return n
end

describe("a progress callback that raises", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  local function boom() error("stop here", 0) end

  it("reaches the caller from json.scan and leaves no file open", function()
    local path = dir .. "/t.json"
    h.write(path, '[{"name":"a","ph":"X","ts":1,"dur":1},{"name":"b","ph":"X","ts":2,"dur":1}]')
    local before = open_fds()
    for _ = 1, 20 do
      local ok, err = pcall(core.json.scan, path, { fields = { name = "string" }, progress = boom })
      assert.is_false(ok)
      assert.equal("stop here", err)
    end
    assert.equal(before, open_fds())
  end)

  it("reaches the caller from csv.read and leaves no file open", function()
    local path = dir .. "/t.csv"
    h.write(path, "Name,Size(KB)\na,1\nb,2\n")
    local before = open_fds()
    for _ = 1, 20 do
      local ok, err = pcall(core.csv.read, path, { columns = { Name = "string" }, progress = boom })
      assert.is_false(ok)
      assert.equal("stop here", err)
    end
    assert.equal(before, open_fds())
    local r = assert(core.csv.read(path, { columns = { Name = "string" }, progress = function() end }))
    assert.equal(2, r.n)
  end)
end)
