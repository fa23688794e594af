--- `ascope diagnose`: every field analysis whose input is given, in one go, with one summary.
local core = require "ascope_core"
local errors = require "ascope.errors"
local i18n = require "ascope.i18n"
local log = require "ascope.log"
local moe_cmd = require "ascope.commands.moe"
local field_html = require "ascope.report.field_html"

local M = {}

local options = {
  { "output", "o", arg = "DIR", default = "ascope_out", help = "folder for all results" },
  { "profiling-path", arg = "PATH", help = "kernel_details.csv / op_summary_*.csv folder (default: TARGET_DIR)" },
  { "plog-path", arg = "PATH", help = "plog folder" },
  { "graph-path", arg = "PATH", help = "graph files folder" },
}
local keys = { PROFILING_PATH = "profiling-path", PLOG_PATH = "plog-path", GRAPH_PATH = "graph-path" }
for _, o in ipairs(moe_cmd.spec.options) do
  if o[1] ~= "output" then options[#options + 1] = o end
end
for k, v in pairs(moe_cmd.spec.keys) do keys[k] = v end
-- the outputs of the analyses it runs, then its own page
local outputs = {}
for _, name in ipairs({ "moe", "opjitter", "plog", "graph" }) do
  for _, f in ipairs(require("ascope.commands." .. name).spec.outputs) do outputs[#outputs + 1] = f end
end
outputs[#outputs + 1] = { "diagnose_report.html", help = { en = "every anomaly, most severe first, with the opjitter charts",
                                                          zh = "按严重程度排列的所有异常及 opjitter 图表" } }

M.spec = {
  name = "diagnose",
  args = "KEY=VALUE ... [-o OUT]",
  summary = {
    en = "run moe, opjitter, plog and graph on whatever inputs are given, with one summary of every anomaly",
    zh = "按给定输入依次运行 moe、opjitter、plog、graph 分析，并汇总所有异常",
  },
  details = {
    en = [[Takes the union of the parameters of moe (TARGET_DIR, SOC_VERSION, ...), opjitter (PROFILING_PATH,
default TARGET_DIR), plog (PLOG_PATH) and graph (GRAPH_PATH), and runs every analysis whose input is
given, in that order, announcing each. All outputs go to one OUT; the run ends with every anomaly
found, most severe first, with the analysis it came from. Exit code 0 when the analyses ran
(findings are reported, not failures), 1 when an input could not be read.]],
    zh = [[合并 moe、opjitter、plog、graph 的参数，按顺序运行所有给出输入的分析，输出到同一 OUT 目录，最后按严重程度
汇总所有异常及其来源。分析能运行时退出码为 0，有输入无法读取时为 1。]],
  },
  options = options,
  keys = keys,
  outputs = outputs,
  examples = { "ascope diagnose TARGET_DIR=dumps SOC_VERSION=950 PLOG_PATH=logs GRAPH_PATH=graphs -o out" },
}

local RANK = { ERROR = 1, WARNING = 2, INFO = 3 }

local function load(path)
  local doc = core.json.load(path)
  return type(doc) == "table" and doc or nil
end

-- anomalies from each analysis' summary file, with where they came from
local COLLECT = {
  moe = function(out, list)
    local s = load(out .. "/moe_summary.json")
    for _, a in ipairs(s and s.anomalies or {}) do
      if a.severity ~= "DETAIL" then list[#list + 1] = { severity = a.severity, source = "moe " .. a.analysis, message = a.message } end
    end
  end,
  opjitter = function(out, list)
    local s = load(out .. "/opjitter_summary.json")
    if not s then return end
    for _, c in ipairs(s.missing_cards or {}) do
      list[#list + 1] = { severity = "ERROR", source = "opjitter", message = ("card %d has no profiling data"):format(c) }
    end
    for _, v in ipairs(s.aiv_violations or {}) do
      list[#list + 1] = { severity = "ERROR", source = "opjitter aiv",
        message = ("card %d %s call %d: %s = %s (%s)"):format(v.card, v.type, v.call, v.column, tostring(v.value), v.kind) }
    end
  end,
  plog = function(out, list)
    local s = load(out .. "/plog_summary.json")
    if not s then return end
    local ids = {}
    for id in pairs(s.categories or {}) do ids[#ids + 1] = id end
    table.sort(ids)
    for _, id in ipairs(ids) do
      local c = s.categories[id]
      list[#list + 1] = { severity = "WARNING", source = "plog " .. id, message = ("%s: %d line(s)"):format(c.title, c.count) }
    end
    for _, f in ipairs(s.non_moe_failures or {}) do
      list[#list + 1] = { severity = "ERROR", source = "plog",
        message = ("card %d failed on %s, not on a dispatch/combine kernel"):format(f.card, tostring(f.kernel_name)) }
    end
  end,
  graph = function(out, list)
    local s = load(out .. "/graph_summary.json")
    for _, p in ipairs(s and s.pairs or {}) do
      if p.verdict ~= "identical" then
        list[#list + 1] = { severity = "ERROR", source = "graph",
          message = ("card %d vs card %d: %s%s"):format(p.a, p.b, p.verdict == "order" and "same nodes in another order"
            or "node counts differ", p.first_divergence and (" from index " .. p.first_divergence) or "") }
      end
    end
  end,
}

function M.main(opts, words, ctx)
  if #words > 0 then errors.usage("unexpected argument %q (parameters are KEY=VALUE)", words[1]) end
  if not (ctx and ctx.lang) then i18n.set("zh") end
  local out = opts.output
  local plan = {}
  if opts.target_dir and opts.soc_version then
    plan[#plan + 1] = { "moe", "ascope.commands.moe", opts }
  elseif opts.target_dir then
    log.warn("TARGET_DIR without SOC_VERSION: the window analysis is skipped")
  end
  -- profiling data: PROFILING_PATH, else whatever kernel files TARGET_DIR holds
  local prof = opts.profiling_path
  if not prof and opts.target_dir then
    local found = require("ascope.opjitter").find(opts.target_dir)
    if found and #found > 0 then prof = opts.target_dir end
  end
  if prof then
    plan[#plan + 1] = { "opjitter", "ascope.commands.opjitter", { input = prof, output = out, format = "csv,json,html" } }
  end
  if opts.plog_path then plan[#plan + 1] = { "plog", "ascope.commands.plog", { input = opts.plog_path, output = out } } end
  if opts.graph_path then plan[#plan + 1] = { "graph", "ascope.commands.graph", { input = opts.graph_path, output = out } } end
  if #plan == 0 then
    errors.usage("ascope diagnose needs at least one of TARGET_DIR + SOC_VERSION, PROFILING_PATH, PLOG_PATH, GRAPH_PATH")
  end
  local unreadable, anomalies = 0, {}
  for _, step in ipairs(plan) do
    print(("[INFO] ======== %s ========"):format(step[1]))
    local ok, code = pcall(require(step[2]).main, step[3], {}, ctx)
    if not ok then
      unreadable = unreadable + 1
      local msg = errors.is_usage(code) and code.msg or tostring(code)
      print("[ERROR] " .. msg)
      anomalies[#anomalies + 1] = { severity = "ERROR", source = step[1], message = msg }
    else
      if code ~= 0 then unreadable = unreadable + 1 end
      COLLECT[step[1]](out, anomalies)
    end
  end
  for i, a in ipairs(anomalies) do a.order = i end
  table.sort(anomalies, function(a, b)
    if RANK[a.severity] ~= RANK[b.severity] then return (RANK[a.severity] or 9) < (RANK[b.severity] or 9) end
    return a.order < b.order
  end)
  -- one page with the anomalies and the pictures of the analyses that ran
  local parts = { field_html.anomalies_section(anomalies) }
  for _, step in ipairs(plan) do
    if step[1] == "opjitter" then
      local res = require("ascope.opjitter").run(prof, {})
      if res then for _, p in ipairs(field_html.opjitter_sections(res)) do parts[#parts + 1] = p end end
    end
  end
  local hok, herr = field_html.write(out .. "/diagnose_report.html", "ascope diagnose report", parts)
  if not hok then log.warn("%s", herr) end
  print(("[INFO] ======== summary: %d anomal%s ========"):format(#anomalies, #anomalies == 1 and "y" or "ies"))
  for _, a in ipairs(anomalies) do print(("[%s] (%s) %s"):format(a.severity, a.source, a.message)) end
  print(("[INFO] results in %s"):format(out))
  return unreadable > 0 and 1 or 0
end

return M
