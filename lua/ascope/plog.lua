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

-- The line layout: [LEVEL] MODULE(PID,PNAME):TIME rest, where rest may begin with [file.cc:123]
-- and a thread id. The classifier reads the same patterns in C; they are in the subset it
-- matches in linear time.
local HEADER = "^%[(%u+)%]%s+([%w_%-]+)%((%d+),([^)]*)%):(%d%d%d%d%-%d%d%-%d%d%-[%d:%.]+)%s*(.*)$"
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

-- The classifier in C for a rules table: the rules' order is the classifiers' order; fields
-- are numbered in the order of M.field_names (the rules' field_order, then the others by name).
local KEYS = { "kernel_name", "origin_op_name", "stream_id", "task_id" }

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

local function field_numbers(rules)
  local names = M.field_names(rules)
  local number = {}
  for i, n in ipairs(names) do number[n] = i end
  return names, number
end

--- The rules' classifier, compiled once in C (core.logclass), and the number of each field.
function M.classifier(rules)
  local names, number = field_numbers(rules)
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

local function card_of_path(path)
  local n = path:match("[Dd]evice[-_]?(%d+)") or path:match("[Cc]ard[-_]?(%d+)") or path:match("/dev(%d+)/")
  return n and math.tointeger(tonumber(n))
end

--- Log files under path (a file is taken as it is).
function M.files(path, rules)
  local st = fs.stat(path)
  if not st then return nil, i18n.t("input.no_such", path) end
  if st.type == "file" then return { path } end
  local out = {}
  for _, p in ipairs(fs.walk(path)) do
    if model.matches(discover.basename(p), rules.files) then out[#out + 1] = p end
  end
  return out
end

-- The error_plog.csv type of an [ERROR] line no classifier knows.
local UNCLASSIFIED = { id = "unclassified", category = "unclassified",
                       title = "plog.unclassified_title" }

-- At most this many failures (distinct failing card and task, and cards with kernel or op lines
-- waiting for a task) are followed; the lines naming one more are counted (failures_dropped) and
-- reported.
M.MAX_FAILURES = 10000

-- Failures, one per failing (card, task): a line with a task id opens or completes its task's
-- entry; a kernel or op name on a line without a task id goes to the card's latest entry that
-- lacks it, else waits for the card's next entry (or makes one of its own at the end). Of the
-- lines waiting on a card only the first, the first kernel and the first op can ever be used,
-- so that is all that is kept: memory is bounded by the number of tasks, not of lines.
local function failure_tracker(max)
  local by_task, list, waiting, latest = {}, {}, {}, {}
  local t = { dropped = 0 }
  local held = 0 -- entries and waiting cards
  local function fill(fl, kernel, op, stream, task, file, line)
    if kernel and not fl.kernel_name then fl.kernel_name, fl.file, fl.line = kernel, file, line end
    if op and not fl.origin_op_name then fl.origin_op_name = op end
    if stream and not fl.stream_id then fl.stream_id = stream end
    if task and not fl.task_id then fl.task_id = task end
  end
  -- called for every classified line that names a kernel, op, stream or task: keep it cheap
  function t.add(card, kernel, op, stream, task, file, line, time)
    if task then
      local tasks = by_task[card]
      if not tasks then
        tasks = {}
        by_task[card] = tasks
      end
      local key = (stream or "") .. ":" .. task
      local fl = tasks[key]
      if not fl then
        if held >= max then
          t.dropped = t.dropped + 1
          return
        end
        fl = { card = card, file = file, line = line, time = time }
        tasks[key], list[#list + 1] = fl, fl
        held = held + 1
        local w = waiting[card]
        if w then
          fill(fl, w.kernel_name, w.origin_op_name, nil, nil, file, line)
          waiting[card], held = nil, held - 1
        end
      end
      fill(fl, kernel, op, stream, task, file, line)
      latest[card] = fl
    elseif kernel or op then
      local fl = latest[card]
      if fl and ((kernel and not fl.kernel_name) or (op and not fl.origin_op_name)) then
        fill(fl, kernel, op, stream, nil, file, line)
        return
      end
      local w = waiting[card]
      if not w then
        if held >= max then
          t.dropped = t.dropped + 1
          return
        end
        w = { file = file, line = line, time = time }
        waiting[card], held = w, held + 1
      end
      if kernel and not w.kernel_name then w.kernel_name, w.kernel_file, w.kernel_line = kernel, file, line end
      if op and not w.origin_op_name then w.origin_op_name = op end
    end
  end
  function t.result()
    for card, w in pairs(waiting) do
      local fl = { card = card, file = w.file, line = w.line, time = w.time }
      fill(fl, w.kernel_name, w.origin_op_name, nil, nil, w.kernel_file, w.kernel_line)
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

local function title_of(c) return i18n.t(c.title) end

-- The header of error_plog.csv: the type, the line, where it is, and the fields.
local function records_header(names)
  local header = { "错误类型", "错误信息", "card", "file", "line", "time" }
  for _, f in ipairs(names) do header[#header + 1] = f end
  return header
end

--- Classify every log file under path.
-- @tparam string path a log file or a folder of them
-- @tparam[opt] table opts `rules` (a user rule file), `records` (the path of error_plog.csv: one
-- row per line and category, the unclassified [ERROR] lines under their own type, in file and
-- line order; written as the lines are found to a temporary file that `write_records` puts in
-- place)
-- @treturn table `{categories = {id -> {count, classifier, examples}}, record_count,
-- unclassified = {count, examples}, failures` (one per failing card and task)`, failures_dropped,
-- cut_lines, non_moe_failures, first_error` (card -> time of its first [ERROR] line)`, files,
-- failed}`; memory does not grow with the number of lines found
-- @treturn[2] nil when the input cannot be used at all
-- @treturn[2] string why
function M.run(path, opts)
  opts = opts or {}
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local files, ferr = M.files(path, rules)
  if not files then return nil, ferr end
  local classifier, cerr, number = M.classifier(rules)
  if not classifier then return nil, i18n.t("plog.rules_error", cerr) end
  local names = M.field_names(rules)
  local record_fields = {}
  for i, n in ipairs(names) do record_fields[i] = number[n] end
  local key_fields = {}
  for i, n in ipairs(KEYS) do key_fields[i] = number[n] or 0 end
  local ncl = #rules.classifiers
  local csv
  if opts.records and #files > 0 then
    local titles = {}
    for i, c in ipairs(rules.classifiers) do titles[i] = title_of(c) end
    titles[ncl + 1] = title_of(UNCLASSIFIED)
    csv = { path = opts.records, header = records_header(names), titles = titles, files = files }
  end
  local tally, terr = core.logclass.tally({ rules = ncl, examples = math.min(math.max(rules.examples or 10, 0), 100),
                                            group_field = number.device_id or 0, record_fields = record_fields,
                                            key_fields = key_fields, csv = csv })
  if not tally then return nil, terr end
  local res = { categories = {}, records = tally, files = files, failed = {}, input = path, rules = rules,
                unclassified = { count = 0, examples = {} }, first_error = {} }
  local failures = failure_tracker(M.MAX_FAILURES)
  for k, file in ipairs(files) do
    local add = failures.add
    local ok, err = classifier:scan(file, tally, k, card_of_path(file), function(card, line, time, kernel, op, stream, task)
      add(card, kernel, op, stream, task, file, line, time)
    end)
    if not ok then res.failed[#res.failed + 1] = { path = file, reason = err } end
  end
  local function examples(slot)
    local out = tally:examples(slot)
    for _, e in ipairs(out) do e.file = files[e.file] end
    return out
  end
  for slot, count in pairs(tally:counts()) do
    if slot <= ncl then
      local c = rules.classifiers[slot]
      res.categories[c.id] = { count = count, classifier = c, examples = examples(slot) }
    else
      res.unclassified = { count = count, examples = examples(slot) }
    end
  end
  res.first_error = tally:first()
  local stats = tally:stats()
  res.record_count, res.cut_lines = stats.records, stats.cut
  res.failures = failures.result()
  res.failures_dropped = failures.dropped
  local non_moe = {}
  for _, fl in ipairs(res.failures) do
    local kernel = fl.kernel_name or fl.origin_op_name
    if kernel and not model.matches(kernel, rules.moe_kernels) then
      non_moe[#non_moe + 1] = { card = fl.card, kernel_name = kernel, task_id = fl.task_id }
    end
  end
  res.non_moe_failures = non_moe
  return res
end

--- Put error_plog.csv (opts.records of run) in place. Returns true or nil, message.
function M.write_records(res)
  return res.records:commit()
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
                      message = i18n.t("plog.category", i18n.t(c.classifier.title), c.count) }
  end
  if res.unclassified.count > 0 then
    out[#out + 1] = { severity = "WARNING", analysis = "plog unclassified",
                      message = i18n.t("plog.unclassified", res.unclassified.count) }
  end
  if res.failures_dropped > 0 then
    out[#out + 1] = { severity = "WARNING", analysis = "plog failures",
                      message = i18n.t("plog.failures_capped", M.MAX_FAILURES, res.failures_dropped) }
  end
  if res.cut_lines > 0 then
    out[#out + 1] = { severity = "WARNING", analysis = "plog", message = i18n.t("plog.cut_lines", res.cut_lines) }
  end
  for _, f in ipairs(res.non_moe_failures) do
    out[#out + 1] = { severity = "ERROR", card = f.card, analysis = "plog",
                      message = i18n.t("plog.non_moe", f.card, f.kernel_name) }
  end
  return out
end

return M
