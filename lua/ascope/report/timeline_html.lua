--- timeline_report.html: the timeline results drawn as the layout (rules/layout_timeline.lua) says.
-- The table of ranks, the findings and the dashboard are drawn here; every other section is a
-- kind that a dimension draws (analysis/timeline/dimensions/).
local svg = require "ascope.report.svg"
local html = require "ascope.report.html"
local layout_mod = require "ascope.report.layout"
local analysis = require "ascope.analysis.timeline"
local dimensions = require "ascope.analysis.timeline.dimensions"
local report = require "ascope.report.timeline"
local fmt = require "ascope.fmt"
local i18n = require "ascope.i18n"

local M = {}
local esc = html.escape

local t = i18n.t
local header = html.header

local function name(r) return r.role ~= "" and ("%s rank %s"):format(r.role, r.rank) or ("rank " .. r.rank) end
local function pct(x) return x and fmt.pct(x) or "n/a" end

local KINDS = {}

function KINDS.rank_table(res)
  local head = { t("report.timeline.rank") }
  for _, k in ipairs(analysis.DASHBOARD_KEYS) do head[#head + 1] = k end
  head[#head + 1] = t("report.timeline.step_ms")
  local rows = {}
  for _, r in ipairs(res.ranks) do
    local row = { name(r) }
    for _, k in ipairs(analysis.DASHBOARD_KEYS) do row[#row + 1] = r.dashboard[k] and pct(r.dashboard[k]) or "" end
    row[#row + 1] = report.step_ms(r)
    rows[#rows + 1] = row
  end
  local out = { html.table(head, rows) }
  for _, f in ipairs(res.failed) do
    out[#out + 1] = ('<p class="warn">%s</p>'):format(esc(t("report.failed_rank", tostring(f.rank or "?"), f.role or "",
      f.reason)))
  end
  return table.concat(out)
end

local function value_text(v)
  if type(v) ~= "number" then return tostring(v) end
  if v == math.floor(v) and math.abs(v) < 1e15 then return ("%d"):format(v) end
  return ("%.4g"):format(v)
end

-- Every rule that fired, once, with the ranks it fired on (and each rank's value); the finding,
-- action and evidence are those of the first of them.
function KINDS.findings(res)
  local by, order, roles, nroles = {}, {}, {}, 0
  for _, r in ipairs(res.ranks) do
    if not roles[r.role] then roles[r.role], nroles = true, nroles + 1 end
  end
  -- the role is worth its room only when the ranks have several
  local function who(r) return nroles > 1 and name(r) or ("rank " .. r.rank) end
  for _, r in ipairs(res.ranks) do
    for _, f in ipairs(r.findings) do
      local g = by[f.id]
      if not g then
        g = { first = f, ranks = {} }
        by[f.id] = g
        order[#order + 1] = f.id
      end
      g.ranks[#g.ranks + 1] = t("report.timeline.finding_ranks", who(r), value_text(f.value))
    end
  end
  if #order == 0 then return "<p>" .. esc(t("report.timeline.no_rule")) .. "</p>" end
  local sev = { error = 1, warning = 2, info = 3 }
  table.sort(order, function(a, b)
    local sa, sb = sev[by[a].first.severity] or 9, sev[by[b].first.severity] or 9
    if sa ~= sb then return sa < sb end
    return a < b
  end)
  local rows = {}
  for i, id in ipairs(order) do
    local f = by[id].first
    rows[i] = { "⚠ " .. f.id, f.severity, table.concat(by[id].ranks, "; "), f.finding, f.action or "",
                report.evidence_text(f.evidence) }
  end
  return html.table(header("report.timeline.findings_header"), rows)
end

function KINDS.dashboard(_, _, r)
  local rows = {}
  local fired = {}
  for _, f in ipairs(r.findings) do fired[f.metric] = true end
  for _, k in ipairs(analysis.DASHBOARD_KEYS) do
    local v = r.dashboard[k]
    local hit = fired[k] or fired[analysis.DASHBOARD_RULE_METRIC[k] or k]
    if v ~= nil then rows[#rows + 1] = { k, ("%.4f"):format(v), pct(v) .. (hit and " ⚠" or "") } end
  end
  return html.table(header("report.timeline.dashboard_header"), rows)
end

-- what every dimension's HTML kinds may use
local KIT = { t = t, esc = esc, pct = pct, svg = svg, html = html, header = header }

-- The sections of the page: the layout's, plus the default section of each registered
-- dimension that the layout does not place (a layout with `order` shows only what it lists).
local function sections_of(layout)
  if layout.order then return layout.sections end
  local list, has = {}, {}
  for i, sec in ipairs(layout.sections) do
    list[i] = sec
    has[sec.id] = true
  end
  for _, d in ipairs(dimensions.list) do
    local sec = d.section
    if sec and not has[sec.id] then
      -- its title ({en = ..., zh = ...}) is registered into the catalogue as a rule file's is
      if type(sec.title) == "table" then
        local copy = {}
        for k, v in pairs(sec) do copy[k] = v end
        copy.title = i18n.register("rule.timeline_dimension." .. d.id .. ".title", sec.title)
        sec = copy
      end
      local at = #list + 1
      for i, x in ipairs(list) do
        if x.id == sec.after then at = i + 1 end
      end
      table.insert(list, at, sec)
      has[sec.id] = true
    end
  end
  return list
end

function M.render(res, layout)
  local kinds = {}
  for kind, fn in pairs(dimensions.html_kinds()) do
    kinds[kind] = function(rs, sec, r) return fn(rs, sec, r, KIT) end
  end
  for kind, fn in pairs(KINDS) do kinds[kind] = fn end
  local page = {}
  for k, v in pairs(layout) do page[k] = v end
  page.sections = sections_of(layout)
  return layout_mod.render(res, page, {
    name = "timeline", kinds = kinds, rank_name = name,
    -- the table of all ranks and the findings (with the ranks each applies to) are drawn once
    per_rank = function(kind) return kind ~= "rank_table" and kind ~= "findings" end,
    rank_id = function(r) return r.rank end,
    intro = "<p>" .. esc(t("report.timeline.intro")):format("<code>" .. esc(res.input) .. "</code>", #res.ranks) .. "</p>",
  })
end

function M.write(res, path, layout_file)
  return layout_mod.write("timeline", M.render, res, path, layout_file)
end

return M
