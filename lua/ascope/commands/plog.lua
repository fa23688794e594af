--- `ascope plog`: classify the errors in Ascend plog and device logs.
local plog = require "ascope.plog"
local errors = require "ascope.errors"
local log = require "ascope.log"
local writer = require "ascope.report.writer"
local i18n = require "ascope.i18n"
local core = require "ascope_core"

local M = {}

M.spec = {
  name = "plog",
  args = "PLOG_PATH [-o OUT] [options]",
  summary = "cmd.plog.summary",
  details = "cmd.plog.details",
  options = {
    { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.plog.output" },
    { "plog-path", arg = "PATH", alias_of = "input" },
    { "rules", arg = "FILE", help = "opt.plog.rules" },
    { "format", arg = "LIST", default = "csv,json", help = "opt.plog.format" },
  },
  keys = { PLOG_PATH = "plog-path" },
  outputs = {
    { "error_plog.csv", format = "csv", help = "out.error_plog.csv" },
    { "plog_summary.json", format = "json", help = "out.plog_summary.json" },
  },
  examples = { "ascope plog /root/ascend/log -o out", "ascope plog PLOG_PATH=logs --rules my_classifiers.lua" },
}

local function array(t) return setmetatable(t or {}, { __jsontype = "array" }) end

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
  local unclassified = array()
  for i, e in ipairs(res.unclassified.examples) do unclassified[i] = { file = e.file, line = e.line, text = e.text } end
  local first_error = {}
  for card, t in pairs(res.first_error) do first_error[tostring(card)] = t end
  local failed = array()
  for i, f in ipairs(res.failed) do failed[i] = { path = f.path, reason = f.reason } end
  return { input = res.input, files = #res.files, categories = cats, failures = failures,
           non_moe_failures = non_moe, failed = failed, first_error = first_error,
           unclassified = { count = res.unclassified.count, examples = unclassified },
           failures_dropped = res.failures_dropped, cut_lines = res.cut_lines }
end

function M.main(opts, words)
  local input = opts.input or words[1]
  if not input then errors.usage(i18n.t("cli.needs", "plog", "PLOG_PATH", "plog")) end
  local out = opts.output
  local formats = {}
  for f in (opts.format or "csv,json"):gmatch("[^,%s]+") do
    if f ~= "csv" and f ~= "json" then errors.usage(i18n.t("cli.unknown_format", f, "csv, json")) end
    formats[f] = true
  end
  local res, err = plog.run(input, { rules = opts.rules, records = formats.csv and (out .. "/error_plog.csv") or nil })
  if not res then error(err, 0) end
  if #res.files == 0 then error(i18n.t("plog.no_files", input), 0) end
  if formats.csv then
    local ok, werr = plog.write_records(res)
    if not ok then error(werr, 0) end
  end
  if formats.json then
    local jw, jerr = writer.open(out .. "/plog_summary.json")
    if not jw then error(jerr, 0) end
    jw:write(core.json.encode(M.data(res), { indent = 2 }), "\n")
    local ok, cerr = jw:close()
    if not ok then error(cerr, 0) end
  end

  print("[INFO] " .. i18n.t("plog.files", #res.files, input))
  local ids = {}
  for id in pairs(res.categories) do ids[#ids + 1] = id end
  table.sort(ids, function(a, b)
    local ca, cb = res.categories[a].count, res.categories[b].count
    if ca ~= cb then return ca > cb end
    return a < b
  end)
  local t = i18n.t
  for _, id in ipairs(ids) do
    local c = res.categories[id]
    local cl = c.classifier
    local text = t("plog.category", i18n.t(cl.title), c.count)
    if cl.doc then text = t("plog.doc_hint", text, cl.doc) end
    print(("[INFO] %s%s"):format(text, cl.advice and (" - " .. i18n.t(cl.advice)) or ""))
    for _, e in ipairs(c.examples) do print(("    %s:%d: %s"):format(e.file, e.line, e.text)) end
  end
  if res.unclassified.count > 0 then
    print("[WARNING] " .. t("plog.unclassified", res.unclassified.count))
    for _, e in ipairs(res.unclassified.examples) do print(("    %s:%d: %s"):format(e.file, e.line, e.text)) end
  end
  local unknown = t("plog.unknown")
  for _, f in ipairs(res.failures) do
    print("[INFO] " .. t("plog.failure", f.card, f.kernel_name or unknown, f.origin_op_name or unknown,
      f.stream_id or unknown, f.task_id or unknown, f.file, f.line))
  end
  if #res.failures > 0 then
    if #res.non_moe_failures == 0 then
      print("[INFO] " .. t("plog.all_moe"))
    else
      for _, f in ipairs(res.non_moe_failures) do print("[ERROR] " .. t("plog.non_moe", f.card, f.kernel_name)) end
    end
  end
  if res.failures_dropped > 0 then print("[WARNING] " .. t("plog.failures_capped", plog.MAX_FAILURES, res.failures_dropped)) end
  if res.cut_lines > 0 then print("[WARNING] " .. t("plog.cut_lines", res.cut_lines)) end
  for _, f in ipairs(res.failed) do log.error("%s", f.reason) end
  print(i18n.t("plog.results", out, opts.format or "csv,json"))
  return #res.failed > 0 and 1 or 0, plog.anomalies(res), res, M.data(res)
end

return M
