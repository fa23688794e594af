--- Report layouts: rules/layout_NAME.lua merged with a user's --layout file, sections in order.
local rules = require "ascope.rules"
local writer = require "ascope.report.writer"

local M = {}

function M.load(name, user_file)
  local l, err = rules.load("layout_" .. name, user_file)
  if not l then return nil, err end
  if type(l.sections) ~= "table" then return nil, ("layout %s: sections must be a list"):format(name) end
  local by, list = {}, {}
  for _, s in ipairs(l.sections) do
    if type(s.id) ~= "string" or type(s.kind) ~= "string" then
      return nil, ("layout %s: every section needs an id and a kind"):format(name)
    end
    by[s.id] = s
    list[#list + 1] = s
  end
  if l.order then
    list = {}
    for _, id in ipairs(l.order) do
      if not by[id] then return nil, ("layout %s: order names section %q, which does not exist"):format(name, id) end
      list[#list + 1] = by[id]
    end
  end
  l.sections = list
  return l
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
