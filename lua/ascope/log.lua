--- Progress and messages. The library prints nothing by itself: stage lines ("reading ..."),
-- warnings, errors and progress go to a sink, and there is none until the caller installs one.
-- The ascope command line installs M.stderr: everything on stderr (stage lines "[ascope] ...",
-- a progress bar on a terminal, the step-by-step lines of an analysis, warnings and errors);
-- --quiet silences stages, progress and the step-by-step lines, never warnings or errors.
-- Findings and summaries are the commands' business and go to stdout (see the README, "Output
-- streams"). An embedding program may install its own sink:
--   require("ascope").log.set_sink({
--     on_log = function(level, text) mylog(level, text) end,   -- "stage", "info", "warning", "error"
--     on_progress = function(label, done, total, seconds) end,       -- bytes read of a file
--   })
-- @module ascope.log
local fs = require("ascope_core").fs

local M = { quiet = false }
local tty = fs.isatty(2)
local bar_shown = false
local sink = nil

--- Install a sink ({on_log = fn(level, text), on_progress = fn(label, done, total, seconds)}),
-- or nil for silence (the default).
function M.set_sink(s) sink = s end

--- The sink in use (nil when silent).
function M.sink() return sink end

local function emit(level, fmt, ...)
  if sink and sink.on_log then sink.on_log(level, select("#", ...) > 0 and fmt:format(...) or fmt) end
end

local function clear_bar()
  if bar_shown then
    io.stderr:write("\r\27[K")
    bar_shown = false
  end
end

--- A stage of the work ("rank 3: reading ..."), for the sink.
function M.stage(fmt, ...) emit("stage", fmt, ...) end
--- A warning, for the sink.
function M.warn(fmt, ...) emit("warning", fmt, ...) end
--- An error message, for the sink.
function M.error(fmt, ...) emit("error", fmt, ...) end

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

--- text with the control characters a terminal would act on written out ("\x1b"): a role, a
-- file or operator name comes from the data, and an escape sequence or a lone carriage return
-- in one must not recolour, move or overwrite what the user reads. Line ends and tabs stay.
function M.visible(text)
  return (text:gsub("\r\n", "\n"):gsub("[%z\1-\8\11-\31\127]",
    function(c) return ("\\x%02x"):format(c:byte()) end))
end

--- print() with severity tags painted (the commands' print while they run on a terminal).
function M.print(...)
  local parts = table.pack(...)
  for i = 1, parts.n do parts[i] = tostring(parts[i]) end
  io.stdout:write(M.paint(M.visible(table.concat(parts, "\t", 1, parts.n)), 1), "\n")
end

--- A line of an analysis' running account (moe's per-card steps), for the sink with its level
-- in lower case ("INFO" -> "info"); the command line's sink prints it as "[INFO] text" and
-- --quiet silences it: the findings among them are in the summary on stdout too.
function M.line(level, text) emit(level:lower(), "%s", text) end

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

--- A progress callback for the scanners, fn(done, total), that reports to the sink; nil when
-- the sink takes no progress (the scanners then skip the calls).
function M.progress(label)
  local on = sink and sink.on_progress
  if not on then return nil end
  local clock0 = fs.clock()
  return function(done, total) on(label, done, total, fs.clock() - clock0) end
end

--- The command line's sink: stage lines and a progress bar (on a terminal) on stderr, unless
-- M.quiet; warnings and errors always.
M.stderr = {
  on_log = function(level, text)
    local always = level == "warning" or level == "error"
    if M.quiet and not always then return end
    clear_bar()
    local tag = level == "stage" and "[ascope] " or M.paint("[" .. level:upper() .. "] ", 2)
    -- one write per line: parallel workers share stderr
    io.stderr:write(tag .. M.visible(text) .. "\n")
  end,
  on_progress = function(label, done, total, seconds)
    if M.quiet or not tty then return end
    local frac = total > 0 and math.min(done / total, 1) or 0
    local width = 30
    local filled = math.floor(frac * width + 0.5)
    local secs = math.max(seconds, 1e-3)
    io.stderr:write(("\r\27[K%s [%s%s] %3d%% %s / %s %s/s"):format(label, ("#"):rep(filled),
      ("."):rep(width - filled), math.floor(frac * 100), human(done), human(total), human(done / secs)))
    bar_shown = true
    if done >= total then clear_bar() end
  end,
}

return M
