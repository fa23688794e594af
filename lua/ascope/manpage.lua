--- The ascope(1) man page, written from the commands' option specs (`make` builds it into
-- build/ascope.1, so it cannot disagree with `ascope help`).
--   io.write(require("ascope.manpage").render())
-- @module ascope.manpage
local cli = require "ascope.cli"
local i18n = require "ascope.i18n"
local main = require "ascope.main"

local M = {}

-- roff text: backslashes and hyphens escaped, no line starting with a control character
local function esc(text)
  text = tostring(text):gsub("\\", "\\e"):gsub("%-", "\\-")
  return (text:gsub("\n([.'])", "\n\\&%1"):gsub("^([.'])", "\\&%1"))
end

local function option_items(out, options)
  for _, o in ipairs(options) do
    local flag = (o[2] and ("\\fB\\-" .. o[2] .. "\\fR, ") or "") .. "\\fB" .. esc("--" .. o[1]) .. "\\fR"
    if o.arg then flag = flag .. " \\fI" .. esc(o.arg) .. "\\fR" end
    local help = i18n.t(o.help) or (o.alias_of and i18n.t("cli.same_as", o.alias_of)) or ""
    if o.default ~= nil and o.default ~= false then help = help .. i18n.t("cli.default", tostring(o.default)) end
    out[#out + 1] = ".TP"
    out[#out + 1] = flag
    out[#out + 1] = esc(help)
  end
end

--- The page as roff (man macros), in English.
function M.render()
  local before = i18n.lang()
  i18n.set("en")
  local v = require "ascope.version"
  local out = {
    ".\\\" generated from the commands' option specs by lua/ascope/manpage.lua; do not edit",
    (".TH ASCOPE 1 \"\" \"ascope %s\" \"User Commands\""):format(v),
    ".SH NAME",
    "ascope \\- " .. esc(i18n.t("help.tagline")),
    ".SH SYNOPSIS",
    ".B ascope",
    "[\\fIglobal options\\fR] \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]",
    ".SH DESCRIPTION",
    esc(i18n.t("man.description")),
    ".SH GLOBAL OPTIONS",
  }
  option_items(out, cli.globals)
  out[#out + 1] = ".SH COMMANDS"
  for _, name in ipairs(main.command_names()) do
    local spec = main.spec(name)
    out[#out + 1] = ".SS " .. esc(("ascope %s %s"):format(name, spec.args or ""):gsub("%s+$", ""))
    out[#out + 1] = esc(i18n.t(spec.summary))
    if spec.details then
      out[#out + 1] = ".PP"
      out[#out + 1] = esc(i18n.t(spec.details))
    end
    if #spec.options > 0 then
      out[#out + 1] = ".PP"
      out[#out + 1] = esc(i18n.t("man.options"))
      out[#out + 1] = ".RS"
      option_items(out, spec.options)
      out[#out + 1] = ".RE"
    end
    if spec.keys then
      local ks = {}
      for k, flag in pairs(spec.keys) do ks[#ks + 1] = ("\\fB%s=\\fR (\\fB%s\\fR)"):format(esc(k), esc("--" .. flag)) end
      table.sort(ks)
      out[#out + 1] = ".PP"
      out[#out + 1] = esc(i18n.t("man.keys")) .. " " .. table.concat(ks, ", ") .. "."
    end
    if spec.outputs then
      out[#out + 1] = ".PP"
      out[#out + 1] = esc(i18n.t("man.files_written"))
      out[#out + 1] = ".RS"
      for _, f in ipairs(spec.outputs) do
        out[#out + 1] = ".TP"
        out[#out + 1] = "\\fI" .. esc(f[1]) .. "\\fR" .. (f.format and (" (\\fB\\-\\-format " .. esc(f.format) .. "\\fR)") or "")
        out[#out + 1] = esc(i18n.t(f.help))
      end
      out[#out + 1] = ".RE"
    end
    if spec.examples then
      out[#out + 1] = ".PP"
      out[#out + 1] = esc(i18n.t("man.examples"))
      out[#out + 1] = ".RS"
      out[#out + 1] = ".nf"
      for _, e in ipairs(spec.examples) do out[#out + 1] = esc(e) end
      out[#out + 1] = ".fi"
      out[#out + 1] = ".RE"
    end
  end
  out[#out + 1] = ".SH ENVIRONMENT"
  for _, e in ipairs(main.environment) do
    out[#out + 1] = ".TP"
    out[#out + 1] = "\\fB" .. esc(e[1]) .. "\\fR"
    out[#out + 1] = esc(i18n.t(e[2]))
  end
  out[#out + 1] = ".SH EXIT STATUS"
  out[#out + 1] = esc(i18n.t("man.exit_status"))
  out[#out + 1] = ".SH FILES"
  out[#out + 1] = esc(i18n.t("man.files"))
  out[#out + 1] = ".SH SEE ALSO"
  out[#out + 1] = "\\fBlua5.4\\fR(1), \\fBluarocks\\fR(1)"
  i18n.set(before)
  return table.concat(out, "\n") .. "\n"
end

return M
