-- The C layer's errors in the reader's language: each records its template and arguments
-- (include/ascope/error.h), the bindings hand them to ascope.i18n.c_error (src/lerror.c), and
-- the catalogues hold every template of src/*.c under "c:" in both languages.
local h = require "helper"
local i18n = require "ascope.i18n"
local cm = require "c_messages"
local core = require "ascope_core"

local en, zh = require "ascope.locale.en", require "ascope.locale.zh"

-- the arguments of a catalogue text: its %s, or its highest rank when it takes them by rank
-- ("%2$s"); "%%" is a percent sign
local function holes(text)
  local top = 0
  for i in text:gmatch("%%(%d)%$s") do top = math.max(top, tonumber(i)) end
  if top > 0 then return top end
  return select(2, text:gsub("%%%%", ""):gsub("%%s", ""))
end

-- A cell that is not a number and a truncated trace: their paths and the two messages.
local function two_errors(dir)
  local p, t = dir .. "/bad.csv", dir .. "/t.json"
  h.write(p, "Name,Size(KB)\na,1\nb,lots\n")
  h.write(t, '{"traceEvents":[{"ph":"X",\n')
  local _, err = core.csv.read(p, { columns = { Name = "string", ["Size(KB)"] = "number" } })
  local _, jerr = core.json.scan(t, { fields = { ph = "string" } })
  return p, t, err, jerr
end

describe("the C layer's messages", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function()
    i18n.set("en")
    h.cleanup(dir)
  end)

  it("are in both catalogues, each template of src/*.c and nothing else", function()
    local templates = cm.templates("src")
    local problems, n = {}, 0
    for text, info in pairs(templates) do
      n = n + 1
      local key = "c:" .. text
      if en[key] ~= cm.english(text, info) then
        problems[#problems + 1] = ("en %q is %q (%s)"):format(key, tostring(en[key]), info.file)
      end
      if not zh[key] then
        problems[#problems + 1] = ("zh lacks %q (%s)"):format(key, info.file)
      elseif info.format and holes(zh[key]) ~= holes(en[key]) then
        problems[#problems + 1] = ("zh %q has %d arguments, en %d"):format(key, holes(zh[key]), holes(en[key]))
      end
    end
    for _, cat in ipairs({ en, zh }) do
      for key in pairs(cat) do
        local text = key:match("^c:(.*)")
        if text and not templates[text] then problems[#problems + 1] = ("%q names no message of src/*.c"):format(key) end
      end
    end
    table.sort(problems)
    assert.same({}, problems)
    assert.is_true(n > 100) -- the scan found them (an empty scan would pass the loops)
    assert.truthy(templates["invalid JSON: %s"] and templates["invalid JSON: %s"].format)
    assert.truthy(templates["expected ':'"] and not templates["expected ':'"].format)
  end)

  it("read in English exactly as the C layer formats them, place included", function()
    i18n.set("en")
    local p, t, err, jerr = two_errors(dir)
    assert.equal(p .. ':3:2: column "Size(KB)": "lots" is not a number', err)
    assert.equal(t .. ":2:1 (byte 27): invalid JSON (the file ends early: truncated?): parse error: premature EOF",
      jerr)
    -- without the catalogue (the primitives alone), the same texts come from C
    local saved = package.loaded["ascope.i18n"]
    package.loaded["ascope.i18n"] = nil
    local _, _, err2, jerr2 = two_errors(dir)
    package.loaded["ascope.i18n"] = saved
    assert.equal(err, err2)
    assert.equal(jerr, jerr2)
  end)

  it("read in Chinese under zh, their arguments and the system's texts included", function()
    i18n.set("zh")
    local p, t, err, jerr = two_errors(dir)
    assert.equal(p .. ':3:2：列 "Size(KB)"："lots" 不是数字', err)
    assert.equal(t .. ":2:1（第 27 字节）：JSON 无效（文件提前结束：被截断？）：解析错误：文件提前结束", jerr)
    local _, oerr = core.csv.read(dir .. "/missing.csv", { columns = { Name = "string" } })
    assert.equal(dir .. "/missing.csv：无法打开：文件或目录不存在", oerr)
    -- a text chosen at run time (the scan's verdict on valid JSON that holds no events)
    h.write(t, '{"x": 1}')
    local _, verr = core.json.scan(t, { fields = { ph = "string" } })
    assert.truthy(verr:find('没有事件数组：应为 JSON 数组或含 "traceEvents" 的对象', 1, true), verr)
    -- raised by a binding: a dump layout that runs past the end of the file
    local ok, berr = pcall(function() return core.bin.from_string("abcd"):read("i64", 0) end)
    assert.is_false(ok)
    assert.equal("(string)：偏移 0 处的 8 字节超出 4 字节的视图（文件偏移 0）", berr)
  end)

  it("give a name that does not change with the language, for code that tells them apart", function()
    local p = dir .. "/empty.csv"
    h.write(p, "")
    for _, lang in ipairs({ "en", "zh" }) do
      i18n.set(lang)
      local r, err, which = core.csv.read(p, { columns = { Name = "string" } })
      assert.is_nil(r)
      assert.equal("the file is empty (no header line)", which)
      assert.truthy(err:find(lang == "zh" and "文件为空（没有表头行）" or "the file is empty (no header line)", 1, true))
    end
  end)

  it("keep the English text when the catalogue fails", function()
    local saved = package.loaded["ascope.i18n"]
    package.loaded["ascope.i18n"] = { c_error = function() error("broken catalogue") end }
    local _, err = core.csv.read(dir .. "/missing.csv", { columns = { Name = "string" } })
    package.loaded["ascope.i18n"] = saved
    assert.equal(dir .. "/missing.csv: cannot open: No such file or directory", err)
  end)

  it("reach the user in their language from the command line", function()
    local t = dir .. "/trace_view.json"
    h.write(t, '{"traceEvents":[{"ph":"X",\n')
    local code, _, err = h.run({ LANG = "zh_CN.UTF-8", LC_ALL = false, LC_MESSAGES = false }, "timeline", t, "-o",
      dir .. "/out")
    assert.equal(1, code)
    assert.truthy(err:find("JSON 无效（文件提前结束：被截断？）", 1, true), err)
    assert.is_nil(err:find("invalid JSON", 1, true))
    code, _, err = h.run({ LANG = "C", LC_ALL = false, LC_MESSAGES = false }, "timeline", t, "-o", dir .. "/out")
    assert.equal(1, code)
    assert.truthy(err:find("invalid JSON (the file ends early: truncated?)", 1, true), err)
  end)
end)
