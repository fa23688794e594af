--- Reading compiled graph files: which files under a path are graphs (the kinds of
-- rules/graph.lua), the card of each, and the node names of one file in file order.
-- @module ascope.ascend.graph
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local model = require "ascope.analysis.timeline.model"
local fs = core.fs

local M = {}

--- The kind (an entry of rules.files) of a file name, or nil when it is no graph file.
function M.kind_of(name, rules) return discover.of_kind("graph", name, rules) end

--- The card of a graph file: the last folder or file name part that one of rules.card matches.
function M.card_of(path, rules)
  local parts = {}
  for p in path:gmatch("[^/]+") do parts[#parts + 1] = p end
  for k = #parts, 1, -1 do
    for _, pat in ipairs(rules.card) do
      local n = parts[k]:lower():match(pat)
      if n then return math.tointeger(tonumber(n)) end
    end
  end
end

--- The filtered node names of one file, in file order; nil, message when it cannot be read.
function M.nodes(path, kind, filter)
  local f, err = io.open(path, "rb")
  if not f then return nil, path .. ": " .. tostring(err) end
  local text = f:read("a")
  f:close()
  local out = {}
  local kept = model.matcher(filter)
  for name in text:gmatch(kind.node) do
    if kept(name) then out[#out + 1] = name end
  end
  return out
end

--- The graph files under path (a file is taken as it is), in name order: {path, kind}; files
-- inside skip_dir (an earlier run's output folder inside the input: its graph_summary.json is no
-- card's graph, found by real path whatever way either is spelled) are left out and counted.
-- Returns the list, that count and the messages of the folders that could not be read; or nil,
-- message.
function M.files(path, rules, skip_dir)
  local list, err = discover.files("graph", path, rules)
  if not list then return nil, err end
  local skip = skip_dir and fs.realpath(skip_dir)
  local out, skipped = {}, 0
  for _, f in ipairs(list) do
    local real = skip and fs.realpath(f.path)
    if real and real:sub(1, #skip + 1) == skip .. "/" then
      skipped = skipped + 1
    else
      out[#out + 1] = { path = f.path, kind = f.of }
    end
  end
  return out, skipped, err
end

return M
