--- Running the code of a rule file: its own copies of string, table, math and utf8 (a rule
-- cannot reach or change the host's), no load, debug, collectgarbage, metatables, pcall, io, os
-- or require, an instruction budget and a memory cap. What it returns is copied out as plain
-- data (strings, numbers, booleans and tables, no metatables, no cycles), so nothing of the
-- rule's code runs after it has returned.
--   local value, err = sandbox.run(text, "@rules/my.lua")
-- @module ascope.sandbox
local pattern = require "ascope.pattern"
local t = require("ascope.i18n").t

local M = {}

M.INSTRUCTIONS = 2000000  -- VM instructions a rule file may run
M.MEMORY_KB = 64 * 1024   -- growth of the Lua heap it may cause
M.MAX_DEPTH = 64          -- nesting of the tables it returns
local HOOK_EVERY = 4      -- instructions between checks: a doubling string grows little in 4

local BASE = { "pairs", "ipairs", "next", "type", "tostring", "tonumber", "select", "error", "assert",
               "rawget", "rawequal", "rawlen" }

local function limit_error(what) error({ sandbox_limit = what }, 0) end

-- string functions that take a pattern refuse costly or malformed ones, and the ones that can
-- build a large string in one call are held to the memory cap before they run
local function guarded_string()
  local s = {}
  for k, v in pairs(string) do s[k] = v end
  local bytes = M.MEMORY_KB * 1024
  local function checked(fn)
    return function(subject, p, ...)
      local plain = fn == string.find and select(2, ...)
      if type(p) == "string" and not plain then
        local ok, why = pattern.check(p)
        if not ok then error(t("rules.bad_pattern", p, why), 2) end
        local n = pattern.repeats(p)
        if n > 0 and type(subject) == "string" and (#subject + 1) ^ (n + 1) > 1e9 then
          error(t("rules.costly_match", p, #subject), 2)
        end
      end
      return fn(subject, p, ...)
    end
  end
  s.find = checked(string.find)
  s.match = checked(string.match)
  s.gmatch = checked(string.gmatch)
  local gsub = checked(string.gsub)
  s.gsub = function(subject, p, repl, n)
    if type(subject) == "string" and type(repl) == "string" and (#subject + 1) * (#repl + 1) > bytes then
      limit_error("memory")
    end
    return gsub(subject, p, repl, n)
  end
  s.rep = function(str, n, sep)
    if type(str) == "string" and math.type(n) and n > 0 and (#str + #(sep or "")) * n > bytes then
      limit_error("memory")
    end
    return string.rep(str, n, sep)
  end
  return s
end

-- The rule's globals, and the string functions its string methods ("x"):rep(n) reach: a private
-- copy the rule cannot change (the host's own code, run while the rule runs, uses them too).
local function environment()
  local env = {}
  for _, k in ipairs(BASE) do env[k] = _G[k] end
  for _, lib in ipairs({ "math", "table", "utf8" }) do
    env[lib] = {}
    for k, v in pairs(_G[lib]) do env[lib][k] = v end
  end
  local methods = guarded_string()
  env.string = {}
  for k, v in pairs(methods) do env.string[k] = v end
  return env, methods
end

-- A deep copy made with raw access only (no metamethod runs), refusing what is not data.
local function copy_data(v, path, seen, depth)
  local ty = type(v)
  if ty == "string" or ty == "number" or ty == "boolean" then return v end
  if ty ~= "table" then return nil, t("rules.data_only", path, ty) end
  if seen[v] then return nil, t("rules.self", path) end
  if depth > M.MAX_DEPTH then return nil, t("rules.too_deep", path) end
  seen[v] = true
  local out = {}
  local k, x = next(v)
  while k ~= nil do
    local kt = type(k)
    if kt ~= "string" and kt ~= "number" then return nil, t("rules.key_type", path, kt) end
    local key = kt == "string" and path .. "." .. k or ("%s[%s]"):format(path, tostring(k))
    local c, err = copy_data(x, key, seen, depth + 1)
    if c == nil then return nil, err end
    out[k] = c
    k, x = next(v, k)
  end
  seen[v] = nil
  return out
end

--- Run rule text; returns its value as plain data, or nil and a message naming the chunk.
-- @tparam string text the rule file's text
-- @tparam string chunkname "@path" (as load takes it)
function M.run(text, chunkname)
  local file = chunkname:gsub("^[@=]", "")
  local env, methods = environment()
  local fn, err = load(text, chunkname, "t", env)
  if not fn then return nil, err end
  local co = coroutine.create(fn)
  local kb0 = collectgarbage("count")
  local steps, max_steps = 0, M.INSTRUCTIONS // HOOK_EVERY
  debug.sethook(co, function()
    steps = steps + 1
    if steps > max_steps then limit_error("instructions") end
    if collectgarbage("count") - kb0 > M.MEMORY_KB then
      collectgarbage() -- garbage is not use: only what is still held counts against the cap
      if collectgarbage("count") - kb0 > M.MEMORY_KB then limit_error("memory") end
    end
  end, "", HOOK_EVERY)
  -- string methods ("x"):rep(n) go through the guarded copy while the rule runs
  local smt = getmetatable("")
  local host_index = smt.__index
  smt.__index = methods
  local ok, value = coroutine.resume(co)
  smt.__index = host_index
  if coroutine.status(co) ~= "dead" then ok, value = false, t("rules.yields") end
  collectgarbage()
  if not ok then
    if type(value) == "table" and value.sandbox_limit == "instructions" then
      return nil, t("rules.instructions", file, M.INSTRUCTIONS)
    elseif (type(value) == "table" and value.sandbox_limit == "memory")
      or (type(value) == "string" and value:find("not enough memory", 1, true)) then
      return nil, t("rules.memory", file, M.MEMORY_KB // 1024)
    end
    value = tostring(value)
    if value:sub(1, #file) ~= file then value = file .. ": " .. value end
    return nil, value
  end
  if type(value) ~= "table" then
    return nil, t("rules.not_table", file, type(value))
  end
  local data, derr = copy_data(value, "", {}, 0)
  if not data then return nil, ("%s: %s"):format(file, (derr:gsub("^%.", ""))) end
  return data
end

return M
