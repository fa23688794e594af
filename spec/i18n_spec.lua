-- One message mechanism: the catalogues (ascope/locale/en.lua, zh.lua) hold every message of the
-- program in both languages with the same placeholders; no message is written in the code; the
-- language comes from LC_ALL, LC_MESSAGES, LANG (or --lang); a rule file's texts are registered
-- into the same catalogue under the rule's id.
local h = require "helper"
local i18n = require "ascope.i18n"
local scan = require "message_scan"

local en, zh = require "ascope.locale.en", require "ascope.locale.zh"

-- the string.format directives of a message, in order ("%%" is a literal percent sign)
local function directives(msg)
  local out = {}
  for i, c in msg:gmatch("%%(%d)%$(s)") do out[tonumber(i)] = c end -- by rank: "%2$s" (C messages)
  if next(out) then
    for i = 1, #out do out[i] = out[i] or "?" end
    return table.concat(out, " ")
  end
  for d in msg:gmatch("%%([-+ #0]*%d*%.?%d*[sdqfgxXiuc%%])") do
    if d ~= "%" then out[#out + 1] = d:sub(-1) end
  end
  return table.concat(out, " ")
end

local keys = h.sorted_keys

describe("the catalogues", function()
  it("hold the same keys in English and Chinese", function()
    local missing = {}
    for _, k in ipairs(keys(en)) do if zh[k] == nil then missing[#missing + 1] = "zh lacks " .. k end end
    for _, k in ipairs(keys(zh)) do if en[k] == nil then missing[#missing + 1] = "en lacks " .. k end end
    assert.same({}, missing)
    assert.is_true(#keys(en) > 400)
  end)

  it("hold one key per message: no two keys give the same text in both languages", function()
    -- Exempt by design: the per-option help keys (opt.<command>.<option>, which help, the man
    -- page and the completion look up by the option's name) and the column-name families looked
    -- up by the column (report.<job>.col.<column>). Two keys with one English text are kept
    -- apart only where Chinese words them differently: input.or joins the places looked in (a
    -- list, "、"), rules.or the kinds a value may be (alternatives, "或").
    local function exempt(k) return k:match("^opt%.") or k:match("^report%.[%w_]+%.col%.") end
    local by_text, same = {}, {}
    for _, k in ipairs(keys(en)) do
      if not exempt(k) then
        local text = en[k] .. "\0" .. zh[k]
        if by_text[text] then same[#same + 1] = by_text[text] .. " = " .. k else by_text[text] = k end
      end
    end
    assert.same({}, same)
    assert.are_not.equal(zh["input.or"], zh["rules.or"])
  end)

  it("give each message the same % placeholders in both languages", function()
    local differ = {}
    for _, k in ipairs(keys(en)) do
      if zh[k] and directives(en[k]) ~= directives(zh[k]) then
        differ[#differ + 1] = ("%s: en %q, zh %q"):format(k, directives(en[k]), directives(zh[k]))
      end
    end
    assert.same({}, differ)
  end)

  it("formats every message with as many arguments as it has placeholders", function()
    for _, cat in ipairs({ en, zh }) do
      for _, k in ipairs(keys(cat)) do
        local args = {}
        for d in directives(cat[k]):gmatch("%a") do args[#args + 1] = (d == "s" or d == "q") and "x" or 1 end
        if #args > 0 and not cat[k]:find("%%%d%$") then -- by rank: not string.format's (ascope.i18n.c_error)
          local ok, err = pcall(string.format, cat[k], table.unpack(args))
          assert(ok, k .. ": " .. tostring(err))
        end
      end
    end
  end)

  it("leave the rule. keys to the rule files' texts", function()
    for _, k in ipairs(keys(en)) do assert.is_nil(k:match("^rule%."), k) end
  end)

  it("counts placeholders the way string.format reads them", function()
    assert.equal("s d", directives("%s: %d row(s), 100%% done"))
    assert.equal("q s", directives("%q (%-5s)"))
    assert.equal("", directives("no placeholder, 50%%"))
  end)
end)

describe("the commands' help", function()
  it("names catalogue keys that exist in both languages, for every command, option, output and variable", function()
    local main = require "ascope.main"
    local cli = require "ascope.cli"
    local keys_used = {}
    local function use(key, where)
      if key ~= nil then keys_used[#keys_used + 1] = { key, where } end
    end
    for _, o in ipairs(cli.globals) do use(o.help, "global --" .. o[1]) end
    for _, e in ipairs(main.environment) do use(e[2], e[1]) end
    for _, name in ipairs(main.command_names()) do
      local spec = main.spec(name)
      use(spec.summary, name .. " summary")
      use(spec.details, name .. " details")
      for _, o in ipairs(spec.options) do
        if not o.alias_of then
          assert(o.help, name .. " --" .. o[1] .. " has no help")
          use(o.help, name .. " --" .. o[1])
        end
      end
      for _, f in ipairs(spec.outputs or {}) do use(f.help, name .. " " .. f[1]) end
    end
    assert.is_true(#keys_used > 100)
    for _, u in ipairs(keys_used) do
      assert(en[u[1]] and zh[u[1]], u[2] .. ": " .. tostring(u[1]) .. " is not in both catalogues")
    end
  end)

  it("reads in Chinese under LANG=zh_CN.UTF-8, with no key left showing", function()
    for _, name in ipairs({ "memory", "timeline", "moe", "diagnose" }) do
      local code, out = h.run({ LANG = "zh_CN.UTF-8", LC_ALL = false, LC_MESSAGES = false }, "help", name)
      assert.equal(0, code)
      for _, prefix in ipairs({ "opt", "cmd", "out", "env", "cli" }) do
        assert.is_nil(out:match("%f[%w]" .. prefix .. "%.[%w_]+%.?[%w_]*"), name .. ": a key shows")
      end
      i18n.set("zh")
      assert.truthy(out:find(i18n.t("cmd." .. name .. ".summary"), 1, true), name)
      assert.truthy(out:find(i18n.t("cli.global_options"), 1, true), name)
    end
    i18n.set("en")
  end)
end)

describe("messages in the code", function()
  -- Lua files whose literals may stay: none today. A file listed here needs a reason.
  local ALLOWED = {}

  it("are found by the scan when they are there", function()
    local src = table.concat({
      'errors.usage("ascope x needs INPUT")',
      'log.warn("%s", t("memory.outputs", dir))',
      'if not f then return nil, path .. ": cannot open" end',
      'error(("layout %s: unknown kind %q"):format(a, b), 0)',
      '-- log.warn("a comment is not a call")',
      'errors.usage("--format: unknown output %q (%s)", f, "csv, json")',
      'log.stage("%s", i18n.t("report.writing", p))',
      'error(t("graph.no_files", input), 0)',
      'failed[1] = { path = p, reason = p .. ": cannot tell the card" }',
      'why.jitter = t("timeline.why.no_comm")',
      'local why = "no trace for this rank"',
      's.status_error = ("expected %d slots"):format(n)',
      'if err == "timeout" then return end',
      'r.not_computed.host = "no host events on host lanes"',
      'r.not_computed.host = t("timeline.why.no_host")',
    }, "\n")
    local hits = scan.source(src)
    local lines = {}
    for _, hit in ipairs(hits) do lines[#lines + 1] = hit.line end
    assert.same({ 1, 3, 4, 6, 9, 11, 12, 14 }, lines)
  end)

  it("are none: errors.usage, log.*, error() and returned errors take catalogue keys", function()
    local found = {}
    local p = io.popen("find lua/ascope -name '*.lua' -not -path '*/locale/*' | sort")
    for path in p:lines() do
      if not ALLOWED[path] then
        for _, hit in ipairs(scan.file(path)) do found[#found + 1] = ("%s:%d: %s"):format(path, hit.line, hit.text) end
      end
    end
    p:close()
    assert.same({}, found)
  end)
end)

describe("the language", function()
  local function env(t) return function(name) return t[name] end end

  it("comes from LC_ALL, then LC_MESSAGES, then LANG; zh_* is Chinese, anything else English", function()
    assert.equal("zh", i18n.from_env(env({ LANG = "zh_CN.UTF-8" })))
    assert.equal("en", i18n.from_env(env({ LANG = "C" })))
    assert.equal("en", i18n.from_env(env({ LANG = "POSIX" })))
    assert.equal("en", i18n.from_env(env({})))
    assert.equal("en", i18n.from_env(env({ LANG = "zh_CN.UTF-8", LC_MESSAGES = "en_US.UTF-8" })))
    assert.equal("zh", i18n.from_env(env({ LANG = "en_US.UTF-8", LC_MESSAGES = "zh_TW.UTF-8" })))
    assert.equal("en", i18n.from_env(env({ LC_ALL = "C", LC_MESSAGES = "zh_CN.UTF-8", LANG = "zh_CN.UTF-8" })))
    -- set but empty counts as not set (POSIX)
    assert.equal("zh", i18n.from_env(env({ LC_ALL = "", LC_MESSAGES = "", LANG = "zh_CN.UTF-8" })))
  end)

  -- each command's usage error, run with no input: the key it must print
  local USAGE = {
    { { "memory" }, "cli.needs", "memory", "INPUT", "memory" },
    { { "timeline" }, "cli.needs", "timeline", "INPUT", "timeline" },
    { { "graph" }, "cli.needs", "graph", "GRAPH_PATH", "graph" },
    { { "plog" }, "cli.needs", "plog", "PLOG_PATH", "plog" },
    { { "opjitter" }, "cli.needs", "opjitter", "PROFILING_PATH", "opjitter" },
    { { "moe" }, "cli.needs", "moe", "TARGET_DIR=...", "moe" },
    { { "run" }, "cli.needs", "run", "SCRIPT.lua", "run" },
    { { "merge" }, "merge.needs_parts" },
    { { "diagnose" }, "diagnose.needs_input" },
    { { "version", "extra" }, "cli.unexpected_argument", "extra" },
    { { "memory", "/tmp", "--rank-list", "3-1", "-o", "/tmp/ascope-no-such-out" }, "ranks.backwards", "3-1" },
    { { "memory", "/tmp", "-j", "x" }, "cli.not_whole", "-j", "x" },
    { { "nosuch" }, "cli.unknown_command", "nosuch", "", nil },
  }

  it("of a usage error is Chinese under LANG=zh_CN.UTF-8 and English under LANG=C", function()
    for _, c in ipairs(USAGE) do
      for _, lang in ipairs({ { "zh_CN.UTF-8", "zh" }, { "C", "en" } }) do
        local code, out, err = h.run({ LANG = lang[1], LC_ALL = false, LC_MESSAGES = false }, table.unpack(c[1]))
        local what = table.concat(c[1], " ") .. " under LANG=" .. lang[1]
        assert.equal(2, code, what .. ": " .. err)
        assert.equal("", out, what)
        i18n.set(lang[2])
        local want
        if c[2] == "cli.unknown_command" then
          want = i18n.t("cli.unknown_command", "nosuch", "", require("ascope.main").command_list())
        else
          want = i18n.t(c[2], table.unpack(c, 3))
        end
        assert.truthy(err:find(want, 1, true), what .. ": wanted " .. want .. ", got " .. err)
        -- the other language's words are not there
        local has_cjk = err:find("[\228-\233][\128-\191][\128-\191]") ~= nil
        assert.equal(lang[2] == "zh", has_cjk, what .. ": " .. err)
      end
    end
    i18n.set("en")
  end)

  it("of a usage error follows LC_MESSAGES over LANG, and --lang over both", function()
    local _, _, err = h.run({ LANG = "C", LC_ALL = false, LC_MESSAGES = "zh_CN.UTF-8" }, "memory")
    i18n.set("zh")
    assert.truthy(err:find(i18n.t("cli.needs", "memory", "INPUT", "memory"), 1, true), err)
    _, _, err = h.run({ LANG = "zh_CN.UTF-8", LC_ALL = false, LC_MESSAGES = false }, "--lang", "en", "memory")
    i18n.set("en")
    assert.truthy(err:find(i18n.t("cli.needs", "memory", "INPUT", "memory"), 1, true), err)
  end)
end)

describe("a rule file's texts", function()
  local rules = require "ascope.rules"
  after_each(function() i18n.set("en") end)

  it("are registered into the catalogue under the file and the rule's id", function()
    local r = assert(rules.load("memory"))
    local check
    for _, c in ipairs(r.input) do if c.id == "required_columns" then check = c end end
    assert.equal("rule.memory.input.required_columns.text", check.text)
    i18n.set("en")
    assert.equal("operator_memory.csv lacks required columns: Name", i18n.t(check.text, "Name"))
    i18n.set("zh")
    assert.equal("operator_memory.csv 缺少必需列：Name", i18n.t(check.text, "Name"))
  end)

  it("of every bundled rule file are there in both languages", function()
    local n = 0
    local function walk(v, where)
      if type(v) == "string" and v:match("^rule%.") then
        n = n + 1
        for _, lang in ipairs({ "en", "zh" }) do
          local text = i18n.text(lang, v)
          assert(type(text) == "string" and text ~= "", where .. ": no " .. lang .. " text for " .. v)
        end
        assert.equal(directives(i18n.text("en", v)), directives(i18n.text("zh", v)), v)
      elseif type(v) == "table" then
        for k, x in pairs(v) do walk(x, where .. "." .. tostring(k)) end
      end
    end
    for _, name in ipairs({ "memory", "timeline", "plog", "graph", "opjitter", "win_layout", "layout_memory",
                            "layout_timeline" }) do
      walk(assert(rules.load(name)), name)
    end
    assert.is_true(n >= 40, "rule texts found: " .. n)
  end)

  it("fall back to English when a user's rule gives only en, as every message does", function()
    local dir = h.tmpdir()
    finally(function() h.cleanup(dir) end)
    h.write(dir .. "/user.lua", [[return { input = { { id = "required_columns",
      text = { en = "my own words: %s" } } } }]])
    local r = assert(rules.load("memory", dir .. "/user.lua"))
    local check
    for _, c in ipairs(r.input) do if c.id == "required_columns" then check = c end end
    i18n.set("zh")
    assert.equal("my own words: X", i18n.t(check.text, "X"))
    -- a later load of the bundled file puts the bundled texts back
    assert(rules.load("memory"))
    assert.equal("operator_memory.csv 缺少必需列：X", i18n.t(check.text, "X"))
  end)
end)
