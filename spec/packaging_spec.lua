-- What packaging ships beside the executable: the man page and the bash completion written from
-- the commands' option specs, and one version everywhere.
local h = require "helper"
local main = require "ascope.main"
local cli = require "ascope.cli"
local fs = require("ascope_core").fs

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function sorted(list)
  table.sort(list)
  return list
end

-- every flag of an option list, as the completion offers them
local function flags_of(options, into)
  for _, o in ipairs(options) do
    into[#into + 1] = "--" .. o[1]
    if o[2] then into[#into + 1] = "-" .. o[2] end
  end
  return into
end

describe("the bash completion", function()
  local dir, driver
  setup(function()
    dir = h.tmpdir()
    h.write(dir .. "/ascope.bash", require("ascope.completion").bash())
    driver = dir .. "/driver.sh"
    -- what bash does on <TAB>: COMP_WORDS split as readline splits them, the cursor in the last
    h.write(driver, 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ascope; '
      .. 'for w in "${COMPREPLY[@]}"; do printf "%s\\n" "$w"; done\n')
    assert(fs.mkdirs(dir .. "/work/folder"))
    h.write(dir .. "/work/file.lua", "")
  end)
  teardown(function() h.cleanup(dir) end)

  -- the words bash offers after typing words (the last one is the word being completed)
  local function complete(...)
    local args = {}
    for i, w in ipairs({ ... }) do args[i] = quote(w) end
    local p = assert(io.popen(("cd %s/work && bash %s %s/ascope.bash ascope %s 2>&1"):format(dir, driver, dir,
      table.concat(args, " "))))
    local offered = {}
    for line in p:lines() do offered[#offered + 1] = line end
    assert.is_true(p:close())
    return sorted(offered)
  end

  it("completes commands and global options, and the command after global options", function()
    assert.same({ "memory", "merge", "moe" }, complete("m"))
    local all = flags_of(cli.globals, {})
    for _, n in ipairs(main.command_names()) do all[#all + 1] = n end
    assert.same(sorted(all), complete(""))
    assert.same({ "en", "zh" }, complete("--lang", ""))
    assert.same({ "timeline" }, complete("--lang", "en", "-q", "ti"))
    assert.same({ "timeline" }, complete("--lang", "=", "en", "ti"))
    assert.same({ "opjitter" }, complete("help", "op"))
    assert.same({ "folder" }, complete("--rules-dir", "f"))
  end)

  it("offers every option of every command, from its spec", function()
    for _, name in ipairs(main.command_names()) do
      if name ~= "run" and name ~= "help" then
        assert.same(sorted(flags_of(cli.globals, flags_of(main.spec(name).options, {}))), complete(name, "-"), name)
      end
    end
    assert.same(sorted(flags_of(cli.globals, {})), complete("run", "-"))
  end)

  it("offers the choices of an option or a KEY=VALUE parameter, folders for DIR and files elsewhere", function()
    assert.same({ "--match" }, complete("memory", "--ma"))
    assert.same({ "within", "within-or-latest" }, complete("memory", "--match", "w"))
    assert.same({ "csv", "html", "json", "md", "trace" }, complete("memory", "--format", ""))
    assert.same({ "SOC_VERSION=" }, complete("moe", "SOC"))
    assert.same({ "910B", "910_93", "950" }, complete("moe", "SOC_VERSION", "=", "9"))
    assert.same({ "folder" }, complete("moe", "-o", ""))
    assert.same({ "folder" }, complete("moe", "TARGET_DIR", "=", ""))
    assert.same({ "file.lua", "folder" }, complete("memory", ""))
    assert.same({ "file.lua", "folder" }, complete("run", ""))
  end)
end)

describe("the man page", function()
  local page = require("ascope.manpage").render()

  it("documents every command, option, parameter and output file of the specs", function()
    assert.truthy(page:find('\n.TH ASCOPE 1 "" "ascope ' .. require("ascope.version") .. '"', 1, true))
    local function roff(s) return (s:gsub("%-", "\\-")) end
    for _, o in ipairs(cli.globals) do assert.truthy(page:find(roff("--" .. o[1]), 1, true), o[1]) end
    for _, name in ipairs(main.command_names()) do
      local spec = main.spec(name)
      assert.truthy(page:find("\n.SS ascope " .. name, 1, true), name)
      for _, o in ipairs(spec.options) do assert.truthy(page:find("\\fB" .. roff("--" .. o[1]) .. "\\fR", 1, true), name .. " " .. o[1]) end
      for k in pairs(spec.keys or {}) do assert.truthy(page:find("\\fB" .. k .. "=\\fR", 1, true), name .. " " .. k) end
      for _, f in ipairs(spec.outputs or {}) do assert.truthy(page:find("\\fI" .. roff(f[1]) .. "\\fR", 1, true), name .. " " .. f[1]) end
    end
    for _, e in ipairs(main.environment) do assert.truthy(page:find(e[1], 1, true), e[1]) end
  end)

  it("is valid roff: no text line that a formatter would take as a request", function()
    local macros = { TH = 1, SH = 1, SS = 1, TP = 1, PP = 1, RS = 1, RE = 1, nf = 1, fi = 1, B = 1, ["\\\""] = 1 }
    for line in page:gmatch("[^\n]+") do
      local req = line:match("^[.']([^%s]*)")
      if req then assert.truthy(macros[req], "unexpected request: " .. line) end
      assert.falsy(line:find("\\[^efIBR&%-\"]"), "unknown escape: " .. line)
    end
  end)
end)

describe("one version", function()
  it("is printed by ascope version and names the rockspec and the latest CHANGELOG entry", function()
    local v = require "ascope.version"
    assert.truthy(v:match("^%d+%.%d+%.%d+$"))
    local code, out = h.run("version")
    assert.equal(0, code)
    assert.equal("ascope " .. v, out:match("^[^\n]+"))
    local _, out2 = h.run("--version")
    assert.equal(out, out2)
    assert.equal(v, require("ascope").VERSION)
    assert.truthy(fs.stat("ascope-" .. v .. "-1.rockspec"), "ascope-" .. v .. "-1.rockspec at the root")
    assert.truthy(h.read("ascope-" .. v .. "-1.rockspec"):find('version = "' .. v .. '-1"', 1, true))
    assert.equal(v, h.read("CHANGELOG.md"):match("\n## %[?(%d+%.%d+%.%d+)"))
  end)
end)
