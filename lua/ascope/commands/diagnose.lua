--- `ascope diagnose`: every field analysis whose input is given, in one go, with one summary.
local core = require "ascope_core"
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"
local log = require "ascope.log"
local moe_spec = require("ascope.moe").spec
local moe_report = require "ascope.report.moe"
local wait_for = require "ascope.analysis.moe_wait_for"
local reader = require "ascope.ascend.plog"
local ranks = require "ascope.ranks"
local findings = require "ascope.findings"
local writer = require "ascope.report.writer"
local field_html = require "ascope.report.field_html"
local front = require "ascope.commands.front"

local M = {}

local options = {
  { "output", "o", arg = "DIR", default = "ascope_out", help = "opt.diagnose.output" },
  { "profiling-path", arg = "PATH", help = "opt.diagnose.profiling_path" },
  { "plog-path", arg = "PATH", help = "opt.diagnose.plog_path" },
  { "graph-path", arg = "PATH", help = "opt.diagnose.graph_path" },
}
local keys = { PROFILING_PATH = "profiling-path", PLOG_PATH = "plog-path", GRAPH_PATH = "graph-path" }
for _, o in ipairs(moe_spec.options) do
  if o[1] ~= "output" and o[1] ~= "shard" and o[1] ~= "jobs" then options[#options + 1] = o end
end
for k, v in pairs(moe_spec.keys) do keys[k] = v end
-- the outputs of the analyses it runs, then its own page
local outputs = {}
for _, name in ipairs({ "moe", "opjitter", "plog", "graph" }) do
  for _, f in ipairs(require("ascope.commands." .. name).spec.outputs) do outputs[#outputs + 1] = f end
end
outputs[#outputs + 1] = { "diagnose_summary.json", help = "out.diagnose_summary.json" }
outputs[#outputs + 1] = { "diagnose_report.html", help = "out.diagnose_report.html" }

M.spec = {
  name = "diagnose",
  args = "KEY=VALUE ... [-o OUT]",
  summary = "cmd.diagnose.summary",
  details = "cmd.diagnose.details",
  options = options,
  keys = keys,
  outputs = outputs,
  examples = { "ascope diagnose TARGET_DIR=dumps SOC_VERSION=950 PLOG_PATH=logs GRAPH_PATH=graphs -o out" },
}

local array = require("ascope.fmt").array

-- The source of a finding: the analysis it came from, under the step's name.
local function source_of(step, a)
  local an = a.analysis and tostring(a.analysis) or ""
  if an == "" or an == step then return step end
  if an:sub(1, #step + 1) == step .. " " then return an end
  return step .. " " .. an
end

-- Why plog's first errors cannot order the root cards, or nil when they can. moe numbers cards by
-- rank (global), plog by the device number of a log's folder or line (per node): the numbers are
-- taken as the same cards only when no device number is in the logs of two nodes (two homes,
-- ascope.ascend.plog.numbering_clash) and every root card has a first error under its number.
local function plog_distrust(plog_res, root_list)
  local card, a, b = reader.numbering_clash(plog_res.files)
  if card then return i18n.t("diagnose.plog_clash", card, a, b) end
  local missing = {}
  for _, r in ipairs(root_list) do
    if plog_res.first_error[r] == nil then missing[#missing + 1] = r end
  end
  if #missing > 0 then return i18n.t("diagnose.plog_missing", ranks.list_text(missing)) end
  return nil
end

-- The root cards, ordered by the first plog error of each card when plog ran and its numbers can
-- be trusted to be moe's (plog_distrust; else a WARNING says why), else by the dump times; the
-- moe findings about them are redone to say which clock ordered them.
local function roots(moe_res, plog_res, anomalies)
  local edges = moe_res.cross and moe_res.cross.wait_for or {}
  local plog_first, unordered = plog_res and plog_res.first_error, wait_for.roots(edges)
  local why = plog_res and plog_distrust(plog_res, unordered)
  if why then
    plog_first = nil
    -- said only when it changes an order: with no root card there is nothing to order
    if #unordered > 0 then
      anomalies[#anomalies + 1] = { severity = "WARNING", source = "diagnose", analysis = "roots",
                                    message = i18n.t("diagnose.plog_untrusted", why) }
    end
  end
  local first, from = wait_for.first_fail(moe_res.cards, plog_first)
  local list = wait_for.roots(edges, first)
  if from == "plog" then
    for i = #anomalies, 1, -1 do
      if anomalies[i].source == "moe 8" and anomalies[i].card then table.remove(anomalies, i) end
    end
    for i, r in ipairs(list) do
      anomalies[#anomalies + 1] = { severity = i == 1 and "ERROR" or "WARNING", source = "moe 8", card = r, analysis = "8",
        message = i18n.t(i == 1 and "moe.root_first" or "moe.root_other", r, first[r] and tostring(first[r])
          or i18n.t("moe.unknown_time"), i18n.t("moe.time_plog")) }
    end
  end
  moe_res.cross = moe_res.cross or {}
  moe_res.cross.root_cards, moe_res.cross.first_fail, moe_res.cross.first_fail_from = list, first, from
  return list, first, from
end

-- The verdict: root cards, the side each card is in, the plog failures, and the findings of
-- the other analyses that point at the root cards.
local function verdict(results, anomalies)
  local v = { root_cards = array(), stuck = array(), wait_for = array(), plog_failures = array(), related = array() }
  local moe_res, plog_res = results.moe, results.plog
  if moe_res then
    local list, first, from = roots(moe_res, plog_res, anomalies)
    v.first_fail_from = from
    for i, r in ipairs(list) do v.root_cards[i] = r end
    v.first_fail = {}
    for card, t in pairs(first) do v.first_fail[tostring(card)] = t end
    for _, c in ipairs(moe_res.cards) do
      local s = c.stuck_in and c[c.stuck_in]
      v.stuck[#v.stuck + 1] = { card = c.card, side = c.stuck_in or core.json.null,
                                waiting_cores = s and #(s.waiting_cores or {}) or 0 }
    end
    v.wait_for = select(1, moe_report.wait_for_data(moe_res))
  end
  if plog_res then
    for i, f in ipairs(plog_res.failures) do
      v.plog_failures[i] = { card = f.card, kernel_name = f.kernel_name, origin_op_name = f.origin_op_name,
                             stream_id = f.stream_id, task_id = f.task_id, time = f.time }
    end
  end
  local is_root = {}
  for _, r in ipairs(v.root_cards) do is_root[r] = true end
  for _, a in ipairs(anomalies) do
    local step = a.source:match("^(%a+)")
    if step ~= "moe" then
      for _, card in ipairs(a.cards or { a.card }) do
        if is_root[card] then
          v.related[#v.related + 1] = { source = a.source, severity = a.severity, card = card, message = a.message }
          break
        end
      end
    end
  end
  return v
end

local function print_verdict(v)
  local t = i18n.t
  if #v.root_cards == 0 and #v.wait_for == 0 then
    print("[INFO] " .. t("diagnose.verdict_none"))
  else
    print("[INFO] " .. t("moe.verdict")) -- the heading of the wait-for lines, as moe prints it
  end
  for _, text in ipairs(moe_report.wait_for_lines(v.wait_for)) do print("[INFO] " .. text) end
  for _, s in ipairs(v.stuck) do
    if s.waiting_cores > 0 then
      print("[INFO] " .. t("diagnose.stuck", s.card, s.side, t("diagnose.stuck_waiting", s.waiting_cores)))
    end
  end
  for i, r in ipairs(v.root_cards) do
    -- the first root started the hang; the others are candidates, as the anomaly list says
    local time = v.first_fail and v.first_fail[tostring(r)]
    print((i == 1 and "[ERROR] " or "[WARNING] ") .. t("diagnose.root", r, time and tostring(time) or t("moe.unknown_time"),
      t(v.first_fail_from == "plog" and "moe.time_plog" or "moe.time_dump")))
    for _, a in ipairs(v.related) do
      if a.card == r then print(t("diagnose.points_at", r, a.source, a.message)) end
    end
  end
end

local function summary_data(anomalies, v)
  local list = array()
  for i, a in ipairs(anomalies) do
    list[i] = { source = a.source, severity = a.severity, card = a.card, analysis = a.analysis, message = a.message }
  end
  return { anomalies = list, verdict = v }
end

local function write_summary(path, anomalies, v)
  local w, err = writer.open(path)
  if not w then return nil, err end
  w:write(core.json.encode(summary_data(anomalies, v), { indent = 2 }), "\n")
  return w:close()
end

-- Each analysis diagnose composes: its recipe (run, write, anomalies), its command front end
-- (what it prints around the writing), the options of its run and of its write.
local function step(name, run_opts)
  return { name = name, job = require("ascope." .. name), command = require("ascope.commands." .. name), run_opts = run_opts }
end

-- One analysis, in memory: run, what its command prints, write into OUT, the findings. Returns
-- the result (nil when it could not run or write) and whether an input could not be read.
local function compose(st, out, anomalies)
  local res, err = st.job.run(st.run_opts)
  if not res then error(err, 0) end
  front.present(st.command, st.job, res, { output = out, format = st.run_opts.format, encoding = st.run_opts.encoding }, true)
  for _, a in ipairs(st.job.anomalies(res)) do
    if a.severity ~= "DETAIL" and a.severity ~= "INFO" then
      anomalies[#anomalies + 1] = { severity = a.severity, source = source_of(st.name, a), card = a.card,
                                    cards = a.cards, analysis = a.analysis, message = a.message }
    end
  end
  return res, #res.unreadable > 0
end

function M.main(opts, words)
  if #words > 0 then errors.usage("%s", i18n.t("cli.unexpected_parameter", words[1])) end
  local out = opts.output
  local plan = {}
  if opts.target_dir and opts.soc_version then
    plan[#plan + 1] = step("moe", opts)
  elseif opts.target_dir then
    log.warn("%s", i18n.t("diagnose.no_soc"))
  end
  -- profiling data: PROFILING_PATH, else whatever kernel files TARGET_DIR holds (found once:
  -- the run takes the files found here rather than walking TARGET_DIR again)
  local prof, prof_files, prof_unread = opts.profiling_path, nil, nil
  if not prof and opts.target_dir then
    local found, unread = require("ascope.opjitter").find(opts.target_dir)
    if found and #found > 0 then prof, prof_files, prof_unread = opts.target_dir, found, unread end
  end
  if prof then
    plan[#plan + 1] = step("opjitter", { input = prof, files = prof_files, unread = prof_unread, format = "csv,json,html" })
  end
  if opts.plog_path then
    plan[#plan + 1] = step("plog", { input = opts.plog_path })
  end
  if opts.graph_path then
    plan[#plan + 1] = step("graph", { input = opts.graph_path, output = out })
  end
  if #plan == 0 then
    errors.usage("%s", i18n.t("diagnose.needs_input"))
  end
  -- an output folder that cannot be made fails once here, not once per analysis
  local made, merr = core.fs.mkdirs(out)
  if not made then error(merr, 0) end
  local unreadable, anomalies, results = 0, {}, {}
  for _, st in ipairs(plan) do
    print(("[INFO] ======== %s ========"):format(st.name))
    -- an analysis that cannot run (or write) is a finding of the summary; the others go on
    local found = {}
    local ok, res, bad = pcall(compose, st, out, found)
    if not ok then
      unreadable = unreadable + 1
      local msg = errors.is_usage(res) and res.msg or tostring(res)
      log.error("%s", msg)
      anomalies[#anomalies + 1] = { severity = "ERROR", source = st.name, message = msg }
    else
      if bad then unreadable = unreadable + 1 end
      results[st.name] = res
      for _, a in ipairs(found) do anomalies[#anomalies + 1] = a end
    end
  end
  local v = verdict(results, anomalies)
  for i, a in ipairs(anomalies) do a.order = i end
  findings.sort(anomalies, function(a, b) return a.order < b.order end)
  local sok, serr = write_summary(out .. "/diagnose_summary.json", anomalies, v)
  if not sok then error(serr, 0) end
  -- one page with the anomalies and the pictures of the analyses that ran
  local parts = { field_html.anomalies_section(anomalies) }
  if results.moe then parts[#parts + 1] = field_html.wait_for_section(results.moe) end
  if results.opjitter then
    for _, p in ipairs(field_html.opjitter_sections(results.opjitter)) do parts[#parts + 1] = p end
  end
  local hok, herr = field_html.write(out .. "/diagnose_report.html", i18n.t("report.title.diagnose"), parts)
  if not hok then log.warn("%s", herr) end
  print(("[INFO] ======== %s ========"):format(i18n.t("diagnose.summary", #anomalies)))
  for _, a in ipairs(anomalies) do print(("[%s] (%s) %s"):format(a.severity, a.source, a.message)) end
  print_verdict(v)
  print("[INFO] " .. i18n.t("diagnose.results", out))
  return unreadable > 0 and 1 or 0, anomalies, results, summary_data(anomalies, v)
end

return M
