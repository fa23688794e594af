--- The one JSON document a command prints on stdout with --json: the same for every command,
-- so a script reads any of them the same way.
--   {"command": "moe", "version": "0.1.0", "exit_code": 0, "output": "out",
--    "summary": {...the command's summary file...}, "findings": [{"severity": "ERROR", ...}]}
-- A run that stops on an error prints {"command", "version", "exit_code", "error"} instead.
local json = require("ascope_core").json

local M = {}

local array = require("ascope.fmt").array

local function scalar(v)
  local k = type(v)
  return k == "string" or k == "number" or k == "boolean"
end

-- A finding as plain data: its scalar fields, and lists of scalars (the cards it applies to);
-- the severity in capitals whichever way the recipe spells it.
local function finding(f)
  local out = {}
  for k, v in pairs(f) do
    if type(k) == "string" and scalar(v) then
      out[k] = v
    elseif type(k) == "string" and type(v) == "table" and #v > 0 then
      local list, ok = array(), true
      for i, x in ipairs(v) do
        if not scalar(x) then ok = false break end
        list[i] = x
      end
      if ok then out[k] = list end
    end
  end
  if out.severity then out.severity = tostring(out.severity):upper() end
  return out
end

--- The document of a finished run.
function M.encode(command, code, summary, findings, output)
  local list = array()
  for i, f in ipairs(findings or {}) do list[i] = finding(f) end
  return json.encode({ command = command, version = require "ascope.version", exit_code = code, output = output,
                       summary = summary or json.null, findings = list }, { indent = 2 })
end

--- The document of a run that stopped on an error.
function M.encode_error(command, code, message)
  return json.encode({ command = command or json.null, version = require "ascope.version", exit_code = code,
                       error = message }, { indent = 2 })
end

return M
