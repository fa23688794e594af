--- Progress and messages on stderr. Stage lines ("[ascope] reading ..."), a progress bar on a
-- terminal, warnings and errors. --quiet silences stages and progress, never warnings or errors.
local fs = require("ascope_core").fs

local M = { quiet = false }
local tty = fs.isatty(2)
local bar_shown = false

local function clear_bar()
  if bar_shown then
    io.stderr:write("\r\27[K")
    bar_shown = false
  end
end

function M.stage(fmt, ...)
  if M.quiet then return end
  clear_bar()
  -- one write per line: parallel workers share stderr
  io.stderr:write("[ascope] " .. (select("#", ...) > 0 and fmt:format(...) or fmt) .. "\n")
end

-- Severity tags in colour on a terminal: https://no-color.org (NO_COLOR set and not empty
-- turns it off), and never on a dumb terminal or into a file or pipe.
local COLOURS = { ERROR = "1;31", WARNING = "33", INFO = "36" }
local colour_on = {}

--- Whether what goes to fd (1 stdout, 2 stderr) is coloured.
function M.colour(fd)
  if colour_on[fd] == nil then
    local no = os.getenv("NO_COLOR")
    colour_on[fd] = fs.isatty(fd) and (no == nil or no == "") and os.getenv("TERM") ~= "dumb"
  end
  return colour_on[fd]
end

--- The line with its leading [ERROR], [WARNING] or [INFO] tag coloured when fd takes colour.
function M.paint(line, fd)
  if not M.colour(fd) then return line end
  return (line:gsub("^(%s*)%[(%u+)%]", function(space, level)
    local c = COLOURS[level]
    if not c then return nil end
    return ("%s\27[%sm[%s]\27[0m"):format(space, c, level)
  end, 1))
end

--- print() with severity tags painted (the commands' print while they run on a terminal).
function M.print(...)
  local parts = table.pack(...)
  for i = 1, parts.n do parts[i] = tostring(parts[i]) end
  io.stdout:write(M.paint(table.concat(parts, "\t", 1, parts.n), 1), "\n")
end

function M.warn(fmt, ...)
  clear_bar()
  io.stderr:write(M.paint("[WARNING] ", 2) .. (select("#", ...) > 0 and fmt:format(...) or fmt) .. "\n")
end

function M.error(fmt, ...)
  clear_bar()
  io.stderr:write(M.paint("[ERROR] ", 2) .. (select("#", ...) > 0 and fmt:format(...) or fmt) .. "\n")
end

local function human(bytes)
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local i = 1
  while bytes >= 1024 and i < #units do
    bytes = bytes / 1024
    i = i + 1
  end
  return ("%.1f %s"):format(bytes, units[i])
end
M.human = human

--- A progress callback for the scanners: fn(done, total). Draws a bar on a terminal only.
function M.progress(label)
  local clock0 = fs.clock()
  return function(done, total)
    if M.quiet or not tty then return end
    local frac = total > 0 and math.min(done / total, 1) or 0
    local width = 30
    local filled = math.floor(frac * width + 0.5)
    local secs = math.max(fs.clock() - clock0, 1e-3)
    io.stderr:write(("\r\27[K%s [%s%s] %3d%% %s / %s %s/s"):format(label, ("#"):rep(filled),
      ("."):rep(width - filled), math.floor(frac * 100), human(done), human(total), human(done / secs)))
    bar_shown = true
    if done >= total then clear_bar() end
  end
end

return M
