-- json.scan on several threads against the same scan on one: every column value, every string
-- id (fresh string tables on both sides), the event count, the warning, the error and the rows
-- kept with partial, for range starts forced at every byte of small traces cut at awkward places.
local core = require "ascope_core"
local h = require "helper"
local json = core.json

local FIELDS = { name = "string", ts = "us", dur = "integer", ph = "string", pid = "string",
                 ["args.Call stack"] = "string", ["args.x"] = "number" }

-- Everything a scan gives, string ids included. The result is dropped and collected afterwards,
-- so the next scan interns into a new string table and its ids start from 1 again.
local function snapshot(path, opts)
  local o = { fields = FIELDS, threads = 1 }
  for k, v in pairs(opts or {}) do o[k] = v end
  local r, err = json.scan(path, o)
  local s = { err = err }
  if r then
    s.n, s.events, s.warning, s.partial, s.ranges = r.n, r.events, r.warning, r.partial, r.ranges
    s.cols = {}
    for name, c in pairs(r.columns) do
      local vals = {}
      for i = 1, #c do
        vals[i] = c:kind() == "string" and (tostring(c[i]) .. "#" .. c:id(i)) or tostring(c[i])
      end
      s.cols[name] = table.concat(vals, "\0")
    end
    s.processes, s.threads = r.meta.processes, r.meta.threads
  end
  r = nil -- luacheck: ignore 311
  collectgarbage()
  collectgarbage()
  return s
end

local function same(a, b, what)
  local ranges = b.ranges
  a.ranges, b.ranges = nil, nil
  assert.same(a, b, what)
  b.ranges = ranges
end

-- A trace with what makes a cut hard: escapes (\" \\ \u00e9 surrogate pairs), raw multibyte
-- UTF-8, brackets and "},{" inside strings, nested arrays of objects, the predicate key after
-- the others or missing, metadata events, values that are not times.
local EVENTS = {
  '{"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "Python \\"main\\""}}',
  '{"name": "aten::add", "cat": "cpu_op", "ph": "X", "pid": 7, "tid": 1, "ts": "1736405443863674.400",' ..
    ' "dur": 12, "args": {"Call stack": "a.py(1): f;\\r\\nb.py(2): g", "x": 1.5}}',
  '{"ts": 2.5, "dur": 3, "args": {"list": [{"a": 1}, {"b": [2, {"c": "}, {"}]}], "x": -2e3},' ..
    ' "name": "x[{y}]", "ph": "X", "cat": "cpu_op", "pid": 7}',
  '{"name": "caf\u{e9} \u{4e2d}\u{6587} \u{1F600}", "ph": "X", "ts": 4, "cat": "cpu_op", "pid": 8,' ..
    ' "args": {"Call stack": "\\u00e9\\ud83d\\ude00 \\\\ \\/ \\" }, {\\"ts\\": 1}"}}',
  '{"name": "soon", "ph": "X", "ts": "soon", "dur": "x", "cat": "python_function", "pid": 8}',
  '{"name": "no cat", "ph": "X", "ts": 6, "pid": 9}',
  '{"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "\u{7ebf}\u{7a0b} 1"}}',
  '{"name": "aten::add", "cat": "cpu_op", "ph": "X", "ts": 7.001, "args": {"Call stack": "a.py(1): f;\\r\\nb.py(2): g"}}',
  '{"name": "last", "ph": "f", "ts": 8, "cat": "cpu_op", "id": 3, "args": {}}',
}

local function events(list, sep) return table.concat(list, sep or ",\n  ") end

describe("json.scan on several threads", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  -- the one-thread scan against a start forced at every byte, with and without a predicate
  local function every_cut(path, opts, expect_n)
    local one = snapshot(path, opts)
    if expect_n then assert.equal(expect_n, one.n) end
    local size = #h.read(path)
    local handed = 0
    for at = 1, size - 1 do
      local o = { split_at = { at } }
      for k, v in pairs(opts or {}) do o[k] = v end
      local two = snapshot(path, o)
      same(one, two, "range start at byte " .. at)
      if two.ranges == 2 then handed = handed + 1 end
    end
    return one, handed
  end

  it("gives the one-thread columns, ids and metadata for a start at every byte", function()
    local p = dir .. "/t.json"
    h.write(p, "[\n  " .. events(EVENTS) .. "\n]\n")
    local one, handed = every_cut(p, nil, #EVENTS)
    -- the cuts that are true event boundaries were handed over (8 events after the first);
    -- every other start fell inside an event or between and was read by the range before
    assert.equal(#EVENTS - 1, handed)
    assert.equal(#EVENTS, one.events)
    assert.equal("Python \"main\"", one.processes["7"])
    assert.equal("\u{7ebf}\u{7a0b} 1", one.threads["7"]["1"])
    -- the first value that is not a time or a whole number, in the fields' order
    assert.truthy(one.warning:find('"soon" is not a time', 1, true) or one.warning:find('"x" is not a whole', 1, true))
    local _, handed2 = every_cut(p, { where = { cat = { "cpu_op", "python_function" }, ph = "X" } }, 5)
    assert.equal(#EVENTS - 1, handed2)
  end)

  it("reads {\"traceEvents\": [...]} with members before and after it", function()
    local p = dir .. "/t.json"
    h.write(p, '{"otherData": {"x": [{"ts": 5}, {"ts": 6}]}, "traceEvents": [' .. events(EVENTS, ",") ..
      '], "stackFrames": {"1": {"name": "f"}}, "traceEvents": [{"name": "again", "ts": 9}]}')
    local one = every_cut(p, nil, #EVENTS + 1)
    assert.equal("again", one.cols.name:match("([^%z]*)#%d+$"))
  end)

  it("keeps a file of one event whole", function()
    local p = dir .. "/one.json"
    h.write(p, '[{"name": "only", "ts": 1, "args": {"Call stack": "},{\\"a\\": [1]}"}}]')
    every_cut(p, nil, 1)
    h.write(p, '{"traceEvents": [{"name": "only", "ts": 1}]}')
    every_cut(p, nil, 1)
  end)

  it("reports a truncated or broken file as the one-thread scan does, partial rows too", function()
    local text = "[\n  " .. events(EVENTS) .. "\n]\n"
    local p = dir .. "/cut.json"
    for _, len in ipairs({ 120, 301, 455, 600, #text - 3 }) do
      h.write(p, text:sub(1, len))
      for _, partial in ipairs({ false, true }) do
        local one = snapshot(p, { partial = partial })
        assert.truthy(one.err:find("truncated", 1, true), one.err)
        for at = 1, len - 1, 7 do
          same(one, snapshot(p, { partial = partial, split_at = { at } }), len .. " bytes, start " .. at)
        end
      end
    end
    h.write(p, text:gsub('"last"', '"last" "x"'))
    local one = snapshot(p)
    assert.truthy(one.err:find("invalid JSON", 1, true), one.err)
    for at = 1, #text - 1, 5 do same(one, snapshot(p, { split_at = { at } }), "start " .. at) end
  end)

  it("cuts a longer trace into threads at guessed starts, proved or dropped", function()
    local list = {}
    for i = 1, 400 do list[i] = EVENTS[(i - 1) % #EVENTS + 1] end
    local p = dir .. "/long.json"
    h.write(p, '{"traceEvents": [' .. events(list) .. "]}")
    local one = snapshot(p)
    for threads = 2, 5 do
      local par = snapshot(p, { threads = threads, min_range = 1 })
      assert.equal(threads, par.ranges)
      same(one, par, threads .. " threads")
    end
    -- three starts at once: inside a string, a true boundary, inside an escape
    local text = h.read(p)
    local in_string = text:find("}, {", 1, true) + 3
    local boundary = text:find("},\n  {", 2000, true) + 4
    local in_escape = text:find("\\ud83d", 5000, true) + 2
    same(one, snapshot(p, { split_at = { in_string, boundary, in_escape } }))
    assert.equal(2, snapshot(p, { split_at = { in_string, boundary, in_escape } }).ranges)
  end)

  it("calls the progress callback from the calling thread, and its error stops the scan", function()
    local list = {}
    for i = 1, 200 do list[i] = EVENTS[(i - 1) % #EVENTS + 1] end
    local p = dir .. "/long.json"
    h.write(p, "[" .. events(list) .. "]")
    local size = #h.read(p)
    local calls = {}
    local r = assert(json.scan(p, { fields = FIELDS, threads = 3, min_range = 1,
                                    progress = function(done, total) calls[#calls + 1] = { done, total } end }))
    assert.equal(3, r.ranges)
    assert.same({ { size, size } }, calls)
    assert.has_error(function()
      json.scan(p, { fields = FIELDS, threads = 3, min_range = 1, progress = function() error("stop here") end })
    end, "stop here")
  end)

  it("checks its options", function()
    local p = dir .. "/t.json"
    h.write(p, "[" .. EVENTS[2] .. "]")
    assert.has_error(function() json.scan(p, { threads = 0 }) end)
    assert.has_error(function() json.scan(p, { split_at = { "x" } }) end)
    -- starts not ascending or outside the array: one thread
    assert.equal(1, assert(json.scan(p, { split_at = { 5, 3 } })).ranges)
    assert.equal(1, assert(json.scan(p, { split_at = { 0 } })).ranges)
  end)
end)
