local core = require "ascope_core"
local h = require "helper"
local json = core.json

local TRACE = h.real .. "/msinsight_pytorch_text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"

describe("json.scan on a real trace_view.json", function()
  local r
  setup(function()
    r = assert(json.scan(TRACE, {
      where = { cat = "cpu_op", ["args.Call stack"] = true },
      fields = { name = "string", ts = "us", dur = "us", ["args.Call stack"] = "string", pid = "integer" },
    }))
  end)

  it("keeps exactly the cpu_op events that carry a call stack", function()
    -- 316 of 860 cpu_op events among 8375 events (counted independently with Python's json)
    assert.equal(316, r.n)
    assert.equal(8375, r.events)
    assert.equal(316, #r.columns.name)
  end)

  it("turns decimal microsecond strings into exact integer nanoseconds", function()
    assert.equal("aten::empty", r.columns.name[1])
    assert.equal(1736405443863674400, r.columns.ts[1])  -- "1736405443863674.400"
    assert.equal(162660, r.columns.dur[1])              -- 162.66 us
    assert.equal("ProfilerStep#50", r.columns.name[316])
    assert.equal(1736405443862052130, r.columns.ts[316])
    assert.equal(136897820, r.columns.dur[316])
    assert.equal(3016828, r.columns.pid[1])
  end)

  it("interns repeated call stacks", function()
    local stacks = r.columns["args.Call stack"]
    local ids = {}
    local distinct = 0
    for i = 1, #stacks do
      local id = stacks:id(i)
      if not ids[id] then
        ids[id] = true
        distinct = distinct + 1
      end
    end
    assert.equal(36, distinct)
    assert.truthy(stacks[1]:find("_rebuild_tensor;\r\n", 1, true))
  end)

  it("captures process and thread names from ph:M events in the same pass", function()
    assert.equal("Ascend Hardware", r.meta.processes["3089232288"])
    assert.equal("Python", r.meta.processes["3016828"])
    assert.equal("Overlap Analysis", r.meta.processes["3089232608"])
    assert.equal("Thread 3026591", r.meta.threads["3016828"]["3026591"])
    assert.equal("Stream 3", r.meta.threads["3089232288"]["3"])
  end)

  it("filters with equality, sets and absence", function()
    local all = assert(json.scan(TRACE, { where = { cat = "cpu_op" }, fields = { name = "string" } }))
    assert.equal(860, all.n)
    local none = assert(json.scan(TRACE, { where = { cat = { "cpu_op" }, ["args.Call stack"] = false },
                                           fields = { name = "string" } }))
    assert.equal(860 - 316, none.n)
  end)
end)

describe("json.scan input forms and bad input", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("reads {\"traceEvents\": [...]} and numeric or string timestamps alike", function()
    local p = dir .. "/t.json"
    h.write(p, '{"otherData": {"x": [{"ts": 5}]}, "traceEvents": [' ..
      '{"name": "a", "ts": 1000000.0, "ph": "X"}, {"name": "b", "ts": "1000000.0005", "ph": "X"}],' ..
      ' "stackFrames": {"1": {"name": "f", "ts": 7}}}')
    local r = assert(json.scan(p, { fields = { name = "string", ts = "us" } }))
    assert.equal(2, r.n)
    assert.equal(1000000000, r.columns.ts[1])
    assert.equal(1000000001, r.columns.ts[2])
  end)

  it("names file, byte offset, line and column of a truncated trace", function()
    local p = dir .. "/cut.json"
    h.copy(TRACE, p, 100000)
    local prefix = h.read(p)
    local _, lines = prefix:gsub("\n", "")
    local r, err = json.scan(p, { fields = { name = "string" } })
    assert.is_nil(r)
    assert.truthy(err:find(p, 1, true))
    assert.truthy(err:find(":" .. (lines + 1) .. ":", 1, true))
    assert.truthy(err:find("byte 100000", 1, true))
    assert.truthy(err:find("truncated", 1, true))
  end)

  it("with partial = true returns the events read before the error", function()
    local p = dir .. "/cut.json"
    h.copy(TRACE, p, 100000)
    local r, err = json.scan(p, { partial = true, fields = { name = "string" } })
    assert.truthy(r.partial)
    assert.truthy(r.n > 0)
    assert.equal("aten::empty", r.columns.name[1])
    assert.truthy(err:find("truncated", 1, true))
    -- a file that cannot be opened read nothing: an error, not an empty partial result (it was
    -- a crash), on one thread and on several
    for _, threads in ipairs({ 1, 2 }) do
      local none, why = json.scan(dir .. "/absent.json", { partial = true, threads = threads, fields = { name = "string" } })
      assert.is_nil(none)
      assert.truthy(why:find(dir .. "/absent.json: cannot open", 1, true), why)
    end
  end)

  it("points at a syntax error in the middle of a file", function()
    local p = dir .. "/bad.json"
    h.write(p, '[{"name": "a"},\n {"name": }]')
    local r, err = json.scan(p, { fields = { name = "string" } })
    assert.is_nil(r)
    assert.truthy(err:find(p .. ":2:", 1, true), err)
    assert.truthy(err:find("invalid JSON", 1, true))
  end)

  it("rejects an empty file and a file without an event array", function()
    local p = dir .. "/empty.json"
    h.write(p, "")
    local _, err = json.scan(p, {})
    assert.truthy(err:find("empty", 1, true))
    h.write(p, '{"a": 1}')
    local _, err2 = json.scan(p, {})
    assert.truthy(err2:find("no event array", 1, true))
  end)

  it("leaves a value that is not a time empty and says which", function()
    local p = dir .. "/t.json"
    h.write(p, '[{"name": "a", "ts": "soon"}, {"name": "b", "ts": 2}]')
    local r = assert(json.scan(p, { fields = { name = "string", ts = "us" } }))
    assert.is_nil(r.columns.ts[1])
    assert.equal(2000, r.columns.ts[2])
    assert.truthy(r.warning:find('"soon"', 1, true))
  end)
end)

describe("json.decode / load / encode", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)
  it("decodes and encodes small documents", function()
    local v = assert(json.decode('{"a": [1, 2.5, "x", true, null], "b": {"c": -7}}'))
    assert.equal(1, v.a[1])
    assert.equal(2.5, v.a[2])
    assert.equal(json.null, v.a[5])
    assert.equal(-7, v.b.c)
    assert.equal('{"a":[1,2.5,"x",true,null],"b":{"c":-7}}', json.encode(v))
    assert.equal('{"s":"a\\"b\\r\\n","w":1.0}', json.encode({ s = 'a"b\r\n', w = 1.0 }))
    assert.equal("[]", json.encode(setmetatable({}, { __jsontype = "array" })))
  end)

  it("reports where a document is broken", function()
    local v, err = json.decode('{"a": [1, }', "doc.json")
    assert.is_nil(v)
    assert.truthy(err:find("doc.json:1:", 1, true))
  end)

  it("json.writer writes rows from columns: escaped strings, exact times, repeated numbers", function()
    local col = core.column
    local names = { "aten::empty", 'say "hi"', "a;\r\nb\\c", "tab\there" }
    local name, mb, ts = col.new("string"), col.new("number"), col.new("integer")
    for i = 1, 2000 do
      name:push(names[i % #names + 1])
      mb:push((i % 300) / 4 + (i % 2) * 0.1)
      ts:push(1736405443000000000 + i * 1003)
    end
    local p = dir .. "/t.json"
    local w = assert(json.writer(p))
    w:write('{"traceEvents":[')
    assert.equal(2000, w:rows({ '{"name":', { name, string = true }, ',"ts":', { ts, scale = 3 }, ',"mb":', { mb }, "}" }))
    w:write("]}")
    assert(w:close())
    local doc = assert(json.load(p))
    assert.equal(2000, #doc.traceEvents)
    for i = 1, 2000, 7 do
      local e = doc.traceEvents[i]
      assert.equal(names[i % #names + 1], e.name)
      assert.equal((i % 300) / 4 + (i % 2) * 0.1, e.mb)
    end
    local text = h.read(p)
    for _, i in ipairs({ 1, 997, 1999 }) do -- exact, not through a double
      local t = 1736405443000000000 + i * 1003
      assert.truthy(text:find(('"ts":%d.%03d,'):format(t // 1000, t % 1000), 1, true), i)
    end
  end)

  it("json.writer takes its order as a row list (column.group's 4-byte rows), an integer column or a list alike",
    function()
      local col = core.column
      local _, _, rows = col.group(col.new("string", { "a", "b", "a", "c", "a" })) -- rows[1]: 1, 3, 5
      local n = col.new("integer", { 10, 20, 30, 40, 50 })
      local p = dir .. "/o.json"
      local function write(order)
        local w = assert(json.writer(p))
        w:rows({ '{"n":', { n }, "}" }, { order = order, sep = "," })
        assert(w:close())
        return h.read(p)
      end
      assert.equal('{"n":10},{"n":30},{"n":50}', write(rows[1]))
      assert.equal(write(rows[1]), write({ 1, 3, 5 }))
      assert.equal(write(rows[1]), write(col.new("integer", { 1, 3, 5 })))
      assert.has_error(function() write(col.new("integer", { 1, 6 })) end, "json writer: row 6 out of range")
      assert.has_error(function() write({ 0 }) end, "json writer: row 0 out of range")
      assert.has_error(function() write({ 2 ^ 32 + 1 }) end, "json writer: row 4294967297 out of range")
      local gap = col.new("integer", { 1 })
      gap:push(nil)
      assert.has_error(function() write(gap) end, "json writer: a missing row in the order")
    end)

  it("loads the real profiler_info with rank_id", function()
    local doc = assert(json.load(h.real .. "/rl-insight/memory_data/20260526_085155_ascend_pt/profiler_info_0.json"))
    assert.equal("0", doc.rank_id)
  end)
end)

describe("json string escaping", function()
  -- the model of every JSON writer's escaper: valid UTF-8 as it is, a byte that does not start
  -- a valid character as U+FFFD, controls, quote and backslash escaped
  local SHORT = { [34] = '\\"', [92] = "\\\\", [10] = "\\n", [13] = "\\r", [9] = "\\t" }
  local function model(s)
    local out, i = {}, 1
    while i <= #s do
      local c = s:byte(i)
      if c < 0x80 then
        out[#out + 1] = SHORT[c] or (c < 0x20 and ("\\u%04x"):format(c)) or string.char(c)
        i = i + 1
      elseif c >= 0xC0 and utf8.len(s, i, i) == 1 then -- utf8.len takes a lone continuation byte
        local len = c >= 0xF0 and 4 or c >= 0xE0 and 3 or 2 -- (utf8.offset would skip one after)
        out[#out + 1] = s:sub(i, i + len - 1)
        i = i + len
      else
        out[#out + 1] = "\\ufffd"
        i = i + 1
      end
    end
    return '"' .. table.concat(out) .. '"'
  end

  it("matches the model on long plain runs broken by every kind of byte at every place", function()
    math.randomseed(11)
    local specials = { "\"", "\\", "\n", "\r", "\t", "\1", "\31", "\127", "é", "中", "\240\159\152\128", "\255",
                       "\228\184", "\237\160\128", "\192\128", "\128" }
    for _ = 1, 400 do
      local parts = {}
      for k = 1, math.random(1, 6) do
        parts[#parts + 1] = ("abcdefgh/ij.py(12): fn "):rep(math.random(0, 3)):sub(1, math.random(0, 40))
        if k > 1 or math.random() < 0.5 then parts[#parts + 1] = specials[math.random(#specials)] end
      end
      local s = table.concat(parts)
      assert.equal(model(s), json.encode(s), ("%q"):format(s))
    end
  end)
end)

describe("json.scan decides predicates as early as it can", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  -- each event says what the one-value-per-key reading (the last value of a repeated key wins)
  -- gives; the early decision must not change any of it
  it("wherever the key stands, repeated or missing, and for metadata decided late", function()
    local p = dir .. "/t.json"
    h.write(p, "[" .. table.concat({
      '{"name": "a", "ts": 1, "args": {"Call stack": "s"}, "cat": "x"}', -- key last: out
      '{"cat": "x", "name": "b", "args": {"Call stack": "t"}, "ts": 2, "cat": "cpu_op"}', -- repeated: in
      '{"cat": "cpu_op", "name": "c", "ts": 3, "cat": "x"}', -- repeated: out
      '{"name": "d", "ts": 4}', -- no key: out
      '{"cat": "x", "ph": "C", "name": "process_name", "pid": 2, "ph": "M", "args": {"name": "Q"}}', -- metadata after all
      '{"cat": "x", "ph": "C", "name": "process_name", "pid": 3, "args": {"name": "R"}}', -- not metadata
      '{"ts": 5, "cat": "cpu_op", "name": "e", "args": {"Call stack": "u"}}', -- key after the fields: in
    }, ",\n") .. "]")
    local r = assert(json.scan(p, { where = { cat = "cpu_op" },
                                    fields = { name = "string", ts = "us", ["args.Call stack"] = "string" } }))
    assert.equal(7, r.events)
    assert.same({ "b", "e" }, r.columns.name:totable())
    assert.same({ 2000, 5000 }, r.columns.ts:totable())
    assert.same({ "t", "u" }, r.columns["args.Call stack"]:totable())
    assert.same({ ["2"] = "Q" }, r.meta.processes)
    -- a predicate inside args, decided there
    local a = assert(json.scan(p, { where = { ["args.Call stack"] = false, cat = "x" }, fields = { name = "string" } }))
    assert.same({ "c", "process_name", "process_name" }, a.columns.name:totable())
  end)
end)

describe("json.scan against a full decode of the same file", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)
  -- yajl decodes every event into a table (a repeated key: the last value wins), the filter and
  -- projection are done here in Lua; the scan, with its early decisions, must give the same rows
  it("on events with keys in any order, repeated or missing", function()
    math.randomseed(7)
    local pick = function(t) return t[math.random(#t)] end
    local cats, phs = { "cpu_op", "python_function", "x" }, { "X", "X", "M", "C" }
    local names = { "aten::add", "caf\u{e9}", "a\\\"b", "\\u4e2d", "x[{y}]", "process_name" }
    local lines = {}
    for i = 1, 400 do
      local members = {
        '"cat": "' .. pick(cats) .. '"', '"ph": "' .. pick(phs) .. '"', '"name": "' .. pick(names) .. '"',
        '"ts": ' .. i, '"pid": ' .. i,
        '"args": {"Call stack": "' .. pick(names) .. ';\\r\\nf' .. i % 7 .. '", "name": "P' .. i .. '"}',
        '"other": [{"cat": "cpu_op"}, "ph"]',
      }
      for _ = 1, math.random(0, 2) do table.remove(members, math.random(#members)) end
      if math.random() < 0.2 then members[#members + 1] = '"cat": "' .. pick(cats) .. '"' end
      if math.random() < 0.2 then members[#members + 1] = '"ph": "' .. pick(phs) .. '"' end
      for k = #members, 2, -1 do
        local j = math.random(k)
        members[k], members[j] = members[j], members[k]
      end
      lines[i] = "{" .. table.concat(members, ", ") .. "}"
    end
    local text = "[" .. table.concat(lines, ",\n") .. "]"
    local p = dir .. "/t.json"
    h.write(p, text)
    local want, n = { name = {}, ts = {}, stack = {}, processes = {} }, 0
    for _, e in ipairs(json.decode(text)) do
      if (e.cat == "cpu_op" or e.cat == "python_function") and e.ph == "X" then
        n = n + 1
        want.name[n], want.ts[n] = e.name or false, e.ts or false
        want.stack[n] = e.args and e.args["Call stack"] or false
      end
      if e.ph == "M" and e.name == "process_name" and e.pid and e.args and e.args.name then
        want.processes[tostring(e.pid)] = e.args.name
      end
    end
    assert.truthy(n > 40)
    for _, threads in ipairs({ 1, 3 }) do
      local r = assert(json.scan(p, { where = { cat = { "cpu_op", "python_function" }, ph = "X" }, threads = threads,
                                      min_range = 1, fields = { name = "string", ts = "integer",
                                                                ["args.Call stack"] = "string" } }))
      assert.equal(400, r.events)
      assert.equal(n, r.n)
      local c = r.columns
      for i = 1, n do
        assert.equal(want.ts[i] or nil, c.ts[i], i)
        assert.equal(want.name[i] or nil, c.name[i], i)
        assert.equal(want.stack[i] or nil, c["args.Call stack"][i], i)
      end
      assert.same(want.processes, r.meta.processes)
    end
  end)
end)
