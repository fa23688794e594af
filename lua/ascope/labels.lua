--- Values that are data and words at once. A few analysis results name where a figure came
-- from or how it was made ("ProfilerStep markers", "request boundaries", the keyless call site
-- "(no call stack)"). Scripts read them in the JSON summaries, CSV files and traces, so there
-- they stay these English values in every language; a report a person reads (Markdown, HTML,
-- console) shows the catalogue's text for them instead, through show(kind, value). A value not
-- listed (a file name, a lane name from the data) is shown as it is.
local i18n = require "ascope.i18n"

local M = {}

--- The data values, by kind: the analyses write these, never a translated text.
M.NO_STACK = "(no call stack)"
M.MARKERS = "ProfilerStep markers"
M.TASKS = "tasks"
M.TRACE_COMM = "communication busy time in the trace"
M.REQUESTS = "request boundaries"
M.NAME_PATTERNS = "name-pattern approximation"

-- kind -> value -> catalogue key
local KEYS = {
  call_site = { [M.NO_STACK] = "label.no_call_stack" },
  source = { [M.MARKERS] = "label.source.markers", [M.TASKS] = "label.source.tasks" },
  comm_column = { [M.TRACE_COMM] = "label.comm.trace_busy" },
  method = { [M.REQUESTS] = "label.method.requests", [M.NAME_PATTERNS] = "label.method.name_patterns" },
}

--- The text a person reads for `value` of `kind` (call_site, source, comm_column, method).
function M.show(kind, value)
  local key = KEYS[kind][value]
  return key and i18n.t(key) or value
end

return M
