--- Writers of `ascope opjitter`: profiling_all_data.csv, profiling_avg_data.csv,
-- opjitter_summary.json, opjitter_report.html, and the [INFO]/[ERROR] lines.
local core = require "ascope_core"
local writer = require "ascope.report.writer"
local field_html = require "ascope.report.field_html"
local i18n = require "ascope.i18n"
local analysis = require "ascope.analysis.opjitter"
local json = core.json

local M = {}

local array = require("ascope.fmt").array
local function na(v) return v == nil and "NA" or v end

function M.all_csv(res, path)
  local w, err = core.csv.writer(path)
  if not w then return nil, err end
  local header = { "type", "call", "max", "min", "jitter" }
  for _, c in ipairs(res.cards) do header[#header + 1] = "card_" .. c.card end
  w:row(header)
  for _, r in ipairs(res.rows) do
    local row = { r.type, r.call, na(r.max), na(r.min), na(r.jitter) }
    for _, c in ipairs(res.cards) do row[#row + 1] = na(r.values[c.card]) end
    w:row(row)
  end
  return w:close()
end

function M.avg_csv(res, path)
  local w, err = core.csv.writer(path)
  if not w then return nil, err end
  w:row("type", "calls", "valid_calls", "avg_jitter_us")
  for _, a in ipairs(res.avg) do w:row(a.type, a.calls, a.valid, na(a.avg_jitter)) end
  return w:close()
end

--- The largest single-call jitters.
function M.top(res, n)
  local list = {}
  for _, r in ipairs(res.rows) do
    if r.jitter then list[#list + 1] = { type = r.type, call = r.call, jitter = r.jitter } end
  end
  table.sort(list, function(a, b)
    if a.jitter ~= b.jitter then return a.jitter > b.jitter end
    if a.type ~= b.type then return a.type < b.type end
    return a.call < b.call
  end)
  local out = array()
  for i = 1, math.min(n, #list) do out[i] = list[i] end
  return out
end

function M.data(res)
  local avg = {}
  for _, a in ipairs(res.avg) do avg[a.type] = a.avg_jitter or json.null end
  local aiv = array()
  for i, v in ipairs(res.aiv) do
    aiv[i] = { card = v.card, type = v.type, call = v.call, column = v.column, value = v.value or json.null,
               mean = v.mean or json.null, low = v.low or json.null, high = v.high or json.null, kind = v.kind }
  end
  local failed = array()
  for i, f in ipairs(res.failed) do failed[i] = { path = f.path, card = f.card, reason = f.reason } end
  local out = { input = res.input, cards = array(res.found), missing_cards = array(res.missing),
                reference_card = res.reference_card, avg_jitter = avg, top_jitter = M.top(res, res.rules.top_n or 20),
                aiv_violations = aiv, failed = failed }
  if res.aiv_unlisted and #res.aiv_unlisted > 0 then -- only then: the usual document keeps its keys
    out.aiv_not_listed = array()
    for i, g in ipairs(res.aiv_unlisted) do
      out.aiv_not_listed[i] = { card = g.card, type = g.type, column = g.column, count = g.count, kinds = g.kinds }
    end
  end
  return out
end

function M.summary_json(res, path)
  local w, err = writer.open(path)
  if not w then return nil, err end
  w:write(json.encode(M.data(res), { indent = 2 }), "\n")
  return w:close()
end

--- The lines a field engineer reads, in the order the analysis ran (files that could not be
-- read are the command's to report, on stderr).
function M.lines(res)
  local t = require("ascope.i18n").t
  local out = {}
  local function add(level, key, ...) out[#out + 1] = ("[%s] %s"):format(level, t(key, ...)) end
  add("INFO", "opjitter.cards_found", #res.found, res.input)
  for _, c in ipairs(res.cards) do
    if c.data then add("INFO", "field.card_text", c.card, c.data.path)
    else add("ERROR", "opjitter.card_missing", c.card) end
  end
  local avg = {}
  for _, a in ipairs(res.avg) do if a.avg_jitter then avg[#avg + 1] = a end end
  table.sort(avg, function(a, b)
    if a.avg_jitter ~= b.avg_jitter then return a.avg_jitter > b.avg_jitter end
    return a.type < b.type
  end)
  -- a jitter needs two cards' values of a call: with none, say so rather than list nothing
  add("INFO", #avg > 0 and "opjitter.compared" or "opjitter.compared_none", #res.avg)
  for i = 1, math.min(#avg, 10) do
    local a = avg[i]
    add("INFO", "opjitter.avg_line", a.type, a.calls, a.valid, a.avg_jitter)
  end
  for _, v in ipairs(res.aiv) do
    local kind = t("opjitter.kind." .. v.kind)
    if v.kind == "out_of_range" then
      add("ERROR", "opjitter.aiv_range", v.card, v.type, v.call, v.column, tostring(v.value), kind, v.mean, v.low, v.high)
    else
      add("ERROR", "opjitter.aiv_bad", v.card, v.type, v.call, v.column, v.value == nil and "NA" or tostring(v.value), kind)
    end
  end
  for _, g in ipairs(res.aiv_unlisted or {}) do
    out[#out + 1] = ("[ERROR] %s"):format(analysis.unlisted_text(g))
  end
  return out
end

-- the outputs: format, file name, writer(res, path) -> true | nil, message
local OUTPUTS = { { "csv", "profiling_all_data.csv", M.all_csv }, { "csv", "profiling_avg_data.csv", M.avg_csv },
                  { "json", "opjitter_summary.json", M.summary_json },
                  { "html", "opjitter_report.html", function(r, p)
                    return field_html.write(p, i18n.t("report.title.opjitter"), field_html.opjitter_sections(r)) end } }

--- Write the outputs of the formats in the set formats into out. Every output is tried: one
-- that cannot be written does not stop the others. Returns true or nil, the messages.
function M.write(res, out, formats)
  local errs = {}
  for _, w in ipairs(OUTPUTS) do
    if formats[w[1]] then
      local ok, err = w[3](res, out .. "/" .. w[2])
      if not ok then errs[#errs + 1] = tostring(err) end
    end
  end
  if #errs > 0 then return nil, table.concat(errs, "; ") end
  return true
end

return M
