--- Classify the errors of Ascend plog / device logs.
--     local r = assert(require("ascope.plog").run("/root/ascend/log"))
--     for id, c in pairs(r.categories) do print(id, c.count) end
-- Line format: [LEVEL] MODULE(PID,PNAME):YYYY-MM-DD-hh:mm:ss.mmm.uuu [file.cc:123]TID msg (the
-- thread id may be separate: [file.cc:816] [3977663]msg); other lines are continuation text.
-- Only [ERROR] lines are classified, except classifiers marked any_level. Categories are
-- independent: a line counts in every category it matches; an [ERROR] line no classifier knows is
-- counted as unclassified, with examples.
-- @module ascope.plog
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local rules_mod = require "ascope.rules"
local model = require "ascope.analysis.timeline.model"
local i18n = require "ascope.i18n"
local fs = core.fs

local M = {}

function M.rules(user_file)
  return rules_mod.load("plog", user_file) -- checked against its schema (ascope.rule_schemas)
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

-- A pattern's leading literal text (up to the first magic character; a character a quantifier
-- may drop is left out): a plain search for it rules a line out at memory speed before Lua's
-- pattern matcher runs from every position.
local function literal_prefix(p)
  local open = p:match("^%(") and 1 or 0 -- a capture that opens the pattern starts where its text does
  local lit = p:match("^[^%^%$%(%)%%%.%[%]%*%+%-%?]+", open + 1)
  if not lit then return nil end
  local next_char = p:sub(open + #lit + 1, open + #lit + 1)
  if next_char == "*" or next_char == "-" or next_char == "?" then lit = lit:sub(1, -2) end
  return #lit >= 3 and lit or nil
end

local function compile_patterns(p)
  local out = {}
  for i, alt in ipairs(model.alternatives(p)) do out[i] = { pattern = alt, literal = literal_prefix(alt) } end
  return out
end

-- string.find or string.match of a compiled pattern, from init.
local function search(how, s, cp, init)
  if cp.literal then
    init = s:find(cp.literal, init or 1, true)
    if not init then return nil end
  end
  return how(s, cp.pattern, init)
end

-- The classifiers' and fields' patterns, compiled once per rules table.
local compiled = setmetatable({}, { __mode = "k" })
local function compile(rules)
  local c = compiled[rules]
  if c then return c end
  c = { classifiers = {}, fields = {} }
  for i, cl in ipairs(rules.classifiers) do c.classifiers[i] = { classifier = cl, patterns = compile_patterns(cl.pattern) } end
  local names = {}
  for name in pairs(rules.fields) do names[#names + 1] = name end
  table.sort(names)
  for i, name in ipairs(names) do c.fields[i] = { name = name, patterns = compile_patterns(rules.fields[name]) } end
  compiled[rules] = c
  return c
end

local function matches_code(msg, cp)
  -- the code must stand alone: no letter or digit right before or after it
  local s, e = search(string.find, msg, cp)
  while s do
    local before, after = msg:sub(s - 1, s - 1), msg:sub(e + 1, e + 1)
    if not before:match("[%w]") and not after:match("[%w]") then return true end
    s, e = search(string.find, msg, cp, s + 1)
  end
  return false
end

local function matches(entry, msg, module)
  local c = entry.classifier
  if c.modules and module then
    for _, m in ipairs(c.modules) do if m == module then return true end end
  end
  if c.sequence then
    -- every pattern, in order, each searched from where the previous one ended: linear in the line
    local at = 1
    for _, cp in ipairs(entry.patterns) do
      local _, e = search(string.find, msg, cp, at)
      if not e then return false end
      at = e + 1
    end
    return #entry.patterns > 0
  end
  for _, cp in ipairs(entry.patterns) do
    if c.code then
      if matches_code(msg, cp) then return true end
    elseif search(string.find, msg, cp) then
      return true
    end
  end
  return false
end

--- Every classifier that matches a line: categories are independent, one line counts in each
-- category it matches. level and module: the parsed line's (nil for a continuation line).
function M.classify(msg, level, rules, module)
  local out = {}
  for _, entry in ipairs(compile(rules).classifiers) do
    local c = entry.classifier
    if (c.any_level or level == "ERROR") and matches(entry, msg, module) then out[#out + 1] = c end
  end
  return out
end

--- The names of the fields extracted from lines, in the order of the rules' field_order, then
-- the others by name.
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

--- The fields of a line (name -> the first capture of the first of its patterns that matches).
function M.fields(text, rules)
  local out = {}
  for _, f in ipairs(compile(rules).fields) do
    for _, cp in ipairs(f.patterns) do
      local v = search(string.match, text, cp)
      if v then
        out[f.name] = v
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

-- The error_plog.csv type of an [ERROR] line no classifier knows.
local UNCLASSIFIED = { id = "unclassified", category = "unclassified",
                       title = { en = "unclassified [ERROR] line", zh = "未分类的 ERROR 日志" } }

-- Failures, one per failing (card, task): a line with a task id opens or completes its task's
-- entry; a kernel or op name on a line without a task id goes to the card's latest entry that
-- lacks it, else waits for the card's next entry (or makes one of its own at the end).
local function failure_tracker()
  local by_key, list, pending, latest = {}, {}, {}, {}
  local t = {}
  local KEYS = { "kernel_name", "origin_op_name", "stream_id", "task_id" }
  local function fill(fl, f, file, line)
    for _, key in ipairs(KEYS) do
      if fl[key] == nil and f[key] then
        fl[key] = f[key]
        if key == "kernel_name" then fl.file, fl.line = file, line end
      end
    end
  end
  function t.add(card, f, file, line, time)
    if f.task_id then
      local key = ("%d:%s:%s"):format(card, f.stream_id or "", f.task_id)
      local fl = by_key[key]
      if not fl then
        fl = { card = card, file = file, line = line, time = time }
        by_key[key], list[#list + 1] = fl, fl
        for _, p in ipairs(pending[card] or {}) do fill(fl, p, file, line) end
        pending[card] = nil
      end
      fill(fl, f, file, line)
      latest[card] = fl
    elseif f.kernel_name or f.origin_op_name then
      local fl = latest[card]
      if fl and ((f.kernel_name and not fl.kernel_name) or (f.origin_op_name and not fl.origin_op_name)) then
        fill(fl, f, file, line)
      else
        pending[card] = pending[card] or {}
        table.insert(pending[card], { kernel_name = f.kernel_name, origin_op_name = f.origin_op_name, file = file, line = line,
                                      time = time })
      end
    end
  end
  function t.result()
    for card, ps in pairs(pending) do
      local fl = { card = card, file = ps[1].file, line = ps[1].line, time = ps[1].time }
      for _, p in ipairs(ps) do fill(fl, p, p.file, p.line) end
      list[#list + 1] = fl
    end
    table.sort(list, function(a, b)
      if a.card ~= b.card then return a.card < b.card end
      if a.file ~= b.file then return a.file < b.file end
      return a.line < b.line
    end)
    return list
  end
  return t
end

--- Classify every log file under path.
-- @tparam string path a log file or a folder of them
-- @tparam[opt] table opts `rules` (a user rule file)
-- @treturn table `{categories = {id -> {count, classifier, examples}}, records` (one per line and
-- category)`, unclassified = {count, examples}, failures` (one per failing card and task)`,
-- non_moe_failures, first_error` (card -> time of its first [ERROR] line)`, files, failed}`
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
  local max_examples = rules.examples or 10
  local res = { categories = {}, records = {}, files = files, failed = {}, input = path, rules = rules,
                unclassified = { count = 0, examples = {} }, first_error = {} }
  local failures = failure_tracker()
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
        local level = p and p.level or (text:match("^%[ERROR%]") and "ERROR")
        local matched = M.classify(msg, level, rules, p and p.module)
        local f = (#matched > 0 or level == "ERROR") and M.fields(text, rules) or nil
        local card = f and (tonumber(f.device_id) or path_card)
        card = card and math.tointeger(card)
        if level == "ERROR" and card and p and p.time then
          local first = res.first_error[card]
          if not first or p.time < first then res.first_error[card] = p.time end
        end
        for _, c in ipairs(matched) do
          res.records[#res.records + 1] = { id = c.id, category = c.category, classifier = c, file = file, line = lines[k],
                                            text = text, time = p and p.time, card = card, fields = f }
          local cat = res.categories[c.id]
          if not cat then
            cat = { count = 0, classifier = c, examples = {} }
            res.categories[c.id] = cat
          end
          cat.count = cat.count + 1
          if #cat.examples < max_examples then cat.examples[#cat.examples + 1] = { file = file, line = lines[k], text = text } end
        end
        if #matched == 0 and level == "ERROR" then
          res.records[#res.records + 1] = { id = UNCLASSIFIED.id, category = UNCLASSIFIED.category, classifier = UNCLASSIFIED,
                                            file = file, line = lines[k], text = text, time = p and p.time, card = card,
                                            fields = f }
          local u = res.unclassified
          u.count = u.count + 1
          if #u.examples < max_examples then u.examples[#u.examples + 1] = { file = file, line = lines[k], text = text } end
        end
        if #matched > 0 and card then failures.add(card, f, file, lines[k], p and p.time) end
      end
    end
  end
  local non_moe = {}
  res.failures = failures.result()
  for _, fl in ipairs(res.failures) do
    local kernel = fl.kernel_name or fl.origin_op_name
    if kernel and not model.matches(kernel, rules.moe_kernels) then
      non_moe[#non_moe + 1] = { card = fl.card, kernel_name = kernel, task_id = fl.task_id }
    end
  end
  res.non_moe_failures = non_moe
  return res
end

--- Findings: {severity, card, analysis, message}: a WARNING per category found (with its count)
-- and for the unclassified [ERROR] lines, an ERROR per failure on a kernel that is not a
-- dispatch/combine one.
function M.anomalies(res)
  local out = {}
  local ids = {}
  for id in pairs(res.categories) do ids[#ids + 1] = id end
  table.sort(ids)
  for _, id in ipairs(ids) do
    local c = res.categories[id]
    out[#out + 1] = { severity = "WARNING", analysis = "plog " .. id,
                      message = i18n.t("plog.category", i18n.pick(c.classifier.title), c.count) }
  end
  if res.unclassified.count > 0 then
    out[#out + 1] = { severity = "WARNING", analysis = "plog unclassified",
                      message = i18n.t("plog.unclassified", res.unclassified.count) }
  end
  for _, f in ipairs(res.non_moe_failures) do
    out[#out + 1] = { severity = "ERROR", card = f.card, analysis = "plog",
                      message = i18n.t("plog.non_moe", f.card, f.kernel_name) }
  end
  return out
end

return M
