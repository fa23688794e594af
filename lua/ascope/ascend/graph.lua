--- Reading compiled graph files: which files under a path are graphs (the kinds of
-- rules/graph.lua), the card of each, and the node names of one file in file order.
-- @module ascope.ascend.graph
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local model = require "ascope.analysis.timeline.model"
local fs = core.fs
local i18n = require "ascope.i18n"

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

-- The file is read a block at a time, each block searched with the tail of the one before
-- (OVERLAP bytes) after it, so that a match across the cut is found whole: the matches are
-- those of one search of the whole text, for matches of up to OVERLAP bytes (a node name of a
-- few hundred). A 165 MB graph file read whole took 629 MB.
M.BLOCK, M.OVERLAP = 4 << 20, 1 << 20

--- The filtered node names of one file, in file order; nil, message when it cannot be read,
-- holds no node name at all (empty, another encoding, not a graph: compared, it would read as a
-- card with no nodes and fail the comparison for nothing), is no valid JSON when its kind is
-- (kind.json: a graph cut short or damaged, named with the byte where it stops being JSON: read
-- as it is, it would be a card with fewer nodes) or does not end as its kind ends (kind.ends, a
-- Lua pattern the file's last bytes must match).
function M.nodes(path, kind, filter)
  local f, err = io.open(path, "rb")
  if not f then return nil, path .. ": " .. tostring(err) end
  local out = {}
  local kept = model.matcher(filter)
  -- gmatch, which read whole files, took a leading ^ as a plain character: find would anchor it
  -- at each block's start
  local node = kind.node:gsub("^%^", "%%^")
  local text, eof, found, tail = "", false, 0, ""
  -- the JSON is checked in this one pass; its first error is told once the nodes are counted (a
  -- file with no node name at all is named as such, whatever its JSON)
  local checker = kind.json and core.json.checker(path)
  local jerr
  while not eof do
    local block, rerr = f:read(M.BLOCK)
    if rerr then
      f:close()
      return nil, path .. ": " .. tostring(rerr)
    end
    eof = block == nil
    if block and checker and not jerr then
      local ok, e = checker:feed(block)
      if not ok then jerr = e end
    end
    text = text .. (block or "")
    -- the text kept from round to round holds the file's last bytes at the end
    if eof then tail = text:sub(-256) end
    -- matches that start before `cut` are this round's; the rest waits for more text
    local cut, at = eof and #text + 1 or #text - M.OVERLAP + 1, 1
    while at <= #text do
      local s, e, name = text:find(node, at)
      if not s or s >= cut then break end
      name = name or text:sub(s, e) -- a pattern without a capture gives the whole match
      found = found + 1
      if kept(name) then out[#out + 1] = name end
      at = e >= s and e + 1 or s + 1 -- an empty match moves on a byte, as gmatch does
    end
    text = text:sub(math.max(at, cut))
  end
  f:close()
  if found == 0 then return nil, i18n.t("graph.no_nodes", path, kind.id) end
  if checker and not jerr then
    local ok, e = checker:finish()
    if not ok then jerr = e end
  end
  if jerr then return nil, jerr end
  if kind.ends and not tail:find(kind.ends) then return nil, i18n.t("graph.cut", path, kind.id) end
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
