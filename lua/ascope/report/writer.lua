--- Buffered text output written atomically: a temporary file beside the target, renamed into
-- place on close, so a crash never leaves half a report.
--   local w = writer.open("out/report.md"); w:write("# title\n"); assert(w:close())
local fs = require("ascope_core").fs

local M = {}
local W = {}
W.__index = W

function M.open(path)
  local dir = path:match("^(.*)/[^/]+$")
  if dir and dir ~= "" then
    local ok, err = fs.mkdirs(dir)
    if not ok then return nil, err end
  end
  local tmp = ("%s.tmp-%d-%d"):format(path, os.time(), math.random(1, 1 << 30))
  local f, err = io.open(tmp, "wb")
  if not f then return nil, err end
  f:setvbuf("full", 1 << 20)
  return setmetatable({ f = f, path = path, tmp = tmp, parts = {}, n = 0 }, W)
end

function W:write(...)
  local parts, n = self.parts, self.n
  for i = 1, select("#", ...) do
    n = n + 1
    parts[n] = select(i, ...)
  end
  self.n = n
  if n > 4096 then self:flush_parts() end
end

function W:flush_parts()
  self.f:write(table.concat(self.parts, "", 1, self.n))
  self.parts, self.n = {}, 0
end

--- Finish: rename into place. Returns true or nil, message.
function W:close()
  self:flush_parts()
  local ok, err = self.f:close()
  if not ok then
    os.remove(self.tmp)
    return nil, err
  end
  local renamed, rerr = os.rename(self.tmp, self.path)
  if not renamed then
    os.remove(self.tmp)
    return nil, rerr
  end
  return true
end

--- Drop the temporary file.
function W:abort()
  self.f:close()
  os.remove(self.tmp)
end

return M
