--- What every job module (ascope.memory, ascope.timeline, ...) shares: the options of a run
-- read against the job's option spec, and the job's outputs written through report.outputs.
--
-- A job's spec lists its options ({ "rank-list", default = "all", ... }) and its outputs
-- ({ "memory_events.csv", format = "csv" }); run(opts) takes the options by their long names
-- with "-" -> "_" (what the command line gives), and write(result, outdir, {formats = ...})
-- the formats the outputs name.
-- @module ascope.recipe
local outputs = require "ascope.report.outputs"
local t = require("ascope.i18n").t

local M = {}

local function key(name) return (name:gsub("%-", "_")) end

-- a copy of an option value: plain tables (a list of roles) one level deep, so that the job
-- can never write into the caller's; a table with a metatable (a rank set) is kept as it is
local function copy(v)
  if type(v) ~= "table" or getmetatable(v) then return v end
  local c = {}
  for k, x in pairs(v) do c[k] = x end
  return c
end

--- The options of one run: a copy of the caller's opts (the caller's table is never written
-- to), with the spec's default for every option not given. The positional form (path, opts)
-- puts path under `input`.
function M.options(spec, a, b)
  local given = a
  if type(a) == "string" then given = b end
  local o = {}
  for k, v in pairs(given or {}) do o[k] = copy(v) end
  if type(a) == "string" then o.input = a end
  for _, opt in ipairs(spec.options) do
    local k = key(opt[1])
    if opt.default ~= nil and not opt.alias_of and o[k] == nil then o[k] = opt.default end
  end
  return o
end

--- The formats a job writes, as its spec's outputs name them, in their first-named order.
function M.known_formats(spec)
  local list, seen = {}, {}
  for _, out in ipairs(spec.outputs or {}) do
    if out.format and not seen[out.format] then
      seen[out.format] = true
      list[#list + 1] = out.format
    end
  end
  return list
end

--- The formats asked for: a list ({"csv", "json"}), a text as --format gives it ("csv,json")
-- or nil (the spec's default). Returns the list in the order asked (each once), or nil and a
-- message naming the format that the job does not write.
function M.formats(spec, asked)
  if asked == nil then
    for _, opt in ipairs(spec.options) do
      if opt[1] == "format" then asked = opt.default end
    end
  end
  local words = {}
  if type(asked) == "table" then
    for i, f in ipairs(asked) do words[i] = tostring(f) end
  else
    for f in tostring(asked or ""):gmatch("[^,%s]+") do words[#words + 1] = f end
  end
  local known = M.known_formats(spec)
  -- `--format ''` (a text with no format in it) would write nothing and say it was done
  if type(asked) ~= "table" and #words == 0 then return nil, t("outputs.no_format", table.concat(known, ", ")) end
  local is_known = {}
  for _, f in ipairs(known) do is_known[f] = true end
  local list, seen = {}, {}
  for _, f in ipairs(words) do
    if not is_known[f] then return nil, t("outputs.unknown_format", f, table.concat(known, ", ")) end
    if not seen[f] then
      seen[f] = true
      list[#list + 1] = f
    end
  end
  return list
end

--- The formats asked for as a set (format -> true), or nil and the message of formats().
function M.format_set(spec, asked)
  local list, err = M.formats(spec, asked)
  if not list then return nil, err end
  local set = {}
  for _, f in ipairs(list) do set[f] = true end
  return set
end

--- A result's unreadable list from its failures ({path or dirs, reason}): {{path, message}},
-- the path falling back to the first folder of the failure, then to input.
function M.unreadable(failed, input)
  local list = {}
  for i, f in ipairs(failed) do list[i] = { path = f.path or (f.dirs and f.dirs[1]) or input, message = f.reason } end
  return list
end

--- The write of a job whose writer takes the formats as a set: write(res, outdir, formats,
-- wopts) behind the formats check every job shares (an unknown format is nil, message).
function M.writer(spec, write)
  return function(res, outdir, wopts)
    local formats, err = M.format_set(spec, wopts and wopts.formats)
    if not formats then return nil, err end
    return write(res, outdir, formats, wopts)
  end
end

--- Write a job's outputs: writers maps a format to {file, write = function(result, path, wopts),
-- weight = relative cost}; writers.order (a list of formats), when given, is the order the
-- files are listed in, else the order asked. wopts: formats (see formats()), jobs (worker
-- processes; default ascope.workers.default), and what the writers read (layout, ...).
-- Returns true and the paths written, or nil and a message.
function M.write(spec, writers, result, outdir, wopts)
  wopts = wopts or {}
  local list, err = M.formats(spec, wopts.formats)
  if not list then return nil, err end
  if writers.order then
    local asked = {}
    for _, f in ipairs(list) do asked[f] = true end
    list = {}
    for _, f in ipairs(writers.order) do
      if asked[f] then list[#list + 1] = f end
    end
  end
  local todo, paths = {}, {}
  for _, f in ipairs(list) do
    local w = writers[f]
    local path = outdir .. "/" .. w.file
    todo[#todo + 1] = { path = path, weight = w.weight, write = function(p) return w.write(result, p, wopts) end }
    paths[#paths + 1] = path
  end
  local ok, werr = outputs.write(todo, wopts.jobs)
  if not ok then return nil, werr end
  return true, paths
end

return M
