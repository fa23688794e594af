--- The shape of every rule file under rules/ (see ascope.schema): a new field of a rule file is
-- one line here. ascope.rules checks the bundled file and a user's override against it when it
-- loads them; a key, type, id, metric or pattern that does not fit is a usage error naming the
-- file, the rule and the key.
-- @module ascope.rule_schemas
local S = require "ascope.schema"
local model = require "ascope.analysis.timeline.model"
local t = require("ascope.i18n").t

local M = {}

-- a Lua pattern, or several: a list, or one string of alternatives separated by "|"
local function patterns()
  return S.either(S.list(S.pattern()), S.string({ test = function(v)
    for _, alt in ipairs(model.alternatives(v)) do
      local ok, why = require("ascope.pattern").check(alt)
      if not ok then return t("rules.bad_pattern", alt, why) end
    end
  end }))
end

-- POSIX extended regular expressions (timeline's lane, name and tag patterns): one, or a list
-- of alternatives
local function regexes() return S.either(S.list(S.regex()), S.regex()) end

local SEVERITY = S.enum({ values = { "error", "warning" } })
local text = S.text

-- one of the keys of a registry: the check kinds (ascope.checks.kinds), the kinds of input file
-- a check may name (ascope.ascend.discover.inputs)
local function key_of(registry)
  local keys = {}
  for k in pairs(registry) do keys[#keys + 1] = k end
  table.sort(keys)
  return S.enum({ values = keys })
end

local function data_checks()
  return S.rules({
    check = key_of(require("ascope.checks").kinds), severity = SEVERITY, text = text(),
    input = key_of(require("ascope.ascend.discover").inputs), columns = S.list(S.string()),
    min = S.integer({ min = 0 }), column = S.string(),
  }, { required = { "check", "severity" }, test = function(c)
    for _, k in ipairs(require("ascope.checks").needs[c.check] or {}) do
      if c[k] == nil then return t("rules.missing_key", k) end
    end
  end })
end

M.memory = S.record({
  input = data_checks(),
  output = data_checks(),
  components = S.record({
    pools = S.list(S.record({ name = S.string(), prefixes = S.list(S.string()) }, { required = { "name", "prefixes" } })),
    default = S.string(),
  }),
  match = S.record({ default_mode = S.enum({ values = { "latest", "within", "within-or-latest" } }) }),
  report = S.record({ top_n = S.integer({ min = 1 }) }),
})

M.timeline = S.record({
  lanes = S.record({ overlap = regexes(), device = regexes(), comm = regexes(), host = regexes() }),
  task_types = S.record({ compute = S.list(S.string()), comm = S.list(S.string()), copy = S.list(S.string()),
                          sync = S.list(S.string()) }),
  names = S.record({ comm = regexes(), copy = regexes(), sync = regexes(), compute = regexes() }),
  patterns = S.record({
    p2p_wait = regexes(), p2p = regexes(), host_launch = regexes(), dataloader = regexes(), step = S.pattern(),
    prefill = regexes(), decode = regexes(), request = regexes(), event_wait = regexes(), event_record = regexes(),
  }, { required = { "step" } }),
  top_n = S.integer({ min = 1 }),
  jitter = S.record({ long_tail_median = S.number() }, { required = { "long_tail_median" } }),
  rules = S.rules({
    metric = S.enum({ values = require("ascope.analysis.timeline.findings").METRICS }),
    op = S.enum({ values = { "<", ">", "<=", ">=", "==", "~=" } }), value = S.number(),
    severity = S.enum({ values = { "info", "warning", "error" } }), finding = text(), action = text(),
    view = S.enum({ values = { "Timeline", "Operator", "Communication" } }),
  }, { required = { "metric", "op", "value", "severity", "finding" } }),
}, { required = { "lanes", "task_types", "names", "patterns", "jitter", "rules" } })

M.plog = S.record({
  classifiers = S.rules({
    category = S.string(), title = text(), pattern = patterns(), code = S.boolean(), sequence = S.boolean(),
    modules = S.list(S.string()), any_level = S.boolean(), advice = text(), doc = S.string(),
  }, { required = { "category", "title" }, test = function(c)
    if c.pattern == nil and c.modules == nil then return t("rules.pattern_or_modules") end
  end }),
  fields = S.map(S.list(S.pattern())),
  field_order = S.list(S.string()),
  moe_kernels = S.list(S.pattern()),
  examples = S.integer({ min = 0 }),
  files = S.list(S.pattern()),
  prefilter = S.list(S.string()),
})

M.graph = S.record({
  filter = S.list(S.pattern()),
  files = S.rules({ name = S.pattern(), node = S.pattern(), ends = S.pattern(), json = S.boolean() },
    { required = { "name", "node" } }),
  card = S.list(S.pattern()),
}, { required = { "files", "card" } })

M.opjitter = S.record({
  aiv_types = S.list(S.pattern()),
  aiv_columns = S.list(S.string()),
  tolerance = S.number({ min = 0, test = function(v) if v <= 0 then return t("rules.above_zero") end end }),
  skip_calls = S.integer({ min = 0 }),
  top_n = S.integer({ min = 1 }),
})

-- Window layouts: every offset, size and count here reaches C (views and struct reads of the
-- window dump), so each is bounded by the window it lives in.
local MAX_WINDOW = 1 << 30
local WORD = 4

local function span()
  return S.list(S.integer({ min = 0, max = MAX_WINDOW }), { min = 2 })
end

local function area()
  return S.record({ status = S.map(span(), { keys = S.integer({ min = 0, max = 1 }) }), info = span() },
    { required = { "status", "info" } })
end

local function layout_test(l)
  local function inside(name, r)
    if not r then return nil end
    if #r ~= 2 or r[1] >= r[2] or r[2] > l.window_bytes then
      return t("rules.window_span", name, l.window_bytes)
    end
  end
  for _, key in ipairs({ "block_bytes", "slot_bytes" }) do
    if l[key] > l.window_bytes then return t("rules.larger_than_window", key, l[key], l.window_bytes) end
  end
  for _, kernel in ipairs({ "dispatch", "combine" }) do
    local a = l[kernel]
    for b = 0, 1 do
      if not a.status[b] then return t("rules.missing_key", ("%s.status[%d]"):format(kernel, b)) end
    end
    for b, r in pairs(a and a.status or {}) do
      local e = inside(("%s.status[%d]"):format(kernel, b), r)
      if e then return e end
    end
    local e = inside(kernel .. ".info", a and a.info)
    if e then return e end
  end
  for name, w in pairs(l.fields or {}) do
    if (w + 1) * WORD > l.block_bytes then
      return t("rules.word_outside_block", name, w, l.block_bytes)
    end
  end
  if l.in_use_words * WORD > l.block_bytes then return t("rules.in_use_words") end
  if (l.slot_word + 1) * WORD > l.slot_bytes then return t("rules.slot_word") end
end

M.win_layout = S.record({
  socs = S.map(S.record({
    window = S.enum({ values = { "workspace", "mc2_exception_info" } }), workspace_index = S.integer({ min = 0, max = 64 }),
    layout = S.string(), assist_info = S.enum({ values = { "rank_token_k" } }),
  }, { required = { "window", "layout" } })),
  layouts = S.map(S.record({
    window_bytes = S.integer({ min = WORD, max = MAX_WINDOW }),
    dispatch = area(), combine = area(),
    block_bytes = S.integer({ min = WORD, max = 1 << 20 }),
    fields = S.map(S.integer({ min = 0, max = 1 << 18 })),
    in_use_words = S.integer({ min = 1, max = 1 << 18 }),
    waiting_position = S.integer(),
    slot_bytes = S.integer({ min = WORD, max = 1 << 20 }),
    slot_word = S.integer({ min = 0, max = 1 << 18 }),
    not_arrived = S.integer(),
    live_buffer = S.enum({ values = { "other", "flag" } }),
  }, { required = { "window_bytes", "dispatch", "combine", "block_bytes", "fields", "in_use_words", "waiting_position",
                    "slot_bytes", "slot_word", "not_arrived", "live_buffer" }, test = layout_test })),
  inputs = S.map(S.record({
    expert_ids = S.integer({ min = 0, max = 64 }), expand_idx = S.integer({ min = 0, max = 64 }),
    assist_info = S.integer({ min = 0, max = 64 }), ep_send_counts = S.integer({ min = 0, max = 64 }),
  })),
})

local function report_layout()
  return S.record({
    title = text(),
    sections = S.rules({
      kind = S.string(), title = text(), top = S.integer({ min = 1 }), columns = S.list(S.string()),
      series = S.list(S.string()),
    }, { required = { "kind", "title" } }),
    order = S.list(S.string()),
  })
end

M.layout_memory = report_layout()
M.layout_timeline = report_layout()

--- Cross-checks that need the whole merged table: nil or a message.
M.after_merge = {
  plog = function(r)
    for i, name in ipairs(r.field_order or {}) do
      if not (r.fields or {})[name] then return t("rules.no_field", i, name) end
    end
  end,
  win_layout = function(r)
    for soc, s in pairs(r.socs or {}) do
      if not (r.layouts or {})[s.layout] then
        local names = {}
        for name in pairs(r.layouts or {}) do names[#names + 1] = name end
        table.sort(names)
        return t("rules.no_layout", soc, s.layout, table.concat(names, ", "))
      end
    end
  end,
}

return M
