--- Checking a table of data against a declared shape (the schemas of the rule files). A shape is
-- built from the constructors below; check(value, shape, opts) returns nil or a message that
-- names the place: the rule's id when the place is inside a list of rules, and the key.
--   local S = require "ascope.schema"
--   local shape = S.record({ top_n = S.integer({ min = 1 }), rules = S.rules({ id = S.string(), value = S.number() }) })
--   local err = S.check(data, shape, { partial = false })
-- With opts.partial (a user file over the bundled one) required keys may be left out, and an
-- entry of a rule list may change an existing rule by id (opts.base holds the bundled table):
-- an entry whose id the bundled list does not have is a new rule and must be complete.
-- @module ascope.schema
local pattern = require "ascope.pattern"
local t = require("ascope.i18n").t

local M = {}

-- kind: the locale key of what the value must be ("rules.kind_string": "a string")
local function leaf(kind, check)
  return function(o)
    o = o or {}
    return { kind = kind, check = check, min = o.min, max = o.max, values = o.values, test = o.test }
  end
end

local function range(v, s)
  if s.min and v < s.min then return t("rules.below_min", v, s.min) end
  if s.max and v > s.max then return t("rules.above_max", v, s.max) end
end

M.string = leaf("rules.kind_string", function(v) if type(v) ~= "string" then return "" end end)
M.boolean = leaf("rules.kind_boolean", function(v) if type(v) ~= "boolean" then return "" end end)
M.number = leaf("rules.kind_number", function(v, s)
  if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then return "" end
  return range(v, s)
end)
M.integer = leaf("rules.kind_integer", function(v, s)
  if math.type(v) ~= "integer" then return "" end
  return range(v, s)
end)
--- One of a set of strings (o.values).
M.enum = leaf("rules.kind_enum", function(v, s)
  for _, x in ipairs(s.values) do
    if v == x then return nil end
  end
  local shown = {}
  for i, x in ipairs(s.values) do shown[i] = ("%q"):format(x) end
  return t("rules.not_one_of", type(v) == "string" and ("%q"):format(v) or tostring(v), table.concat(shown, ", "))
end)
--- A Lua pattern: well formed and not too costly (see ascope.pattern).
M.pattern = leaf("rules.kind_pattern", function(v)
  if type(v) ~= "string" then return "" end
  local ok, why = pattern.check(v)
  if not ok then return t("rules.bad_pattern", v, why) end
end)

--- A POSIX extended regular expression (case-insensitive), compiled by the C primitive
-- (ascope_core.regex) that will run it: its error is regcomp's.
M.regex = leaf("rules.kind_regex", function(v)
  if type(v) ~= "string" then return "" end
  local re, err = require("ascope_core").regex.compile(v, "i")
  if not re then return t("rules.bad_regex", v, err) end
end)

function M.list(item, o) return { kind = "list", item = item, min = o and o.min } end
--- A table whose keys are free (o.keys: the shape of the keys, default a string) and values item.
function M.map(item, o) return { kind = "map", item = item, keys = o and o.keys or M.string() } end
--- A table with known keys; o.required lists the keys that must be there.
function M.record(fields, o)
  return { kind = "record", fields = fields, required = o and o.required or {}, test = o and o.test }
end
--- A list of records that merges by id (rules, checks, classifiers, sections).
function M.rules(fields, o)
  local f = { id = M.string(), disabled = M.boolean() }
  for k, v in pairs(fields) do f[k] = v end
  local req = { "id" }
  for _, k in ipairs(o and o.required or {}) do req[#req + 1] = k end
  return { kind = "rules", item = M.record(f, { required = req, test = o and o.test }) }
end
--- The first of several shapes that fits.
function M.either(...) return { kind = "either", options = { ... } } end
--- {en = TEXT, zh = TEXT}: a text a person reads, registered into the message catalogue when
-- its rule file is loaded (ascope.rules)
function M.text()
  local s = M.record({ en = M.string(), zh = M.string() }, { required = { "en" } })
  s.is_text = true
  return s
end

local function describe(s)
  if s.kind == "list" or s.kind == "rules" then return t("rules.kind_list") end
  if s.kind == "map" or s.kind == "record" then return t("rules.kind_table") end
  if s.kind == "either" then
    local d = {}
    for i, o in ipairs(s.options) do d[i] = describe(o) end
    return table.concat(d, t("rules.or"))
  end
  return t(s.kind)
end

local function keys_of(fields)
  local k = {}
  for name in pairs(fields) do k[#k + 1] = name end
  table.sort(k)
  return table.concat(k, ", ")
end

local check

local function join(path, key)
  if type(key) == "number" then return ("%s[%d]"):format(path, key) end
  return path == "" and key or path .. "." .. key
end

-- ctx: {partial, rule (the id of the rule we are in)}; returns nil or {path, rule, message}
check = function(v, s, path, ctx, base)
  local function fail(msg, mismatch) return { path = path, rule = ctx.rule, message = msg, mismatch = mismatch } end
  if s.kind == "either" then
    -- the error of the first option of the right type, else "must be A or B"
    for _, o in ipairs(s.options) do
      local e = check(v, o, path, ctx, base)
      if not e then return nil end
      if not e.mismatch then return e end
    end
    return fail(t("rules.must_be", describe(s), type(v)), true)
  end
  if s.check then
    local e = s.check(v, s)
    if e == "" then
      return fail(t("rules.must_be", t(s.kind), type(v) == "string" and ("%q"):format(v) or type(v)), true)
    end
    if e then return fail(e) end
    if s.test then
      e = s.test(v)
      if e then return fail(e) end
    end
    return nil
  end
  if type(v) ~= "table" then return fail(t("rules.must_be", describe(s), type(v)), true) end
  if s.kind == "list" then
    local n = #v
    for k in pairs(v) do
      if math.type(k) ~= "integer" or k < 1 or k > n then
        return fail(t("rules.not_list", tostring(k)))
      end
    end
    if s.min and n < s.min and not ctx.partial then return fail(t("rules.min_entries", s.min)) end
    for i = 1, n do
      local e = check(v[i], s.item, join(path, i), ctx, nil)
      if e then return e end
    end
  elseif s.kind == "map" then
    for k, x in pairs(v) do
      local e = check(k, s.keys, join(path, tostring(k)), ctx, nil)
      if e then return e end
      e = check(x, s.item, join(path, k), ctx, base and base[k])
      if e then return e end
    end
  elseif s.kind == "record" then
    for k, x in pairs(v) do
      local f = type(k) == "string" and s.fields[k]
      if not f then
        return { path = join(path, type(k) == "string" and k or tostring(k)), rule = ctx.rule,
                 message = t("rules.unknown_key", type(k) == "string" and ("%q"):format(k) or tostring(k),
                   keys_of(s.fields)) }
      end
      local e = check(x, f, join(path, k), ctx, base and base[k])
      if e then return e end
    end
    if not ctx.partial or ctx.new_rule then
      for _, k in ipairs(s.required) do
        if v[k] == nil then
          local e = fail(t("rules.missing_key", k))
          e.missing = true
          return e
        end
      end
    end
    if s.test and (not ctx.partial or ctx.new_rule) then
      local e = s.test(v)
      if e then return fail(e) end
    end
  elseif s.kind == "rules" then
    local known, ids = {}, {}
    for _, r in ipairs(base or {}) do
      if type(r) == "table" and r.id ~= nil then known[r.id] = true end
    end
    for k in pairs(v) do
      if math.type(k) ~= "integer" or k < 1 or k > #v then
        return fail(t("rules.not_rule_list", tostring(k)))
      end
    end
    for i, r in ipairs(v) do
      local id = type(r) == "table" and r.id or nil
      if id ~= nil and ids[id] then return fail(t("rules.duplicate_id", tostring(id))) end
      if id ~= nil then ids[id] = true end
      local sub = { partial = ctx.partial, rule = id, new_rule = ctx.partial and not known[id] }
      local e = check(r, s.item, join(path, i), sub, nil)
      if e and sub.new_rule and id ~= nil and e.missing then
        local list = {}
        for k in pairs(known) do list[#list + 1] = tostring(k) end
        table.sort(list)
        e.message = t("rules.unknown_id", tostring(id), table.concat(list, ", "), e.message)
      end
      if e then return e end
    end
  end
  return nil
end

--- nil when value fits shape, else a message "rule ID: key PATH: problem" (or "key PATH: ...").
-- @tparam table opts {partial = bool, base = the table a partial value goes over}
function M.check(value, shape, opts)
  opts = opts or {}
  local e = check(value, shape, "", { partial = opts.partial }, opts.base)
  if not e then return nil end
  local where = {}
  if e.rule ~= nil then where[#where + 1] = t("rules.where_rule", tostring(e.rule)) end
  if e.path ~= "" then where[#where + 1] = t("rules.where_key", e.path) end
  if #where == 0 then return e.message end
  return table.concat(where, ", ") .. ": " .. e.message
end

return M
