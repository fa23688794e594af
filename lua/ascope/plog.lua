--- The plog job: classify the errors of Ascend plog / device logs and find each card's failing
-- kernel. A recipe (see README "Lua API"): spec, run, write, anomalies, rules.
--     local plog = require "ascope.plog"
--     local r = assert(plog.run({ input = "/root/ascend/log" }))
--     for id, c in pairs(r.categories) do print(id, c.count) end
--     assert(plog.write(r, "out"))          -- error_plog.csv and plog_summary.json
-- Reading: ascope.ascend.plog; analysis: ascope.analysis.plog; outputs: ascope.report.plog.
-- @module ascope.plog
local reader = require "ascope.ascend.plog"
local analysis = require "ascope.analysis.plog"
local report = require "ascope.report.plog"
local rules_mod = require "ascope.rules"
local moe_kernels = require "ascope.ascend.moe_kernels"
local recipe = require "ascope.recipe"
local i18n = require "ascope.i18n"

local M = {}

--- The option spec of the job (the command line, help, the man page and the docs read it).
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

function M.rules(user_file)
  local rules, err = rules_mod.load("plog", user_file) -- checked against its schema (ascope.rule_schemas)
  if rules then rules.moe_kernels = moe_kernels.or_default(rules.moe_kernels) end
  return rules, err
end

-- At most this many failures (distinct failing card and task, and cards with kernel or op lines
-- waiting for a task) are followed; the lines naming one more are counted (failures_dropped) and
-- reported.
M.MAX_FAILURES = 10000

-- the reader's pieces, as the job offered them before the split
M.parse_line, M.field_names, M.classifier, M.files = reader.parse_line, reader.field_names, reader.classifier, reader.files

--- Classify every log file under opts.input.
-- @tparam table|string opts `input` (a log file or a folder of them), `rules` (a user rule file),
-- `format` (the outputs `write` will be asked for; without csv no records are kept). The form
-- run(path, opts) works too.
-- @tparam[opt] table more the options, in the form run(path, opts)
-- @treturn table `{categories = {id -> {count, classifier, examples}}, record_count,
-- unclassified = {count, examples}, failures` (one per failing card and task)`, failures_dropped,
-- cut_lines, non_moe_failures, unknown_kernel_failures` (cards whose first failure names no
-- kernel and no op)`, first_error` (card -> time of its first [ERROR] line)`, files,
-- failed, unreadable, records}`. The records of error_plog.csv (one row per line and category)
-- wait in a spool, an anonymous temporary file, until `write`: memory does not grow with the
-- number of lines found, and no file is named before `write`.
-- @treturn[2] nil when the input cannot be used at all (no such path, no log file, bad rules)
-- @treturn[2] string why
function M.run(opts, more)
  opts = recipe.options(M.spec, opts, more)
  local path = opts.input
  if not path then return nil, i18n.t("plog.no_input") end
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local files, ferr = reader.files(path, rules)
  if not files then return nil, ferr end
  if #files == 0 and #ferr == 0 then return nil, i18n.t("plog.no_files", path) end
  local classifier, cerr, number = reader.classifier(rules)
  if not classifier then return nil, i18n.t("plog.rules_error", cerr) end
  local formats, ferr2 = recipe.format_set(M.spec, opts.format)
  if not formats then return nil, ferr2 end
  local csv = formats.csv and report.records_layout(rules, files) or nil
  local res, err = analysis.classify(files, rules, classifier, number, csv, M.MAX_FAILURES)
  if not res then return nil, err end
  res.input = path
  -- a folder that could not be read may hold logs: the run fails, what was read is kept
  for _, why in ipairs(ferr) do res.failed[#res.failed + 1] = { path = path, reason = why } end
  res.unreadable = recipe.unreadable(res.failed)
  return res
end

local write = recipe.writer(M.spec, report.write)

--- Write error_plog.csv and plog_summary.json into outdir.
-- @tparam table res a result of `run`
-- @tparam string outdir the output folder (made when missing)
-- @tparam[opt] table wopts `formats` (a list of "csv", "json"; default both)
-- @return true, or nil and a message
function M.write(res, outdir, wopts) return write(res, outdir, wopts) end

--- Findings: {severity, card, analysis, message}: a WARNING per category found (with its count)
-- and for the unclassified [ERROR] lines, an ERROR per card whose first failing kernel (the
-- earliest) is not a dispatch/combine one, a WARNING naming the cards whose first failure names
-- no kernel.
function M.anomalies(res) return analysis.anomalies(res, M.MAX_FAILURES) end

return M
