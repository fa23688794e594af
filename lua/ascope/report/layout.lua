--- Report layouts: rules/layout_NAME.lua merged with a user's --layout file, sections in order.
local rules = require "ascope.rules"
local writer = require "ascope.report.writer"
local html = require "ascope.report.html"
local i18n = require "ascope.i18n"

local M = {}

function M.load(name, user_file)
  local l, err = rules.load("layout_" .. name, user_file)
  if not l then return nil, err end
  if type(l.sections) ~= "table" then return nil, i18n.t("layout.not_list", name) end
  local by, list = {}, {}
  for _, s in ipairs(l.sections) do
    if type(s.id) ~= "string" or type(s.kind) ~= "string" then
      return nil, i18n.t("layout.no_id_kind", name)
    end
    by[s.id] = s
    list[#list + 1] = s
  end
  if l.order then
    list = {}
    for _, id in ipairs(l.order) do
      if not by[id] then return nil, i18n.t("layout.order_unknown", name, id) end
      list[#list + 1] = by[id]
    end
  end
  l.sections = list
  return l
end

--- Check a user's layout file before any work: a file that does not fit its schema is a usage
-- error raised here (exit 2), not a failed report after the analysis.
function M.check(name, user_file)
  if not user_file then return end
  local l, err = M.load(name, user_file)
  if not l then error(err, 0) end
end

-- The table of contents of a page with several ranks: each section, and under a per-rank
-- section a link to each rank's part of it.
local function contents(entries)
  local esc = html.escape
  local out = { '<nav class="toc"><h2>' .. esc(i18n.t("report.contents")) .. "</h2><ul>" }
  for _, e in ipairs(entries) do
    out[#out + 1] = ('<li><a href="#%s">%s</a>'):format(esc(e.id), esc(e.title))
    if e.ranks then
      local links = {}
      for i, r in ipairs(e.ranks) do links[i] = ('<a href="#%s">%s</a>'):format(esc(r.id), esc(r.name)) end
      out[#out + 1] = "<br>" .. table.concat(links, " · ")
    end
    out[#out + 1] = "</li>"
  end
  out[#out + 1] = "</ul></nav>"
  return table.concat(out)
end

--- The page of a layout: an intro paragraph, then each enabled section in order, drawn by
-- o.kinds[kind](res, sec [, rank]). Kinds where o.per_rank(kind) get one section per rank of res.ranks,
-- identified by o.rank_id(r) and titled with o.rank_name(r); the others one section. A page of
-- several ranks starts with a table of contents.
function M.render(res, layout, o)
  local esc = html.escape
  local parts = { o.intro }
  local entries = {}
  for _, sec in ipairs(layout.sections) do
    if not sec.disabled then
      local fn = o.kinds[sec.kind]
      if not fn then error(i18n.t("layout.unknown_kind", o.name, sec.id, sec.kind), 0) end
      local title = i18n.t(sec.title)
      if o.per_rank(sec.kind) then
        local entry = { title = title, ranks = {} }
        for _, r in ipairs(res.ranks) do
          local body = fn(res, sec, r)
          if body then
            local id = sec.id .. "-" .. tostring(o.rank_id(r))
            parts[#parts + 1] = ('<section id="%s"><h2>%s - %s</h2>%s</section>'):format(esc(id), esc(title),
              esc(o.rank_name(r)), body)
            entry.id = entry.id or id
            entry.ranks[#entry.ranks + 1] = { id = id, name = o.rank_name(r) }
          end
        end
        if entry.id then entries[#entries + 1] = entry end
      else
        local body = fn(res, sec)
        if body then
          parts[#parts + 1] = ('<section id="%s"><h2>%s</h2>%s</section>'):format(esc(sec.id), esc(title), body)
          entries[#entries + 1] = { id = sec.id, title = title }
        end
      end
    end
  end
  if #res.ranks > 1 and #entries > 1 then table.insert(parts, 2, contents(entries)) end
  return html.page(i18n.t(layout.title), parts, i18n.lang())
end

--- Render a report with the layout NAME (plus the user's file) and write it to path:
-- render(res, layout) -> the page. A layout that breaks the renderer is an error, not a crash.
function M.write(name, render, res, path, user_file)
  local layout, err = M.load(name, user_file)
  if not layout then return nil, err end
  local ok, page = pcall(render, res, layout)
  if not ok then return nil, tostring(page) end
  local w, werr = writer.open(path)
  if not w then return nil, werr end
  w:write(page)
  return w:close()
end

return M
