--- Buffered text output written atomically: a temporary file beside the target, renamed into
-- place on close, so a crash never leaves half a report. Every write goes through the C atomic
-- file (fs.create), which keeps the first error (a full disk) and reports it at close with the
-- file's name; the temporary file is then removed, and an interrupt removes it too.
--   local w = writer.open("out/report.md"); w:write("# title\n"); assert(w:close())
local fs = require("ascope_core").fs

local M = {}
local W = {}
W.__index = W

function M.open(path)
  local f, err = fs.create(path)
  if not f then return nil, err end
  return setmetatable({ f = f, path = path, parts = {}, n = 0 }, W)
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
  return self.f:close()
end

--- Drop the temporary file.
function W:abort() self.f:abort() end

return M
