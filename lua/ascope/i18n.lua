--- Messages a person reads, in English or Chinese. The catalogues are ascope/locale/{en,zh}.lua;
-- keys missing from zh fall back to en.
--   local t = require("ascope.i18n").t
--   print(t("memory.rank_failed", "actor", 3, "no operator_memory.csv"))
local M = {}

local current = nil
local catalogues = {}

local function catalogue(lang)
  if not catalogues[lang] then catalogues[lang] = require("ascope.locale." .. lang) end
  return catalogues[lang]
end

--- Pick the language: "zh" or "en"; nil chooses from LC_ALL / LANG (zh_* -> zh, else en).
function M.set(lang)
  if not lang or lang == "" then
    local env = os.getenv("LC_ALL") or os.getenv("LANG") or ""
    if env == "" then env = os.getenv("LANG") or "" end
    lang = env:match("^zh") and "zh" or "en"
  end
  if lang ~= "zh" and lang ~= "en" then
    require("ascope.errors").usage("--lang takes zh or en, not %q", lang)
  end
  current = lang
end

function M.lang()
  if not current then M.set() end
  return current
end

--- The message for key, formatted with string.format.
function M.t(key, ...)
  local msg = catalogue(M.lang())[key] or catalogue("en")[key]
  if not msg then return key end
  if select("#", ...) > 0 then return msg:format(...) end
  return msg
end

--- Pick the text for the current language out of a {en = ..., zh = ...} table.
function M.pick(texts)
  if type(texts) ~= "table" then return texts end
  return texts[M.lang()] or texts.en or texts.zh
end

return M
