-- Imports run one way: the library (every module under lua/ascope/ but the command line's front
-- end) never loads the command-line parser or a command, not even through another module, so
-- that `require "ascope"` in another program brings no argv handling with it.
local h = require "helper"

-- the front end: the parser, the entry point, the commands, and the two generators of the
-- command line's own documentation (man page, bash completion), which read every command's spec
local FRONT = { ["ascope.cli"] = true, ["ascope.main"] = true, ["ascope.completion"] = true, ["ascope.manpage"] = true }
local function front(name) return FRONT[name] or name:match("^ascope%.commands%.") ~= nil end

local function modules()
  local list = {}
  local p = io.popen("cd lua && find ascope -name '*.lua' | sort")
  for path in p:lines() do
    local name = path:gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")
    list[name] = "lua/" .. path
  end
  p:close()
  return list
end

-- the ascope modules a file requires (at load or later, inside a function)
local function requires(path)
  local out = {}
  local text = h.read(path):gsub("%-%-[^\n]*", "") -- not the examples in comments
  for name in text:gmatch("require%s*%(?%s*[\"']([%w_%.]+)[\"']") do
    if name:match("^ascope%.") or name == "ascope" then out[#out + 1] = name end
  end
  return out
end

describe("the library's imports", function()
  it("no library module reaches the command-line parser or a command", function()
    local files = modules()
    local direct = {}
    for name, path in pairs(files) do direct[name] = requires(path) end
    local offenders = {}
    for name in pairs(files) do
      if not front(name) then
        -- every module it can load, with the chain that leads there
        local seen, queue = { [name] = { name } }, { name }
        while #queue > 0 do
          local m = table.remove(queue, 1)
          for _, dep in ipairs(direct[m] or {}) do
            if not seen[dep] then
              local chain = { table.unpack(seen[m]) }
              chain[#chain + 1] = dep
              seen[dep] = chain
              if front(dep) then
                offenders[#offenders + 1] = table.concat(chain, " -> ")
              else
                queue[#queue + 1] = dep
              end
            end
          end
        end
      end
    end
    table.sort(offenders)
    assert.same({}, offenders)
  end)

  it("the check sees a require of the parser, direct or through another module", function()
    local dir = h.tmpdir()
    h.write(dir .. "/a.lua", 'local x = require("ascope.b")\nlocal function f() return require "ascope.cli" end\n')
    h.write(dir .. "/b.lua", "-- require 'ascope.cli' in a comment is not a require\nreturn {}\n")
    assert.same({ "ascope.b", "ascope.cli" }, requires(dir .. "/a.lua"))
    assert.same({}, requires(dir .. "/b.lua"))
    h.cleanup(dir)
  end)
end)
