--- Error values that carry how the program should end.
-- usage(msg): the command line is wrong (exit 2). Plain errors are failures (exit 1).
local M = {}

-- A usage error behaves as its message where a string is expected: tostring, .., and the
-- string methods (err:find(...)).
local Usage = {}
Usage.__index = function(_, k)
  local f = string[k]
  if f then return function(e, ...) return f(e.msg, ...) end end
end
Usage.__tostring = function(e) return e.msg end
Usage.__concat = function(a, b) return tostring(a) .. tostring(b) end

function M.usage(fmt, ...)
  error(setmetatable({ msg = select("#", ...) > 0 and fmt:format(...) or fmt, usage = true }, Usage), 0)
end

--- A usage error as a value, for `return nil, err` from a library function: it prints and
-- concatenates as its message, and raised with error() it ends the program as usage() does.
function M.usage_value(msg) return setmetatable({ msg = msg, usage = true }, Usage) end

function M.is_usage(e) return getmetatable(e) == Usage end

return M
