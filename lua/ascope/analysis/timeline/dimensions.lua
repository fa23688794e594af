--- The timeline dimensions, registered in one list. Each dimension is a module (one file in
-- analysis/timeline/dimensions/) that says everything about itself:
--
--   {
--     id = "overlap",                        -- its key in a rank's result (r[id]) and in the JSON
--     compute = function(ctx) ... end,       -- fills ctx.r[id] (see analysis/timeline/init.lua for ctx)
--     without_trace = true,                  -- computed also for a rank with only its step split
--     explain = true,                        -- not computed -> a reason under not_computed[id]
--     dashboard = { { key = "overlap_ratio", order = 3, rule_metric = nil,
--                     value = function(r) return r.overlap and r.overlap.overlap_ratio end } },
--     json = function(r, kit) return { overlap = r.overlap } end,    -- default: { [id] = r[id] }
--     md = function(r, kit) return "### ...\n\n" end,                -- its Markdown section, or nil
--     html = { overlap = function(res, sec, r, kit) return "<p>...</p>" end },  -- HTML kinds
--     section = { id = "overlap", kind = "overlap", title = { en = ..., zh = ... }, after = "steps" },
--   }
--
-- The list order is the order they are computed in (a dimension may read what an earlier one
-- left in ctx) and the order of their Markdown sections; a dashboard key's `order` places it
-- on the dashboard (keys without one follow, in list order). `section` is the HTML section a
-- dimension gets when the layout (rules/layout_timeline.lua plus --layout) does not place it;
-- the bundled dimensions' sections are in that layout. The report writers and the analysis
-- iterate this list: a new dimension is its module and one register() call. Its dashboard
-- keys are metrics the expert rules may test (rules/timeline.lua or a --rules file).
-- @module ascope.analysis.timeline.dimensions
local findings = require "ascope.analysis.timeline.findings"
local t = require("ascope.i18n").t

local M = {}

-- the metrics the rules know without any dimension's help (derived facts such as bubble_excess)
local BASE_METRICS = { table.unpack(findings.METRICS) }

local BUNDLED = { "critical_path", "overlap", "alignment", "op_util", "host", "pp_bubble", "jitter", "hotspots",
                  "compare", "phases" }

M.list = {}

--- The dashboard keys in order, and each key's rule metric (the stricter form of it that a
-- rule tests; a ⚠ on the key means that rule fired). Rebuilt in place at every register().
M.DASHBOARD_KEYS = {}
M.DASHBOARD_RULE_METRIC = {}
M.DASHBOARD_VALUE = {}

local function rebuild()
  local entries = {}
  for i, d in ipairs(M.list) do
    for j, k in ipairs(d.dashboard or {}) do
      entries[#entries + 1] = { key = k.key, order = k.order or math.huge, i = i, j = j, k = k }
    end
  end
  table.sort(entries, function(a, b)
    if a.order ~= b.order then return a.order < b.order end
    if a.i ~= b.i then return a.i < b.i end
    return a.j < b.j
  end)
  for k in pairs(M.DASHBOARD_RULE_METRIC) do M.DASHBOARD_RULE_METRIC[k] = nil end
  for k in pairs(M.DASHBOARD_VALUE) do M.DASHBOARD_VALUE[k] = nil end
  for i = #M.DASHBOARD_KEYS, 1, -1 do M.DASHBOARD_KEYS[i] = nil end
  for i, e in ipairs(entries) do
    M.DASHBOARD_KEYS[i] = e.key
    M.DASHBOARD_RULE_METRIC[e.key] = e.k.rule_metric
    M.DASHBOARD_VALUE[e.key] = e.k.value
  end
  -- the rules' metrics (findings.METRICS, which the rule schema reads): the base ones, then
  -- every dashboard key not among them
  local metrics, known = findings.METRICS, {}
  for i = #metrics, 1, -1 do metrics[i] = nil end
  for i, name in ipairs(BASE_METRICS) do
    metrics[i] = name
    known[name] = true
  end
  for _, key in ipairs(M.DASHBOARD_KEYS) do
    if not known[key] then metrics[#metrics + 1] = key end
  end
end

--- Add a dimension at the end of the list (or replace the one with its id, in its place).
-- A dimension without an id or a compute function, or with a dashboard key another
-- dimension already has, is an error.
function M.register(d)
  assert(type(d) == "table" and type(d.id) == "string" and type(d.compute) == "function",
    t("timeline.dimension_invalid"))
  local at = #M.list + 1
  for i, x in ipairs(M.list) do
    if x.id == d.id then at = i end
  end
  for i, x in ipairs(M.list) do
    for _, k in ipairs(i ~= at and x.dashboard or {}) do
      for _, mine in ipairs(d.dashboard or {}) do
        assert(mine.key ~= k.key, t("timeline.dimension_key_taken", k.key, x.id))
      end
    end
  end
  M.list[at] = d
  rebuild()
  return d
end

--- Remove the dimension id (a script that registered one for a run); true when it was there.
function M.unregister(id)
  for i, x in ipairs(M.list) do
    if x.id == id then
      table.remove(M.list, i)
      rebuild()
      return true
    end
  end
  return false
end

--- The dimension id, or nil.
function M.get(id)
  for _, x in ipairs(M.list) do
    if x.id == id then return x end
  end
end

--- A rank's dashboard: one value per key; a key that was not measured is left out.
function M.dashboard(r)
  local d = {}
  for _, k in ipairs(M.DASHBOARD_KEYS) do d[k] = M.DASHBOARD_VALUE[k](r) end
  return d
end

--- The HTML kinds every dimension draws: kind -> function(res, sec, r, kit).
function M.html_kinds()
  local kinds = {}
  for _, d in ipairs(M.list) do
    for kind, fn in pairs(d.html or {}) do kinds[kind] = fn end
  end
  return kinds
end

for _, id in ipairs(BUNDLED) do M.register(require("ascope.analysis.timeline.dimensions." .. id)) end

return M
