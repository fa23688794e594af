--- Classify the errors of Ascend plog / device logs.
--     local r = assert(require("ascope.plog").run("/root/ascend/log"))
--     for id, c in pairs(r.categories) do print(id, c.count) end
-- Line format: [LEVEL] MODULE(PID,PNAME):YYYY-MM-DD-hh:mm:ss.mmm.uuu [file.cc:123]TID msg (the
-- thread id may be separate: [file.cc:816] [3977663]msg); other lines are continuation text.
-- Only [ERROR] lines are classified, except classifiers marked any_level.
-- @module ascope.plog
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local rules_mod = require "ascope.rules"
local model = require "ascope.analysis.timeline.model"
local fs = core.fs

local M = {}

function M.rules(user_file)
  local r, err = rules_mod.load("plog", user_file)
  if not r then return nil, err end
  if type(r.classifiers) ~= "table" then return nil, "rules: plog.classifiers must be a list" end
  for i, c in ipairs(r.classifiers) do
    local name = ("plog.classifiers[%d] (id %s)"):format(i, tostring(c.id))
    if type(c.id) ~= "string" then return nil, "rules: " .. name .. " has no id" end
    if type(c.pattern) ~= "string" and type(c.pattern) ~= "table" then
      return nil, "rules: " .. name .. ": pattern must be a Lua pattern or a list of them"
    end
    for _, p in ipairs(model.alternatives(c.pattern)) do
      local ok, perr = pcall(string.find, "", p)
      if not ok then return nil, ("rules: %s: bad pattern %q: %s"):format(name, p, perr) end
    end
  end
  return r
end

--- Parse a log line: level, module, pid, time, source (file:line), tid, message; nil for a
-- continuation line.
function M.parse_line(text)
  local level, module, pid, pname, time, rest = text:match("^%[(%u+)%]%s+([%w_%-]+)%((%d+),([^)]*)%):(%d%d%d%d%-%d%d%-%d%d%-[%d:%.]+)%s*(.*)$")
  if not level then return nil end
  local src, after = rest:match("^%[([^%]]*)%]%s*(.*)$")
  local tid, msg = (after or rest):match("^%[?(%d+)%]?%s*(.*)$")
  return { level = level, module = module, pid = pid, pname = pname, time = time, source = src,
           tid = tid, message = msg or after or rest }
end

local function matches_code(msg, pattern)
  -- the code must stand alone: no letter or digit right before or after it
  local s, e = msg:find(pattern)
  while s do
    local before, after = msg:sub(s - 1, s - 1), msg:sub(e + 1, e + 1)
    if not before:match("[%w]") and not after:match("[%w]") then return true end
    s, e = msg:find(pattern, s + 1)
  end
  return false
end

--- The first classifier that matches (level: the parsed level, nil for a continuation line).
function M.classify(msg, level, rules)
  for _, c in ipairs(rules.classifiers) do
    if c.any_level or level == "ERROR" then
      for _, p in ipairs(model.alternatives(c.pattern)) do
        if c.code then
          if matches_code(msg, p) then return c end
        elseif msg:find(p) then
          return c
        end
      end
    end
  end
end

function M.fields(text, rules)
  local out = {}
  for name, pats in pairs(rules.fields) do
    for _, p in ipairs(model.alternatives(pats)) do
      local v = text:match(p)
      if v then
        out[name] = v
        break
      end
    end
  end
  return out
end

local function card_of_path(path)
  local n = path:match("[Dd]evice[-_]?(%d+)") or path:match("[Cc]ard[-_]?(%d+)") or path:match("/dev(%d+)/")
  return n and math.tointeger(tonumber(n))
end

--- Log files under path (a file is taken as it is).
function M.files(path, rules)
  local st = fs.stat(path)
  if not st then return nil, path .. ": no such file or folder" end
  if st.type == "file" then return { path } end
  local out = {}
  for _, p in ipairs(fs.walk(path)) do
    if model.matches(discover.basename(p), rules.files) then out[#out + 1] = p end
  end
  return out
end

--- Classify every log file under path.
-- @tparam string path a log file or a folder of them
-- @tparam[opt] table opts `rules` (a user rule file)
-- @treturn table `{categories = {id -> {count, title, examples}}, records, failures,
-- non_moe_failures, files, failed}`
-- @treturn[2] nil when the input cannot be used at all
-- @treturn[2] string why
function M.run(path, opts)
  opts = opts or {}
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local files, ferr = M.files(path, rules)
  if not files then return nil, ferr end
  local literals = {}
  for _, l in ipairs(rules.prefilter) do literals[#literals + 1] = l end
  local res = { categories = {}, records = {}, files = files, failed = {}, input = path, rules = rules }
  local per_card = {}
  for _, file in ipairs(files) do
    local lines, texts = fs.grep(file, literals)
    if not lines then
      res.failed[#res.failed + 1] = { path = file, reason = texts }
    else
      local path_card = card_of_path(file)
      for k = 1, #lines do
        local text = texts[k]
        local p = M.parse_line(text)
        local msg = p and p.message or text
        local c = M.classify(msg, p and p.level, rules)
        if c then
          local f = M.fields(text, rules)
          local card = tonumber(f.device_id) or path_card
          local rec = { id = c.id, category = c.category, classifier = c, file = file, line = lines[k], text = text,
                        time = p and p.time, card = card and math.tointeger(card), fields = f }
          res.records[#res.records + 1] = rec
          local cat = res.categories[c.id]
          if not cat then
            cat = { count = 0, classifier = c, examples = {} }
            res.categories[c.id] = cat
          end
          cat.count = cat.count + 1
          if #cat.examples < (rules.examples or 10) then
            cat.examples[#cat.examples + 1] = { file = file, line = lines[k], text = text }
          end
          if rec.card and (f.kernel_name or f.origin_op_name) then
            local fl = per_card[rec.card]
            if not fl then
              fl = { card = rec.card, file = file, line = lines[k] }
              per_card[rec.card] = fl
            end
            for _, key in ipairs({ "kernel_name", "origin_op_name", "stream_id", "task_id" }) do
              if fl[key] == nil and f[key] then
                fl[key] = f[key]
                if key == "kernel_name" then fl.file, fl.line = file, lines[k] end
              end
            end
          end
        end
      end
    end
  end
  local failures, non_moe = {}, {}
  for _, fl in pairs(per_card) do failures[#failures + 1] = fl end
  table.sort(failures, function(a, b) return a.card < b.card end)
  for _, fl in ipairs(failures) do
    local kernel = fl.kernel_name or fl.origin_op_name
    if not model.matches(kernel, rules.moe_kernels) then non_moe[#non_moe + 1] = { card = fl.card, kernel_name = kernel } end
  end
  res.failures, res.non_moe_failures = failures, non_moe
  return res
end

return M
