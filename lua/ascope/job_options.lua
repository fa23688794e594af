--- The options a job's run(opts) works with: a copy of the caller's (never written into), in the
-- spec's names (long names with - as _), the spec's defaults for those not given; the legacy
-- positional form run(path, opts) gives opts.input = path.
-- @module ascope.job_options
local M = {}

--- The key of a spec option in opts: "soc-version" -> "soc_version"; an alias (plog-path) is
-- the option it stands for (input).
local function key_of(o) return (o.alias_of or o[1]):gsub("-", "_") end
M.key_of = key_of

--- opts for run: spec is the job's spec; a is opts, or the input path with b the opts.
function M.resolve(spec, a, b)
  local given = a
  if type(a) ~= "table" then given = b or {} end
  local opts = {}
  for k, v in pairs(given) do opts[k] = v end
  if type(a) == "string" then opts.input = a end
  for _, o in ipairs(spec.options) do
    local k = key_of(o)
    if opts[k] == nil and o.default ~= nil then opts[k] = o.default end
  end
  return opts
end

--- The formats a write is asked for, as a set: wopts.formats (a list, or "csv,json" text), else
-- the spec's --format default; an unknown name is an error naming it and the known ones.
function M.formats(spec, wopts)
  local known, default = {}, nil
  for _, o in ipairs(spec.options) do
    if o[1] == "format" then default = o.default end
  end
  for _, o in ipairs(spec.outputs or {}) do if o.format then known[o.format] = true end end
  local list = wopts and wopts.formats or default or ""
  if type(list) == "string" then
    local t = {}
    for f in list:gmatch("[^,%s]+") do t[#t + 1] = f end
    list = t
  end
  local set = {}
  for _, f in ipairs(list) do
    if not known[f] then
      local names = {}
      for n in pairs(known) do names[#names + 1] = n end
      table.sort(names)
      return nil, ("%s: unknown output format %q (%s)"):format(spec.name, tostring(f), table.concat(names, ", "))
    end
    set[f] = true
  end
  return set
end

return M
