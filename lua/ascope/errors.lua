--- Error values that carry how the program should end.
-- usage(msg): the command line is wrong (exit 2). Plain errors are failures (exit 1).
local M = {}

local Usage = {}
Usage.__index = Usage
Usage.__tostring = function(e) return e.msg end

function M.usage(fmt, ...)
  error(setmetatable({ msg = select("#", ...) > 0 and fmt:format(...) or fmt, usage = true }, Usage), 0)
end

function M.is_usage(e) return getmetatable(e) == Usage end

return M
