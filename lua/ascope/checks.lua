--- Data checks described by rule tables (rules/*.lua `input` and `output` lists).
-- Each kind is a function(rule, subject) -> nil when the check holds, or a detail string.
--   local problems = checks.run(rules.input, { dir = "/data/rank0" }, "input") -- also listing: a rank's (discover)
--   for _, p in ipairs(problems) do print(p.severity, p.id, p.message) end
-- An input check names an input kind (`input = "operator_memory"`), never a path: the file is
-- found by ascope.ascend.discover.find, as the reader finds it.
local csv = require("ascope_core").csv
local discover = require "ascope.ascend.discover"
local i18n = require "ascope.i18n"

local M = {}

M.kinds = {}

-- the fields of its rule each kind reads (the rule schema requires them)
M.needs = { file_present = { "input" }, columns_present = { "input", "columns" }, rows_at_least = { "min" },
            numeric = { "columns" }, any_positive = { "column" } }

function M.kinds.file_present(rule, subject)
  local path, looked = discover.find(rule.input, subject.dir, subject.listing)
  if path then return nil end
  return looked
end

function M.kinds.columns_present(rule, subject)
  local path = discover.find(rule.input, subject.dir, subject.listing)
  if not path then return nil end -- file_present reports that
  -- a database's tables and columns are its reader's to check (ascope.ascend.memory_db)
  if path:match("%.db$") then return nil end
  local r, err = csv.open(path)
  if not r then return err end
  local header, _, rerr = r:next()
  r:close()
  if rerr then return rerr end -- a stray quote is not an empty file
  if not header then return i18n.t("input.empty_file", path) end
  local have = {}
  for _, h in ipairs(header) do have[(h:gsub("^\239\187\191", ""))] = true end
  local missing = {}
  for _, c in ipairs(rule.columns) do
    if not have[c] then missing[#missing + 1] = c end
  end
  if #missing == 0 then return nil end
  return i18n.t("input.columns_in", table.concat(missing, ", "), path)
end

function M.kinds.rows_at_least(rule, subject)
  if subject.rows >= rule.min then return nil end
  return i18n.t("input.rows_at_least", subject.rows, rule.min)
end

function M.kinds.numeric(rule, subject)
  local bad = {}
  for _, c in ipairs(rule.columns) do
    local n = subject.non_numeric[c]
    if n and n > 0 then bad[#bad + 1] = ("%s (%d)"):format(c, n) end
  end
  if #bad == 0 then return nil end
  return table.concat(bad, ", ")
end

function M.kinds.any_positive(rule, subject)
  if (subject.positive[rule.column] or 0) > 0 then return nil end
  return rule.column
end

--- Run the checks on a subject; returns a list of {id, severity, message}.
function M.run(list, subject)
  local out = {}
  for _, rule in ipairs(list) do
    local detail = M.kinds[rule.check](rule, subject)
    if detail then
      local text = i18n.t(rule.text) or (rule.id .. ": %s")
      out[#out + 1] = { id = rule.id, severity = rule.severity, message = text:format(detail) }
    end
  end
  return out
end

return M
