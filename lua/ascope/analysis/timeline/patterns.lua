--- The name patterns of the timeline rules, compiled once as POSIX extended regular
-- expressions (case-insensitive): lanes.*, names.* and patterns.* (patterns.step stays a Lua
-- pattern: it captures the step number). A value is one expression or a list of alternatives.
--
--   local re = assert(patterns.compile(rules, { device_regex = "^Ascend Hardware/Stream [0-9]+$" }))
--   if patterns.test(re.lanes.device, "Ascend Hardware/Stream 2") then ... end
local regex = require("ascope_core").regex
local i18n = require "ascope.i18n"

local M = {}

-- the name classes a task without a known type is tried for before compute, in this order
-- (the prefilter `narrow_names` joins them; model.classify walks them)
M.NARROW_CLASSES = { "comm", "copy", "sync" }

-- the keys of each table that hold expressions
M.GROUPS = {
  { "lanes", { "overlap", "device", "comm", "host" } },
  { "names", { "comm", "copy", "sync", "compute" } },
  { "patterns", { "p2p", "p2p_wait", "host_launch", "dataloader", "prefill", "decode", "request", "event_wait",
                  "event_record" } },
}

local function list_of(v)
  if type(v) == "table" then return v end
  return { v }
end

-- A compiled set: the alternatives' handles. Compiling them one by one lets an error name the
-- element that is wrong.
local function compile_set(value, where)
  local set = {}
  for i, p in ipairs(list_of(value)) do
    local at = type(value) == "table" and ("%s[%d]"):format(where, i) or where
    if type(p) ~= "string" then return nil, i18n.t("timeline.pattern_not_string", at, type(p)) end
    local re, err = regex.compile(p, "i")
    if not re then return nil, i18n.t("timeline.bad_regex", at, p, err) end
    set[#set + 1] = re
    set.sources = set.sources or {}
    set.sources[#set.sources + 1] = p
  end
  -- the alternatives as one expression: a name is searched once, not once an alternative
  set.any = #set > 1 and M.union({ set }) or nil
  return set
end

-- One expression that matches where any of the sets' expressions does (each alternative in its
-- own group, so that anchors and alternations inside it keep their meaning), or nil when it
-- cannot be compiled or an alternative has a back-reference (its group number would change):
-- a prefilter, one search instead of one a set for the names most of which match none (a trace
-- whose communication names carry a call counter has as many names as calls).
function M.union(sets)
  local parts = {}
  for _, set in ipairs(sets) do
    for _, p in ipairs(set.sources or {}) do
      if p:find("\\%d") then return nil end
      parts[#parts + 1] = "(" .. p .. ")"
    end
  end
  if #parts == 0 then return nil end
  return (regex.compile(table.concat(parts, "|"), "i"))
end

--- Compile the rule patterns and the --device-regex / --comm-regex options.
-- Returns {lanes = {key = set}, names = ..., patterns = ...} or nil, message naming the option
-- or the rule key (a usage error).
function M.compile(rules, opts)
  opts = opts or {}
  local out = {}
  for _, g in ipairs(M.GROUPS) do
    local group, keys = g[1], g[2]
    out[group] = {}
    for _, k in ipairs(keys) do
      local v = rules[group] and rules[group][k]
      if v ~= nil then
        local set, err = compile_set(v, i18n.t("timeline.rules_key", group, k))
        if not set then return nil, err end
        out[group][k] = set
      end
    end
  end
  local tag_sets = {}
  for _, k in ipairs(M.GROUPS[3][2]) do tag_sets[#tag_sets + 1] = out.patterns[k] end
  out.any_tag = M.union(tag_sets)
  local narrow = {} -- the name classes tried before compute (a rules file may leave one out)
  for _, k in ipairs(M.NARROW_CLASSES) do narrow[#narrow + 1] = out.names[k] end
  out.narrow_names = M.union(narrow)
  for _, o in ipairs({ { "device_regex", "device" }, { "comm_regex", "comm" } }) do
    local opt, key = o[1], o[2]
    if opts[opt] then
      local set, err = compile_set(opts[opt], "--" .. opt:gsub("_", "-"))
      if not set then return nil, err end
      out.lanes[key] = set
    end
  end
  return out
end

--- Does text match any expression of the set? (nil text or set: no)
function M.test(set, text)
  if not set or not text then return false end
  if set.any then return set.any:find(text) end
  for _, re in ipairs(set) do
    if re:find(text) then return true end
  end
  return false
end

return M
