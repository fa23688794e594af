--- The plog analysis: the classifier's counts per category, each card's failing task (kernel,
-- op, stream, task) followed in bounded memory, the failures that are not on a dispatch/combine
-- kernel, and the findings. Categories are independent: a line counts in every category it
-- matches; an [ERROR] line no classifier knows is counted as unclassified, with examples.
-- @module ascope.analysis.plog
local core = require "ascope_core"
local model = require "ascope.analysis.timeline.model"
local reader = require "ascope.ascend.plog"
local i18n = require "ascope.i18n"
local ranks = require "ascope.ranks"
local workers = require "ascope.workers"

local M = {}

-- the classifier fields a failure is made of
local KEYS = { "kernel_name", "origin_op_name", "stream_id", "task_id" }

-- Whether failure a came before b on their card: by the time of their first line (a failure
-- whose line had no time after those with one), then by file and line. The times are the logs'
-- own fixed-width text, so their order is the text's.
local function earlier(a, b)
  if a.time ~= b.time then
    if not a.time or not b.time then return a.time ~= nil end
    return a.time < b.time
  end
  if a.file ~= b.file then return a.file < b.file end
  return a.line < b.line
end

-- Failures, one per failing (card, task): a line with a task id opens or completes its task's
-- entry; a kernel or op name on a line without a task id goes to the card's latest entry that
-- lacks it, else waits for the card's next entry (or makes one of its own at the end). Of the
-- lines waiting on a card only the first, the first kernel and the first op can ever be used,
-- so that is all that is kept: memory is bounded by the number of tasks, not of lines. At most
-- max entries (tasks and waiting cards) are followed; the lines naming one more are counted
-- (dropped).
function M.failure_tracker(max)
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
    -- each card's failures in the order they happened: its first is where it failed
    table.sort(list, function(a, b)
      if a.card ~= b.card then return a.card < b.card end
      return earlier(a, b)
    end)
    return list
  end
  return t
end

--- Classify every file: files (paths), rules, the classifier and its field numbers
-- (ascope.ascend.plog.classifier), csv (the layout of the records' CSV, or nil to keep no
-- records), max (failing tasks followed at most). Returns the result (see ascope.plog.run) or
-- nil, message.
function M.classify(files, rules, classifier, number, csv, max)
  local names = reader.field_names(rules)
  local record_fields = {}
  for i, n in ipairs(names) do record_fields[i] = number[n] end
  local key_fields = {}
  for i, n in ipairs(KEYS) do key_fields[i] = number[n] or 0 end
  local ncl = #rules.classifiers
  local tally, terr = core.logclass.tally({ rules = ncl, examples = math.min(math.max(rules.examples or 10, 0), 100),
                                            group_field = number.device_id or 0, record_fields = record_fields,
                                            key_fields = key_fields, csv = csv })
  if not tally then return nil, terr end
  local res = { categories = {}, records = csv and tally, files = files, failed = {}, rules = rules,
                unclassified = { count = 0, examples = {} }, first_error = {}, nul_files = {} }
  local failures = M.failure_tracker(max)
  -- threads classify blocks of each file while this one tallies them in order: the CPUs idle
  -- now, or this process's share when a job runs several at once
  local scan_opts = { threads = workers.scan_threads or core.fs.workers() }
  for k, file in ipairs(files) do
    local add = failures.add
    local ok, err = classifier:scan(file, tally, k, reader.card_of_path(file),
      function(card, line, time, kernel, op, stream, task) add(card, kernel, op, stream, task, file, line, time) end,
      scan_opts)
    if not ok then
      res.failed[#res.failed + 1] = { path = file, reason = err }
    elseif err > 0 then -- the NUL bytes dropped: the log was padded (a crash), its lines are read
      res.nul_files[#res.nul_files + 1] = { path = file, bytes = err }
    end
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
  res.non_moe_failures, res.unknown_kernel_failures = M.judge(res.failures, rules)
  return res
end

--- Each card's first failure, by time: card -> failure. The failures after it on the card are
-- its consequences (a peer waiting for the failed kernel times out in its own), so what the card
-- failed on is this one's kernel (else op); when it names neither, what the card failed on is
-- unknown, whatever the later failures name.
function M.first_failures(failures)
  local first = {}
  for _, fl in ipairs(failures) do
    local f = first[fl.card]
    if not f or earlier(fl, f) then first[fl.card] = fl end
  end
  return first
end

--- What each failing card failed on, in card order: the cards whose first failure (see
-- first_failures) is on a kernel (else op) that is not one of the rules' moe_kernels
-- ({card, kernel_name, task_id}), and the cards whose first failure names no kernel and no op
-- ({card, stream_id, task_id, file, line}): those are neither, and the logs cannot say that every
-- failing card failed on dispatch/combine.
function M.judge(failures, rules)
  local first, cards = M.first_failures(failures), {}
  for card in pairs(first) do cards[#cards + 1] = card end
  table.sort(cards)
  local non_moe, unknown = {}, {}
  for _, card in ipairs(cards) do
    local fl = first[card]
    local kernel = fl.kernel_name or fl.origin_op_name
    if not kernel then
      unknown[#unknown + 1] = { card = card, stream_id = fl.stream_id, task_id = fl.task_id,
                                file = fl.file, line = fl.line }
    elseif not model.matches(kernel, rules.moe_kernels) then
      non_moe[#non_moe + 1] = { card = card, kernel_name = kernel, task_id = fl.task_id }
    end
  end
  return non_moe, unknown
end

--- The cards of a list of judge's entries, as a message names them: "3, 5-7".
function M.cards_text(list)
  local cards = {}
  for i, f in ipairs(list) do cards[i] = f.card end
  return ranks.list_text(cards)
end

--- Findings: {severity, card, analysis, message}: a WARNING per category found (with its count)
-- and for the unclassified [ERROR] lines, an ERROR per card whose first failing kernel is not a
-- dispatch/combine one, a WARNING naming the cards whose first failure names no kernel. max: the
-- failing tasks followed at most (for the message).
function M.anomalies(res, max)
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
                      message = i18n.t("plog.failures_capped", max, res.failures_dropped) }
  end
  if res.cut_lines > 0 then
    out[#out + 1] = { severity = "WARNING", analysis = "plog", message = i18n.t("plog.cut_lines", res.cut_lines) }
  end
  for _, n in ipairs(res.nul_files) do
    out[#out + 1] = { severity = "WARNING", analysis = "plog", message = i18n.t("plog.nul_bytes", n.path, n.bytes) }
  end
  for _, f in ipairs(res.non_moe_failures) do
    out[#out + 1] = { severity = "ERROR", card = f.card, analysis = "plog",
                      message = i18n.t("plog.non_moe", f.card, f.kernel_name) }
  end
  local unknown = res.unknown_kernel_failures
  if #unknown > 0 then
    local cards = {}
    for i, f in ipairs(unknown) do cards[i] = f.card end
    out[#out + 1] = { severity = "WARNING", card = cards[1], cards = cards, analysis = "plog",
                      message = i18n.t("plog.unknown_kernel", #unknown, M.cards_text(unknown)) }
  end
  return out
end

return M
