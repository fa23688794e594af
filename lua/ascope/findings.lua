--- Severities of findings, shared by every command: ordering, and the exit code of --fail-on.
--   findings.exit_code(0, { { severity = "WARNING" } }, "warning")  --> 3
-- A finding is any table with a severity: ERROR, WARNING, DETAIL or INFO (upper or lower case,
-- as the recipes give them; the timeline's expert rules say error, warning, info).
local M = {}

M.RANK = { ERROR = 1, WARNING = 2, DETAIL = 3, INFO = 4 }
M.FAIL_ON = { error = 1, warning = 2 }
M.FINDINGS_EXIT = 3

local function rank(sev) return M.RANK[tostring(sev):upper()] or 9 end
M.rank = rank

--- Sort findings most severe first; `tie(a, b)` orders findings of one severity.
function M.sort(list, tie)
  table.sort(list, function(a, b)
    local ra, rb = rank(a.severity), rank(b.severity)
    if ra ~= rb then return ra < rb end
    return tie(a, b)
  end)
  return list
end

--- Whether a finding at or above level ("error" or "warning") is in the list.
function M.any_at_or_above(list, level)
  local limit = M.FAIL_ON[level]
  for _, f in ipairs(list or {}) do
    if rank(f.severity) <= limit then return true end
  end
  return false
end

--- The exit code of a command: its own (0 fine, 1 input not read, 2 usage) unless it is 0 and
-- --fail-on LEVEL finds a finding at or above LEVEL: then 3.
function M.exit_code(code, list, level)
  if code == 0 and level and M.any_at_or_above(list, level) then return M.FINDINGS_EXIT end
  return code
end

return M
