--- A fingerprint of the code that computes a run's results, so that the parts of a sharded run
-- and their merge can be checked to come from one build (two builds of one version can compute
-- different results: the version number alone does not tell them apart).
--
-- It covers the ascope executable (its bundled Lua and rule files are inside it) or, under a
-- stock lua5.4, ascope_core.so and every Lua file of the ascope package folder; and the Lua
-- files of ASCOPE_PATH in both cases. 64-bit FNV-1a over 8-byte words: it tells builds apart,
-- it is no defence against someone forging a collision.
local M = {}

local PRIME, OFFSET = 0x100000001b3, -0x340d631b7bdddcdb -- 0xcbf29ce484222325 as a signed integer

local function mix(h, data)
  local unpack = string.unpack
  local n = #data - #data % 8
  for i = 1, n, 8 do h = (h ~ unpack("<i8", data, i)) * PRIME end
  for i = n + 1, #data do h = (h ~ data:byte(i)) * PRIME end
  return (h ~ #data) * PRIME
end

local function file(path)
  local f = path and io.open(path, "rb")
  if not f then return nil end
  local data = f:read("a")
  f:close()
  return data
end

local cached

-- every *.lua under dir, in name order, into h
local function mix_tree(h, dir)
  local fs = require("ascope_core").fs
  local files = {}
  for _, p in ipairs(fs.walk(dir) or {}) do
    if p:match("%.lua$") then files[#files + 1] = p end
  end
  table.sort(files)
  for _, p in ipairs(files) do h = mix(mix(h, p:sub(#dir + 1)), file(p) or "") end
  return h
end

--- The fingerprint as 16 hex digits (computed once per process).
function M.get()
  if cached then return cached end
  local h = OFFSET
  if require("ascope_core").resource then -- the ascope executable
    h = mix(h, file("/proc/self/exe") or "")
  else
    h = mix(h, file(package.searchpath("ascope_core", package.cpath)) or "")
    local main = package.searchpath("ascope.main", package.path)
    if main then h = mix_tree(h, main:match("^(.*)/[^/]+$")) end
  end
  local user = os.getenv("ASCOPE_PATH")
  if user and user ~= "" then h = mix_tree(h, user) end
  cached = ("%016x"):format(h)
  return cached
end

return M
