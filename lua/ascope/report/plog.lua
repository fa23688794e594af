--- Writers of `ascope plog`: error_plog.csv (its layout, filled by the classifier as it scans,
-- saved from its spool), plog_summary.json and the console summary.
-- @module ascope.report.plog
local core = require "ascope_core"
local reader = require "ascope.ascend.plog"
local analysis = require "ascope.analysis.plog"
local writer = require "ascope.report.writer"
local i18n = require "ascope.i18n"

local M = {}

local fmt = require "ascope.fmt"
local array = fmt.array
local function title_of(c) return i18n.t(c.title) end

-- The error_plog.csv type of an [ERROR] line no classifier knows.
local UNCLASSIFIED = { id = "unclassified", category = "unclassified",
                       title = "plog.unclassified_title" }

--- The layout of error_plog.csv for the tally (core.logclass.tally's csv): the header (the type,
-- the line, where it is, then the fields), a title per classifier and one for the unclassified
-- lines, and the file names by number.
function M.records_layout(rules, files)
  local header = { "错误类型", "错误信息", "card", "file", "line", "time" }
  for _, f in ipairs(reader.field_names(rules)) do header[#header + 1] = f end
  local titles = {}
  for i, c in ipairs(rules.classifiers) do titles[i] = title_of(c) end
  titles[#rules.classifiers + 1] = title_of(UNCLASSIFIED)
  return { header = header, titles = titles, files = files }
end

--- plog_summary.json as plain data.
function M.data(res)
  local cats = {}
  for id, c in pairs(res.categories) do
    local ex = array()
    for i, e in ipairs(c.examples) do ex[i] = { file = e.file, line = e.line, text = e.text } end
    cats[id] = { count = c.count, title = i18n.t(c.classifier.title), category = c.classifier.category,
                 advice = i18n.t(c.classifier.advice), doc = c.classifier.doc, examples = ex }
  end
  local failures = array()
  for i, f in ipairs(res.failures) do
    failures[i] = { card = f.card, kernel_name = f.kernel_name, origin_op_name = f.origin_op_name,
                    stream_id = f.stream_id, task_id = f.task_id, file = f.file, line = f.line, time = f.time }
  end
  local non_moe = array()
  for i, f in ipairs(res.non_moe_failures) do non_moe[i] = { card = f.card, kernel_name = f.kernel_name, task_id = f.task_id } end
  local unknown = array()
  for i, f in ipairs(res.unknown_kernel_failures) do
    unknown[i] = { card = f.card, stream_id = f.stream_id, task_id = f.task_id, file = f.file, line = f.line }
  end
  local unclassified = array()
  for i, e in ipairs(res.unclassified.examples) do unclassified[i] = { file = e.file, line = e.line, text = e.text } end
  local first_error = {}
  for card, t in pairs(res.first_error) do first_error[tostring(card)] = t end
  local failed = array()
  for i, f in ipairs(res.failed) do failed[i] = { path = f.path, reason = f.reason } end
  local nul = array()
  for i, n in ipairs(res.nul_files) do nul[i] = { path = n.path, bytes = n.bytes } end
  return { input = res.input, files = #res.files, categories = cats, failures = failures,
           non_moe_failures = non_moe, unknown_kernel_failures = unknown, failed = failed, first_error = first_error, nul_bytes = nul,
           unclassified = { count = res.unclassified.count, examples = unclassified },
           failures_dropped = res.failures_dropped, cut_lines = res.cut_lines }
end

--- Write the outputs: formats is a set of "csv" (error_plog.csv, from the records the run kept)
-- and "json" (plog_summary.json). Returns true or nil, message.
function M.write(res, out, formats)
  if formats.csv then
    if not res.records then return nil, i18n.t("plog.no_records", out .. "/error_plog.csv") end
    local ok, err = res.records:save(out .. "/error_plog.csv")
    if not ok then return nil, err end
  end
  if formats.json then
    local jw, jerr = writer.open(out .. "/plog_summary.json")
    if not jw then return nil, jerr end
    jw:write(core.json.encode(M.data(res), { indent = 2 }), "\n")
    local ok, cerr = jw:close()
    if not ok then return nil, cerr end
  end
  return true
end

-- an example's text is cut to a label's length on the console (the JSON keeps what the scan kept)
local function example_lines(out, list)
  for _, e in ipairs(list) do out[#out + 1] = ("    %s:%d: %s"):format(e.file, e.line, fmt.label(e.text)) end
end

--- The console summary, as lines: the files read, each category (most lines first) with its
-- examples, the unclassified lines, each card's failure, the kernels that are not
-- dispatch/combine ones and the cards that named none, and what was capped or cut. max: the failing tasks followed at most.
function M.lines(res, max)
  local t = i18n.t
  local out = { "[INFO] " .. t("plog.files", #res.files, res.input) }
  local ids = {}
  for id in pairs(res.categories) do ids[#ids + 1] = id end
  table.sort(ids, function(a, b)
    local ca, cb = res.categories[a].count, res.categories[b].count
    if ca ~= cb then return ca > cb end
    return a < b
  end)
  for _, id in ipairs(ids) do
    local c = res.categories[id]
    local cl = c.classifier
    local text = t("plog.category", i18n.t(cl.title), c.count)
    if cl.doc then text = t("plog.doc_hint", text, cl.doc) end
    out[#out + 1] = ("[INFO] %s%s"):format(text, cl.advice and (" - " .. i18n.t(cl.advice)) or "")
    example_lines(out, c.examples)
  end
  if res.unclassified.count > 0 then
    out[#out + 1] = "[WARNING] " .. t("plog.unclassified", res.unclassified.count)
    example_lines(out, res.unclassified.examples)
  end
  local unknown = t("plog.unknown")
  for _, f in ipairs(res.failures) do
    out[#out + 1] = "[INFO] " .. t("plog.failure", f.card, f.kernel_name or unknown, f.origin_op_name or unknown,
      f.stream_id or unknown, f.task_id or unknown, f.file, f.line)
  end
  -- every failing card failed on dispatch/combine only when each one's first failing kernel is
  -- known and is one: a card whose first failure names no kernel is named instead
  local unknown_cards = res.unknown_kernel_failures
  if #res.failures > 0 and #res.non_moe_failures == 0 and #unknown_cards == 0 then
    out[#out + 1] = "[INFO] " .. t("plog.all_moe")
  end
  for _, f in ipairs(res.non_moe_failures) do out[#out + 1] = "[ERROR] " .. t("plog.non_moe", f.card, f.kernel_name) end
  if #unknown_cards > 0 then
    out[#out + 1] = "[WARNING] " .. t("plog.unknown_kernel", #unknown_cards, analysis.cards_text(unknown_cards))
  end
  if res.failures_dropped > 0 then out[#out + 1] = "[WARNING] " .. t("plog.failures_capped", max, res.failures_dropped) end
  if res.cut_lines > 0 then out[#out + 1] = "[WARNING] " .. t("plog.cut_lines", res.cut_lines) end
  for _, n in ipairs(res.nul_files) do out[#out + 1] = "[WARNING] " .. t("plog.nul_bytes", n.path, n.bytes) end
  return out
end

return M
