--- Rule files: Lua files under rules/ that return tables. They are data, run in a sandbox
-- (ascope.sandbox: own copies of the safe libraries, an instruction budget, a memory cap) and
-- checked against their schema (ascope.rule_schemas); a user file given with --rules adds to
-- them or overrides them and is checked the same way. A file that does not fit is a usage error
-- (errors.usage_value) naming the file, the rule and the key.
--
--     local rules = require "ascope.rules"
--     local r = assert(rules.load("memory"))              -- rules/memory.lua
--     local r2 = assert(rules.load("memory", "my.lua"))   -- the same, merged with my.lua
--
-- Merging: lists of tables with an `id` merge by id (a user rule with an existing id changes
-- only the fields it gives; `disabled = true` removes it; new ids are appended); other tables
-- merge key by key; anything else is replaced.
-- @module ascope.rules
local M = {}

local dir_override = nil

--- Use DIR (an edited copy of rules/) instead of the bundled rules.
function M.set_dir(dir) dir_override = dir end

local errors = require "ascope.errors"
local i18n = require "ascope.i18n"
local sandbox = require "ascope.sandbox"
local schema = require "ascope.schema"
local schemas = require "ascope.rule_schemas"

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- Candidate places of the bundled rules when not running inside the ascope executable: beside
-- the modules once installed (`make install` and `luarocks make` both put them in
-- LUADIR/ascope/rules/), else the source tree's rules/ next to lua/.
local function source_dirs()
  local dirs = {}
  local init = package.searchpath("ascope", package.path)
  if init then
    local base = init:gsub("[^/]*$", "")   -- LUADIR/ascope/ or <source>/lua/ascope/
    dirs[#dirs + 1] = base .. "rules"        -- installed
    dirs[#dirs + 1] = base .. "../../rules"  -- source tree
  end
  return dirs
end

local function bundled(name)
  local file = name .. ".lua"
  local dir = dir_override or os.getenv("ASCOPE_RULES_DIR")
  if dir and dir ~= "" then
    local text = read_file(dir .. "/" .. file)
    if text then return text, "@" .. dir .. "/" .. file end
    return nil, i18n.t("rules.no_file", file, dir)
  end
  local core = require "ascope_core"
  if core.resource then
    local text, chunk = core.resource("rules/" .. file)
    if text then return text, chunk end
  end
  for _, d in ipairs(source_dirs()) do
    local text = read_file(d .. "/" .. file)
    if text then return text, "@" .. d .. "/" .. file end
  end
  return nil, i18n.t("rules.no_bundled", file)
end

--- Evaluate rule text in the sandbox; returns the table or nil, message.
function M.eval(text, chunkname) return sandbox.run(text, chunkname) end

local function file_of(chunk) return (chunk:gsub("^[@=]", "")) end

local function is_id_list(t)
  if type(t) ~= "table" or #t == 0 then return false end
  for _, v in ipairs(t) do
    if type(v) ~= "table" or v.id == nil then return false end
  end
  return true
end

--- Merge user into base (both left untouched); see the module comment.
function M.merge(base, user)
  if type(base) ~= "table" or type(user) ~= "table" then return user end
  if is_id_list(base) and (is_id_list(user) or #user == 0) then
    local out, pos = {}, {}
    for _, r in ipairs(base) do
      out[#out + 1] = M.merge({}, r)
      pos[r.id] = #out
    end
    for _, r in ipairs(user) do
      local at = pos[r.id]
      if at then out[at] = M.merge(out[at], r) else out[#out + 1] = M.merge({}, r) end
    end
    local kept = {}
    for _, r in ipairs(out) do
      if not r.disabled then kept[#kept + 1] = r end
    end
    return kept
  end
  local out = {}
  for k, v in pairs(base) do out[k] = type(v) == "table" and M.merge({}, v) or v end
  for k, v in pairs(user) do out[k] = type(v) == "table" and M.merge(out[k] or {}, v) or v end
  return out
end

-- The texts of a checked rule file ({en, zh} where its schema has S.text()) go into the message
-- catalogue under "rule.<file>.<path>", a rule of a list named by its id
-- ("rule.memory.input.required_columns.text"); the loaded table carries the key, for i18n.t.
-- user: the same place in the user's file. A text the user gives replaces the bundled one whole:
-- an edited English text does not keep the bundled Chinese, which would no longer say the same.
local function register_texts(value, shape, key, user)
  if type(value) ~= "table" or type(shape) ~= "table" then return value end
  if type(user) ~= "table" then user = nil end
  if shape.is_text then return i18n.register(key, user or value) end
  if shape.kind == "record" then
    for k, f in pairs(shape.fields) do
      if value[k] ~= nil then value[k] = register_texts(value[k], f, key .. "." .. k, user and user[k]) end
    end
  elseif shape.kind == "rules" or shape.kind == "list" then
    local by_id = {}
    for _, u in ipairs(user or {}) do
      if type(u) == "table" and u.id ~= nil then by_id[u.id] = u end
    end
    for i, x in ipairs(value) do
      local id = shape.kind == "rules" and type(x) == "table" and x.id or i
      local u
      if shape.kind == "rules" then u = by_id[id] elseif user then u = user[i] end
      value[i] = register_texts(x, shape.item, key .. "." .. tostring(id), u)
    end
  elseif shape.kind == "map" then
    for k, x in pairs(value) do value[k] = register_texts(x, shape.item, key .. "." .. tostring(k), user and user[k]) end
  end
  return value
end

--- Load rules/NAME.lua, merged with the user file when given, and check it.
-- @tparam string name the rule file's name without `.lua` ("memory", "timeline", ...)
-- @tparam[opt] string user_file a file whose table is merged over the bundled one
-- @treturn table the rules
-- @treturn[2] nil when a file is missing or breaks the schema
-- @treturn[2] table a usage error (errors.usage_value): prints as the message naming the file, rule and key
function M.load(name, user_file)
  local function fail(msg) return nil, errors.usage_value(msg) end
  local text, chunk = bundled(name)
  if not text then return fail(chunk) end
  local base, err = M.eval(text, chunk)
  if not base then return fail(err) end
  local shape = schemas[name]
  local bad = shape and schema.check(base, shape)
  if bad then return fail(file_of(chunk) .. ": " .. bad) end
  local merged, named, user = base, file_of(chunk), nil
  if user_file then
    local utext = read_file(user_file)
    if not utext then return fail(i18n.t("rules.unreadable", user_file)) end
    local uerr
    user, uerr = M.eval(utext, "@" .. user_file)
    if not user then return fail(uerr) end
    -- a user file may hold several rule sets keyed by name ({memory = {...}, timeline = {...}})
    if type(user[name]) == "table" then user = user[name] end
    bad = shape and schema.check(user, shape, { partial = true, base = base })
    if bad then return fail(user_file .. ": " .. bad) end
    merged, named = M.merge(base, user), user_file
    bad = shape and schema.check(merged, shape)
    if bad then return fail(named .. ": " .. bad) end
  end
  local cross = schemas.after_merge[name]
  bad = cross and cross(merged)
  if bad then return fail(named .. ": " .. bad) end
  return register_texts(merged, shape, "rule." .. name, user)
end

return M
