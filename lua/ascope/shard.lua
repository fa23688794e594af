--- Deterministic shards of a job's units (ranks, cards) and the partial results they leave.
--
-- A recipe that can be sharded describes its work as a plan:
--   plan = { units = {{key = "actor/3", files = {PATH, ...}}, ...},  -- one per rank or card
--            context = {...},                                         -- plain data, the same in every shard
--            unit_name = "shard.units.file" }                         -- what a unit is (default: ranks)
-- and gives recipe.work(plan, i) (one unit, as a worker computes it) and
-- recipe.assemble(context, outcomes, ...) (the cross-unit step). A single run is
-- assemble(context, compute(recipe, plan)); a shard saves compute(recipe, plan, {k, n}) with
-- save(); merge reads the parts back with load() and assembles them the same way, so the merged
-- outputs are the single run's by construction.
--
-- A partial result is a folder: manifest.json (format, version, ascope version and build
-- fingerprint, command, input, options, shard, every unit of the plan with its files' sizes and
-- mtimes, and where each record is) and results.bin (records in ascope's column encoding, par.encode: the context, then one
-- record per unit of this shard).
local core = require "ascope_core"
local errors = require "ascope.errors"
local fingerprint = require "ascope.fingerprint"
local t = require("ascope.i18n").t
local fs, par, json = core.fs, core.par, core.json

local M = {}

M.FORMAT = "ascope-partial"
M.FORMAT_VERSION = 1
M.MAX_SHARDS = 100000
M.MANIFEST = "manifest.json"
M.MAX_MANIFEST = 1 << 30
M.DATA = "results.bin"

--- The command-line option every shardable command takes.
M.OPTION = { "shard", arg = "K/N",
             help = "opt.shard.shard" }

-- Options that do not change what a run computes or writes, only where and how fast.
local NOT_RESULT = { output = true, jobs = true, shard = true }

--- "K/N" -> {k = K, n = N}; a usage error otherwise.
function M.parse(text)
  local k, n = tostring(text):match("^%s*(%d+)%s*/%s*(%d+)%s*$")
  k, n = math.tointeger(tonumber(k)), math.tointeger(tonumber(n))
  if not k or not n or n < 1 or n > M.MAX_SHARDS or k < 1 or k > n then
    errors.usage("%s", t("shard.bad_spec", M.MAX_SHARDS, tostring(text)))
  end
  return { k = k, n = n }
end

--- The shard (1..n) of each unit: heaviest unit first to the lightest shard so far (ties: the
-- lower unit index, the lower shard). Weights are bytes; each unit also counts one byte so that
-- empty units spread by count.
function M.assign(weights, n)
  local order = {}
  for i = 1, #weights do order[i] = i end
  table.sort(order, function(a, b)
    if weights[a] ~= weights[b] then return weights[a] > weights[b] end
    return a < b
  end)
  -- a binary heap of shards by (load, shard number)
  local heap, load = {}, {}
  for s = 1, n do heap[s], load[s] = s, 0 end
  local function less(a, b) return load[a] < load[b] or (load[a] == load[b] and a < b) end
  local function down(i)
    while true do
      local l, r, m = 2 * i, 2 * i + 1, i
      if l <= n and less(heap[l], heap[m]) then m = l end
      if r <= n and less(heap[r], heap[m]) then m = r end
      if m == i then return end
      heap[i], heap[m] = heap[m], heap[i]
      i = m
    end
  end
  local owner = {}
  for _, i in ipairs(order) do
    local s = heap[1]
    owner[i] = s
    load[s] = load[s] + weights[i] + 1
    down(1)
  end
  return owner, load
end

--- Sizes and mtimes of each unit's files: units get bytes and files = {{path, size, mtime}}.
function M.describe(units)
  local out = {}
  for i, u in ipairs(units) do
    local files, bytes = {}, 0
    for j, p in ipairs(u.files) do
      local st = fs.stat(p)
      files[j] = { path = p, size = st and st.size or -1, mtime = st and st.mtime or -1 }
      if st and st.size then bytes = bytes + st.size end
    end
    out[i] = { index = i, key = u.key, bytes = bytes, files = files }
  end
  return out
end

--- The unit indexes one shard takes (all of them without a shard), with the described units and
-- each unit's shard.
function M.select(plan, shard)
  local described = M.describe(plan.units)
  local weights = {}
  for i, u in ipairs(described) do weights[i] = u.bytes end
  local owner = M.assign(weights, shard and shard.n or 1)
  local picks = {}
  for i, u in ipairs(described) do
    u.shard = owner[i]
    if not shard or owner[i] == shard.k then picks[#picks + 1] = i end
  end
  return picks, described
end

--- Compute the picked units of a plan in worker processes: outcomes[i] = {ok = result} or
-- {error = message}; a unit's failure is its own. jobs nil: ascope.workers decides (1 in an
-- embedding program unless it says otherwise, the CPUs on the command line).
function M.compute(recipe, plan, picks, jobs)
  local workers = require "ascope.workers"
  local n = workers.count(jobs)
  -- units read at once share the CPUs: each file scan gets its part, not all of them
  local saved = workers.scan_threads
  if math.min(n, #picks) > 1 then workers.scan_threads = workers.share(math.min(n, #picks)) end
  local ok, results, errs = pcall(par.map, picks, function(i)
    local r, err = recipe.work(plan, i)
    if r == nil then error(err, 0) end
    return r
  end, { jobs = n, here = true })
  workers.scan_threads = saved
  if not ok then error(results, 0) end
  local outcomes = {}
  for j, i in ipairs(picks) do
    if results[j] ~= nil then
      outcomes[i] = { ok = results[j] }
    else
      outcomes[i] = { error = tostring(errs[j] or t("shard.unknown_failure")) }
    end
  end
  return outcomes
end

--- The options that decide a run's results, from a command's parsed options and the global ones.
function M.options(opts, ctx)
  local o = {}
  for k, v in pairs(opts) do
    if not NOT_RESULT[k] then o[k] = v end
  end
  o.lang = require("ascope.i18n").lang()
  local dir = ctx and ctx.rules_dir or os.getenv("ASCOPE_RULES_DIR")
  if dir and dir ~= "" then o.rules_dir = dir end
  return o
end

local function version() return require "ascope.version" end

--- Write the partial result folder dir. info: {command, input, options}. Returns true or nil,
-- message.
function M.save(dir, info, plan, shard, picks, described, outcomes)
  local ok, err = fs.mkdirs(dir)
  if not ok then return nil, err end
  os.remove(dir .. "/" .. M.MANIFEST) -- a folder without its manifest is not a part
  local records, offset = {}, 0
  -- the C atomic file: a temporary name renamed into place at close, the first write error
  -- (a full disk) kept and reported then
  local f, ferr = fs.create(dir .. "/" .. M.DATA)
  if not f then return nil, ferr end
  local function put(value)
    local bytes = par.encode(value) -- one record at a time: a rank's can be hundreds of megabytes
    f:write(bytes)
    local at = { offset = offset, length = #bytes }
    offset = offset + #bytes
    return at
  end
  local pok, perr = pcall(function()
    records.context = put(plan.context)
    records.units = {}
    for _, i in ipairs(picks) do
      local at = put(outcomes[i])
      at.unit = i
      records.units[#records.units + 1] = at
    end
  end)
  if not pok then
    f:abort()
    return nil, dir .. "/" .. M.DATA .. ": " .. tostring(perr)
  end
  local cok, cerr = f:close()
  if not cok then return nil, cerr end
  local manifest = {
    format = M.FORMAT, format_version = M.FORMAT_VERSION, ascope_version = version(),
    ascope_build = fingerprint.get(),
    command = info.command, input = info.input, options = info.options,
    shard = { k = shard.k, n = shard.n },
    units = described,
    data = { file = M.DATA, bytes = offset, encoding = "ascope par.encode records, native byte order",
             byte_order = string.pack("=I2", 1) == "\1\0" and "little" or "big",
             context = records.context, records = records.units },
  }
  local mf, merr = fs.create(dir .. "/" .. M.MANIFEST)
  if not mf then return nil, merr end
  mf:write(json.encode(manifest, { indent = 1 }), "\n")
  return mf:close()
end

local function canon(v) return json.encode(v) end

local function read_manifest(part)
  local path = part .. "/" .. M.MANIFEST
  local f = io.open(path, "rb")
  if not f then return nil, t("shard.no_manifest", part) end
  -- a manifest lists every unit of the run: about 500 bytes each
  local size = f:seek("end")
  if not size or size > M.MAX_MANIFEST then
    f:close()
    return nil, t("shard.bad_manifest", path, t("shard.manifest_too_big", tostring(size), M.MAX_MANIFEST))
  end
  f:seek("set", 0)
  local text = f:read("a")
  f:close()
  local ok, m, why = pcall(json.decode, text)
  if not ok then m, why = nil, m end -- decode returns nil and the place of a syntax error; raises on no memory
  if type(m) ~= "table" then
    -- the place in the text ("1:27 (byte 26): invalid JSON ..."), or what the JSON was instead
    why = m == nil and tostring(why):gsub("^%(string%):", "") or t("shard.manifest_not_object")
    return nil, t("shard.bad_manifest", path, why)
  end
  if m.format ~= M.FORMAT then return nil, t("shard.bad_manifest", path, t("shard.format_not", M.FORMAT)) end
  if m.format_version ~= M.FORMAT_VERSION then
    return nil, t("shard.format_version", path, tostring(m.format_version), M.FORMAT_VERSION)
  end
  if type(m.shard) ~= "table" or type(m.units) ~= "table" or type(m.data) ~= "table"
    or type(m.data.records) ~= "table" or type(m.data.context) ~= "table" then
    return nil, t("shard.bad_manifest", path, t("shard.parts_missing"))
  end
  return m
end

-- The first option whose value differs between two option tables, or nil.
local function differing_option(a, b)
  local keys, seen = {}, {}
  for _, o in ipairs({ a, b }) do
    for k in pairs(o) do
      if not seen[k] then seen[k], keys[#keys + 1] = true, k end
    end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if canon(a[k]) ~= canon(b[k]) then
      local function shown(v) return v == nil and t("shard.not_given") or canon(v) end
      return k, shown(a[k]), shown(b[k])
    end
  end
end

-- The first unit that two parts describe differently (another tree, or files changed between
-- the shards' runs), as a message, or nil.
local function differing_unit(a, b)
  for i = 1, math.max(#a, #b) do
    local x, y = a[i], b[i]
    if not x or not y then return t("shard.unit_differs", i, x and x.key or "-", y and y.key or "-") end
    if canon(x) ~= canon(y) then
      for j = 1, math.max(#x.files, #y.files) do
        local fx, fy = x.files[j] or {}, y.files[j] or {}
        if canon(fx) ~= canon(fy) then
          return t("shard.file_differs", x.key, tostring(fx.path),
            tostring(fx.size), tostring(fx.mtime), tostring(fy.path), tostring(fy.size), tostring(fy.mtime))
        end
      end
      return ("%s vs %s"):format(x.key, y.key)
    end
  end
end

local function read_record(f, part, at, size)
  local offset, length = math.tointeger(at.offset), math.tointeger(at.length)
  if not offset or not length or offset < 0 or length < 1 or offset + length > size then
    return nil, t("shard.bad_record", part, tostring(at.offset), tostring(at.length))
  end
  f:seek("set", offset)
  local bytes = f:read(length)
  if not bytes or #bytes ~= length then return nil, t("shard.bad_record", part, offset, length) end
  local ok, v = pcall(par.decode, bytes)
  if not ok then return nil, t("shard.bad_record", part, offset, length) end
  return v
end

--- Read parts and check that they belong together: same format, ascope version, command, input,
-- options, units and shard count, every shard exactly once. Returns {command, input, options,
-- context, outcomes, units, n} or nil, message.
function M.load(parts)
  if #parts == 0 then return nil, t("shard.no_parts") end
  local first, p1, first_units
  -- one manifest at a time beside the first: each lists every unit of the run, and a run of
  -- thousands of ranks in hundreds of shards must not hold them all
  local kept, by_k = {}, {}
  for i, part in ipairs(parts) do
    local m, err = read_manifest(part)
    if not m then return nil, err end
    if not first then
      first, p1, first_units = m, part, canon(m.units)
      if first.ascope_version ~= version() then
        return nil, t("shard.version", p1, tostring(first.ascope_version), version())
      end
      if first.ascope_build ~= fingerprint.get() then
        return nil, t("shard.build", p1, version(), tostring(first.ascope_build), fingerprint.get())
      end
    end
    if m.ascope_version ~= first.ascope_version then
      return nil, t("shard.version", part, tostring(m.ascope_version), tostring(first.ascope_version))
    end
    if m.ascope_build ~= first.ascope_build then
      return nil, t("shard.build", part, version(), tostring(m.ascope_build), tostring(first.ascope_build))
    end
    if m.command ~= first.command then
      return nil, t("shard.differ", p1, part, "command", tostring(first.command), tostring(m.command))
    end
    if m.input ~= first.input then
      return nil, t("shard.differ", p1, part, "input", tostring(first.input), tostring(m.input))
    end
    local k, a, b = differing_option(first.options or {}, m.options or {})
    if k then return nil, t("shard.differ", p1, part, "--" .. k:gsub("_", "-"), a, b) end
    if m.shard.n ~= first.shard.n then
      return nil, t("shard.differ", p1, part, t("shard.n_of"), tostring(first.shard.n), tostring(m.shard.n))
    end
    if i > 1 and canon(m.units) ~= first_units then
      return nil, t("shard.inputs_differ", p1, part, differing_unit(first.units, m.units) or "units")
    end
    local k_ = m.shard.k
    if by_k[k_] then return nil, t("shard.duplicate", k_, m.shard.n, by_k[k_], part) end
    by_k[k_] = part
    kept[i] = { shard = m.shard, data = m.data }
  end
  local n = first.shard.n
  local missing = {}
  for k = 1, n do
    if not by_k[k] then missing[#missing + 1] = ("%d/%d"):format(k, n) end
  end
  if #missing > 0 then return nil, t("shard.missing", table.concat(missing, ", ")) end

  local outcomes, context, context_text, from = {}, nil, nil, {}
  for i, m in ipairs(kept) do
    local part = parts[i]
    local path = part .. "/" .. (m.data.file or M.DATA)
    local f, ferr = io.open(path, "rb")
    if not f then return nil, ferr end
    local size = f:seek("end")
    if size ~= m.data.bytes then
      f:close()
      return nil, t("shard.bad_data", path, tostring(size), tostring(m.data.bytes))
    end
    local ctx, cerr = read_record(f, path, m.data.context, size)
    if ctx == nil then
      f:close()
      return nil, cerr
    end
    local same = canon(ctx)
    if context and same ~= context_text then
      f:close()
      return nil, t("shard.inputs_differ", p1, part, "discovery")
    end
    context, context_text = context or ctx, same
    for _, at in ipairs(m.data.records) do
      local u = math.tointeger(at.unit)
      local unit = u and first.units[u]
      if not unit or unit.shard ~= m.shard.k or from[u] then
        f:close()
        return nil, t("shard.bad_record", path, tostring(at.offset), tostring(at.length))
      end
      local v, rerr = read_record(f, path, at, size)
      if v == nil then
        f:close()
        return nil, rerr
      end
      outcomes[u], from[u] = v, part
    end
    f:close()
  end
  for u, unit in ipairs(first.units) do
    if not outcomes[u] then return nil, t("shard.unit_missing", unit.key, unit.shard, n) end
  end
  return { command = first.command, input = first.input, options = first.options, n = n,
           units = first.units, context = context, outcomes = outcomes }
end

return M
