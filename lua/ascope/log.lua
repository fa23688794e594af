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

function M.warn(fmt, ...)
  clear_bar()
  io.stderr:write("[WARNING] " .. (select("#", ...) > 0 and fmt:format(...) or fmt) .. "\n")
end

function M.error(fmt, ...)
  clear_bar()
  io.stderr:write("[ERROR] " .. (select("#", ...) > 0 and fmt:format(...) or fmt) .. "\n")
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
