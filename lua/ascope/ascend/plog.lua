--- Reading Ascend plog / device logs: the line layout, the log files under a path, the card of a
-- file, and the classifier in C (core.logclass) that streams the files line by line.
-- Line format: [LEVEL] MODULE(PID,PNAME):YYYY-MM-DD-hh:mm:ss.mmm.uuu [file.cc:123]TID msg (the
-- thread id may be separate: [file.cc:816] [3977663]msg; a device-side module has no process:
-- TSCH(-1,null)); other lines are continuation text.
-- @module ascope.ascend.plog
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local model = require "ascope.analysis.timeline.model"

local M = {}

-- The line layout: [LEVEL] MODULE(PID,PNAME):TIME rest, where rest may begin with [file.cc:123]
-- and a thread id. PID is -1 on the device's own modules (TSCH(-1,null), DRV(-1,null)): a line
-- the header does not match has no time, and its card no first error. The classifier reads the
-- same patterns in C; they are in the subset it matches in linear time.
local HEADER = "^%[(%u+)%]%s+([%w_%-]+)%((%-?%d+),([^)]*)%):(%d%d%d%d%-%d%d%-%d%d%-[%d:%.]+)%s*(.*)$"
local SOURCE = "^%[([^%]]*)%]%s*(.*)$"
local THREAD = "^%[?(%d+)%]?%s*(.*)$"

--- Parse a log line: level, module, pid, time, source (file:line), tid, message; nil for a
-- continuation line.
function M.parse_line(text)
  local level, module, pid, pname, time, rest = text:match(HEADER)
  if not level then return nil end
  local src, after = rest:match(SOURCE)
  local tid, msg = (after or rest):match(THREAD)
  return { level = level, module = module, pid = pid, pname = pname, time = time, source = src,
           tid = tid, message = msg or after or rest }
end

--- The names of the fields extracted from lines, in the order of the rules' field_order, then
-- the others by name: the fields' columns of error_plog.csv.
function M.field_names(rules)
  local out, seen = {}, {}
  for _, name in ipairs(rules.field_order or {}) do
    if rules.fields[name] and not seen[name] then out[#out + 1], seen[name] = name, true end
  end
  local rest = {}
  for name in pairs(rules.fields) do
    if not seen[name] then rest[#rest + 1] = name end
  end
  table.sort(rest)
  for _, name in ipairs(rest) do out[#out + 1] = name end
  return out
end

--- The rules' classifier, compiled once in C (core.logclass), and the number of each field (the
-- rules' order is the classifiers' order; fields are numbered in the order of field_names).
-- Returns classifier, nil, number; or nil, message.
function M.classifier(rules)
  local names = M.field_names(rules)
  local number = {}
  for i, n in ipairs(names) do number[n] = i end
  local spec = { literals = rules.prefilter, header = HEADER, level = 1, module = 2, time = 5, rest = 6,
                 strips = { SOURCE, THREAD }, -- the message is each strip's last capture
                 error_level = "ERROR", error_prefix = "[ERROR]", rules = {}, fields = {} }
  for i, c in ipairs(rules.classifiers) do
    spec.rules[i] = { mode = c.sequence and "sequence" or c.code and "word" or "any", any_level = c.any_level,
                      patterns = model.alternatives(c.pattern), modules = c.modules }
  end
  for i, n in ipairs(names) do spec.fields[i] = { patterns = model.alternatives(rules.fields[n]) } end
  local cl, err = core.logclass.new(spec)
  return cl, err, number
end

--- The card a log file belongs to, from its path (device-3, card_3, /dev3/); nil when none says.
-- CANN names a device log device-<pid>_<timestamp>.log inside its card's device-<N> folder: the
-- file name's number is a process id, never the card (a log copied out of its folder would
-- otherwise become card 3978, apart from its own lines' device_id).
function M.card_of_path(path) return (M.card_home(path)) end

-- the folders CANN writes one node's logs in, each with its own device-N folders
local LOG_KINDS = { debug = true, run = true, security = true }

--- The card of a log file from its path (see card_of_path) and its home: the path before the
-- folder (or name) that gives the number, without a last debug/, run/ or security/ folder
-- ("n0/log/debug/device-3/x.log" and "n0/log/run/device-3/y.log": card 3, home "n0/log/").
-- nil when no number is in the path.
function M.card_home(path)
  path = path:gsub("/?[Dd]evice%-%d+_%d+%.log$", "/")
  local at, n = path:match("()[Dd]evice[-_]?(%d+)")
  if not n then at, n = path:match("()[Cc]ard[-_]?(%d+)") end
  if not n then
    at, n = path:match("()/dev(%d+)/")
    at = at and at + 1 -- the slash before dev belongs to the home
  end
  if not n then return nil end
  local home = path:sub(1, at - 1)
  local parent, last = home:match("^(.-)([^/]*)/$")
  if parent and LOG_KINDS[last:lower()] then home = parent end
  return math.tointeger(tonumber(n)), home
end

--- A device number that log files under two different homes (see card_home) claim: the logs of
-- several nodes, each numbering its devices from 0 (two 16-die nodes both have device-0..15),
-- so the number does not say which card. Returns the number and the two homes (the first clash
-- in files' order), or nil when every number has one home.
function M.numbering_clash(files)
  local home_of = {}
  for _, f in ipairs(files) do
    local card, home = M.card_home(f)
    if card then
      local seen = home_of[card]
      if not seen then
        home_of[card] = home
      elseif seen ~= home then
        return card, seen, home
      end
    end
  end
  return nil
end

--- Log files under path (a file is taken as it is) and the messages of the folders that could
-- not be read; or nil, message.
function M.files(path, rules)
  local list, err = discover.files("plog", path, rules)
  if not list then return nil, err end
  local out = {}
  for i, f in ipairs(list) do out[i] = f.path end
  return out, err
end

return M
