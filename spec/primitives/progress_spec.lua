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

  local readers = {
    { "json.scan", core.json.scan, "t.json", '[{"name":"a","ph":"X","ts":1,"dur":1},{"name":"b","ph":"X","ts":2,"dur":1}]',
      { fields = { name = "string" } } },
    { "csv.read", core.csv.read, "t.csv", "Name,Size(KB)\na,1\nb,2\n", { columns = { Name = "string" } } },
  }
  for _, case in ipairs(readers) do
    local name, read, file, text, opts = table.unpack(case)
    it("reaches the caller from " .. name .. " and leaves no file open", function()
      local path = dir .. "/" .. file
      h.write(path, text)
      local before = open_fds()
      opts.progress = boom
      for _ = 1, 20 do
        local ok, err = pcall(read, path, opts)
        assert.is_false(ok)
        assert.equal("stop here", err)
      end
      assert.equal(before, open_fds())
      opts.progress = function() end
      local r = assert(read(path, opts))
      assert.equal(2, r.n)
    end)
  end
end)
