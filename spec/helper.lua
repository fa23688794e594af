-- Shared spec helpers: fixture paths, scratch folders, running the ascope executable.
local core = require "ascope_core"
local luassert = require "luassert" -- the specs' assert lives in their own environment
-- in-process runs stay silent, also when busted runs inside the ascope executable (which
-- installs the stderr sink before it runs a script)
require("ascope.log").set_sink(nil)

local M = {}

M.root = (os.getenv("PWD") or ".")
M.fixtures = "spec/fixtures"
M.real = "spec/fixtures/real"
-- absolute: some specs run the executable from inside a scratch folder
M.bin = os.getenv("ASCOPE_BIN") or core.fs.realpath("build/ascope") or "build/ascope"

--- The keys of a table, sorted.
function M.sorted_keys(t)
  local list = {}
  for k in pairs(t) do list[#list + 1] = k end
  table.sort(list)
  return list
end

--- The header line of operator_memory.csv as the profiler writes it.
M.MEMORY_CSV_HEADER = "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),"
  .. "Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),"
  .. "Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),"
  .. "Release Total Active(MB),Stream Ptr,Device Type\n"

--- The resident size of this process in bytes (/proc/self/statm).
function M.rss_bytes()
  local f = assert(io.open("/proc/self/statm"))
  local _, resident = f:read("n", "n")
  f:close()
  return resident * 4096
end

local reserved = {} -- scratch folder -> the os.tmpname() file that keeps its name unique
--- A fresh scratch folder under /tmp (removed by cleanup()). Named after an os.tmpname() file
-- (mkstemp), kept until cleanup: a name made of the time and math.random collides between spec
-- runs started in the same second under ASan, whose fixed heap addresses give every process the
-- same random seed.
function M.tmpdir()
  local name = os.tmpname()
  local dir = "/tmp/ascope-spec-" .. name:match("([^/]+)$")
  assert(not core.fs.stat(dir), dir .. " exists")
  assert(core.fs.mkdirs(dir))
  reserved[dir] = name
  return dir
end

function M.cleanup(dir)
  if dir and dir:match("^/tmp/ascope%-spec%-") then core.fs.remove_tree(dir) end
  if reserved[dir] then os.remove(reserved[dir]) end
  reserved[dir] = nil
end

function M.write(path, text)
  local dir = path:match("^(.*)/[^/]+$")
  if dir then assert(core.fs.mkdirs(dir)) end
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

function M.read(path)
  local f = assert(io.open(path, "rb"))
  local t = f:read("a")
  f:close()
  return t
end

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

--- Run the ascope executable; returns exit code, stdout, stderr. A table as the first argument
-- sets environment variables for the run ({LANG = "zh_CN.UTF-8"}; false unsets one).
function M.run(...)
  local args, env = {}, {}
  local first = 1
  if type((...)) == "table" then
    local names = {}
    for k in pairs((...)) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do -- env takes its -u options before the assignments
      if not (...)[k] then env[#env + 1] = "-u " .. k end
    end
    for _, k in ipairs(names) do
      local v = (...)[k]
      if v then env[#env + 1] = k .. "=" .. quote(v) end
    end
    first = 2
  end
  for i = first, select("#", ...) do args[#args + 1] = quote(select(i, ...)) end
  local out, err = os.tmpname(), os.tmpname()
  local cmd = ("%s%s %s >%s 2>%s"):format(#env > 0 and ("env " .. table.concat(env, " ") .. " ") or "", quote(M.bin),
    table.concat(args, " "), out, err)
  local _, _, code = os.execute(cmd)
  local o, e = M.read(out), M.read(err)
  os.remove(out)
  os.remove(err)
  return code, o, e
end

--- Run a Lua script file with the stock lua5.4 and the module paths this suite runs with (busted
-- may have set them itself, from .busted); returns its exit status and everything it wrote on
-- stdout and stderr.
function M.stock_lua(file)
  local prefix = ("LUA_PATH=%s LUA_CPATH=%s "):format(quote(package.path), quote(package.cpath))
  if os.getenv("ASAN_OPTIONS") then -- ascope_core.so built with sanitizers: load their runtime first
    local cc = assert(io.popen("cc -print-file-name=libasan.so"))
    prefix = prefix .. ("LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0 "):format(cc:read("l"))
    cc:close()
  end
  local p = assert(io.popen(("%slua5.4 %s 2>&1"):format(prefix, quote(file))))
  local out = p:read("a")
  local ok, _, code = p:close()
  return ok and 0 or code, out
end

--- Every file under dir, as {relative path -> bytes}.
function M.files(dir)
  local out = {}
  local p = io.popen(("cd '%s' && find . -type f | sort"):format(dir))
  for name in p:lines() do out[name] = M.read(dir .. "/" .. name) end
  p:close()
  return out
end

--- Run `ascope ARGS... -o PART --shard k/n [EXTRA...]` for k = 1..n in dir; every shard must
-- exit 0 and say it is shard k/n. Returns the part folders and each shard's stderr.
function M.shards(dir, n, args, extra)
  local parts, errs = {}, {}
  for k = 1, n do
    local part = ("%s/part-%d-of-%d"):format(dir, k, n)
    local a = { table.unpack(args) }
    for _, x in ipairs({ "-o", part, "--shard", ("%d/%d"):format(k, n), table.unpack(extra or {}) }) do a[#a + 1] = x end
    local code, out, err = M.run(table.unpack(a))
    luassert.equal(0, code, err)
    luassert.truthy(out:find(("shard %d/%d:"):format(k, n), 1, true), out)
    parts[k], errs[k] = part, err
  end
  return parts, errs
end

--- text with a path replaced by OUT (outputs of runs written to different folders compared).
function M.unpath(text, path) return (text:gsub(path:gsub("%p", "%%%0"), "OUT")) end

--- The number of keys of a table.
function M.count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

--- Rows of a CSV file as tables keyed by header (through the ascope reader).
function M.csv_rows(path)
  local r = assert(core.csv.open(path))
  local header = assert(r:next())
  local rows = {}
  while true do
    local rec = r:next()
    if not rec then break end
    local row = {}
    for i, h in ipairs(header) do row[h] = rec[i] end
    rows[#rows + 1] = row
  end
  r:close()
  return rows, header
end

--- Copy a file byte for byte, optionally only its first n bytes.
function M.copy(src, dst, n)
  local data = M.read(src)
  if n then data = data:sub(1, n) end
  M.write(dst, data)
end

--- Protobuf wire format for building test inputs, written independently of the decoder under
-- test: a varint, a varint field and a length-delimited field.
function M.pb_varint(n)
  local out = {}
  repeat
    local b = n & 0x7f
    n = n >> 7
    out[#out + 1] = string.char(n ~= 0 and (b | 0x80) or b)
  until n == 0
  return table.concat(out)
end
function M.pb_int(num, v) return M.pb_varint(num << 3) .. M.pb_varint(v) end
function M.pb_bytes(num, payload) return M.pb_varint((num << 3) | 2) .. M.pb_varint(#payload) .. payload end

return M
