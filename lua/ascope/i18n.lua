--- Messages a person reads, in English or Chinese: one mechanism for all of them.
--
-- Every message, help text, report heading and finding is looked up by key with t(key, ...):
--   local t = require("ascope.i18n").t
--   print(t("input.rank_failed", "actor", 3, "no operator_memory.csv"))
-- The program's own texts live in the catalogues ascope/locale/en.lua and zh.lua, both complete
-- (spec/i18n_spec.lua holds them to the same keys and the same % placeholders). The texts of a
-- rule file ({en = ..., zh = ...} in rules/*.lua, which users edit without touching the code) are
-- registered into the same catalogue when the file is loaded, under a key made of the file, the
-- list and the rule's id ("rule.memory.input.required_columns.text", see ascope.rules), and the
-- loaded rules carry the key in place of the table. So there is one lookup, one place that picks
-- the language and one fallback: the current language, else English, else the key itself.
--
-- The language: set(lang) (the command line's --lang), else LC_ALL, LC_MESSAGES, LANG in that
-- order (the first that is set and not empty decides, as POSIX does for messages): zh_* gives
-- Chinese, anything else (C, POSIX, en_US.UTF-8) English.
local M = {}

local current = nil
local catalogues = {}
local registered = { en = {}, zh = {} } -- the rule files' texts, by language

M.LANGS = { "en", "zh" }

--- The bundled catalogue of a language (the table of ascope/locale/<lang>.lua).
function M.catalogue(lang)
  if not catalogues[lang] then catalogues[lang] = require("ascope.locale." .. lang) end
  return catalogues[lang]
end

--- The language the environment asks for: "zh" or "en" (LC_ALL, then LC_MESSAGES, then LANG).
function M.from_env(getenv)
  getenv = getenv or os.getenv
  for _, name in ipairs({ "LC_ALL", "LC_MESSAGES", "LANG" }) do
    local v = getenv(name)
    if v and v ~= "" then return v:match("^zh") and "zh" or "en" end
  end
  return "en"
end

--- Pick the language: "zh" or "en"; nil or "" chooses from the environment (M.from_env).
function M.set(lang)
  if not lang or lang == "" then lang = M.from_env() end
  if lang ~= "zh" and lang ~= "en" then
    require("ascope.errors").usage(M.t("cli.bad_lang", lang))
  end
  current = lang
end

function M.lang()
  if not current then M.set() end
  return current
end

local function lookup(lang, key)
  return M.catalogue(lang)[key] or registered[lang][key]
end

--- The message for key in the current language (else English, else the key itself), formatted
-- with string.format when arguments follow.
function M.t(key, ...)
  local msg = lookup(M.lang(), key) or lookup("en", key)
  if not msg then return key end
  if select("#", ...) > 0 then return msg:format(...) end
  return msg
end

-- A C message's text in lang: the catalogue's template under "c:" .. the C template, its
-- arguments (formatted by C, one by one) put in as strings (in order, or by rank: %2$s), each argument itself translated
-- when it is a message of its own (a scanner's "expected ':'" inside "invalid JSON: %s") or an
-- operating-system message ("os:" .. strerror's English text). nil when lang has no template.
local function c_text(lang, fmt, args)
  local tmpl = lookup(lang, "c:" .. fmt)
  if not tmpl then return nil end
  local put = {}
  for i, a in ipairs(args) do put[i] = lookup(lang, "c:" .. a) or lookup(lang, "os:" .. a) or a end
  if #put == 0 then return tmpl end
  if tmpl:find("%%%d%$s") then -- arguments by rank, for a language that orders them otherwise
    return (tmpl:gsub("%%(%d)%$s", function(i) return put[tonumber(i)] or "" end))
  end
  local ok, text = pcall(string.format, tmpl, table.unpack(put))
  return ok and text or nil
end

--- The text of an error raised by the C primitives (their Lua bindings call this when this
-- module is loaded, see src/lerror.c): e = {fmt, args, file, line, column, offset, text} with
-- text the English message. "file:line:column (byte N): message" in the current language,
-- the parts that are unknown left out, as asc_error_format writes it in English.
function M.c_error(e)
  local lang = M.lang()
  local msg = lang ~= "en" and c_text(lang, e.fmt, e.args) or e.text
  local place = e.file or ""
  if (e.line or 0) > 0 then
    place = place .. ":" .. e.line
    if (e.column or 0) > 0 then place = place .. ":" .. e.column end
  end
  if (e.offset or -1) >= 0 then
    place = place .. (place ~= "" and M.t("c.gap") or "") .. M.t("c.byte", e.offset)
  end
  if place == "" then return msg end
  return place .. M.t("c.sep") .. msg
end

--- The text of key in one language, bundled or registered, without fallback (nil when missing).
function M.text(lang, key) return lookup(lang, key) end

--- Register the texts of a rule file under key: texts is {en = ..., zh = ...} (zh may be
-- missing: English is then shown in Chinese too) or one string for every language. The bundled
-- catalogues win over a registered text of the same key: rule keys start with "rule.", which no
-- bundled key does. Returns key.
function M.register(key, texts)
  if type(texts) ~= "table" then texts = { en = tostring(texts) } end
  for _, lang in ipairs(M.LANGS) do registered[lang][key] = texts[lang] end
  return key
end

return M
