-- How json.scan interns strings that hold escapes (call stacks): each distinct string once, by
-- the raw text it was met with, without keeping that raw text. What is checked is the outcome:
-- every row's text equals yajl's decode of the same event (an independent decoder), every row's
-- id is the id the state's string table gives that decoded text, spellings that decode alike
-- share an id and strings that differ only in an escape do not, on one thread and on several.
local core = require "ascope_core"
local h = require "helper"
local json = core.json

local FIELDS = { name = "string", ["args.Call stack"] = "string" }

-- Strings as they are written in the file (JSON string content, escapes and all); rows that
-- repeat a spelling, or spell the same text otherwise, must share an id.
local SPELLINGS = {
  "a.py(1): f;\\r\\nb.py(2): g",                    -- the profiler's own separator
  "a.py(1): f;\\r\\nb.py(2): g",                    -- the same spelling again
  "a.py(1): f;\\u000d\\u000ab.py(2): g",            -- the same text, \u escapes
  "a.py(1): f;\\r\\nb.py(2): h",                    -- differs in its last byte only
  "a.py(1): f;\\r\\nb.py(2): g\\t",                 -- one escape longer
  "\\/usr\\/lib\\/x.py(3): k ",                     -- \/ ...
  "/usr/lib/x.py(3): k\\u0020",                     -- ... and the text with / (ends on an escape)
  "/usr/lib/x.py(3): k ",                           -- plain: interned without the raw map
  "\\ud83d\\ude00 pair \\ud83d\\ude00",             -- surrogate pairs at both ends
  "\\uD83D\\uDE00 pair \\uD83D\\uDE00",             -- the same, upper-case hex
  "\\ud83d lone high, lone low \\ude00",            -- lone surrogates (encoded as they are)
  "\\\\",                                           -- a lone backslash
  "\\\\\\\\",                                       -- two
  "\\\"",                                           -- a lone quote
  "ends with a quote\\\"",
  "\\\"starts with a quote",
  "ends with a backslash\\\\",
  "\\\\u0041 is not an escape",                     -- a backslash, then text
  "\\u0041 is an escape",
  "A is an escape",                                 -- plain: must share the id above
  "caf\\u00e9 \\u4e2d\\u6587 \\b\\f\\t",
  "caf\u{e9} \u{4e2d}\u{6587} \\b\\f\\t",           -- raw UTF-8, same text
}

local function trace(rows)
  local ev = {}
  for i, s in ipairs(rows) do
    ev[i] = ('{"name": "op%d", "ph": "X", "args": {"Call stack": "%s"}}'):format(i, s)
  end
  return "[\n" .. table.concat(ev, ",\n") .. "\n]\n"
end

-- text and id of every row's stack, each id checked against the id the string table gives the
-- text. The result and the table are dropped and collected afterwards, so the next scan interns
-- into a new table and its ids start from 1 again (ids from two scans compare as orders).
local function scan(path, opts)
  local o = { fields = FIELDS }
  for k, v in pairs(opts or {}) do o[k] = v end
  local r = assert(json.scan(path, o))
  local c = r.columns["args.Call stack"]
  local strings = core.column.strings()
  local text, ids = {}, {}
  for i = 1, #c do
    text[i], ids[i] = c[i], c:id(i)
    assert.equal(strings:intern(text[i]), ids[i], "row " .. i)
  end
  local ranges = r.ranges
  r, c, strings = nil, nil, nil -- luacheck: ignore 311
  collectgarbage()
  collectgarbage()
  return text, ids, ranges
end

describe("json.scan interning escaped strings", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.cleanup(dir) end)

  it("decodes each string as yajl does and gives it the id of its decoded text", function()
    local p = dir .. "/t.json"
    local doc = trace(SPELLINGS)
    h.write(p, doc)
    local expect = json.decode(doc)
    local text, ids = scan(p)
    assert.equal(#SPELLINGS, #text)
    for i = 1, #SPELLINGS do
      if i ~= 11 then assert.equal(expect[i].args["Call stack"], text[i], "row " .. i) end
    end
    -- lone surrogates: the scan encodes each as its three bytes (where yajl makes a lone high
    -- one "?"); kept so, as the scan always has
    assert.equal("\xED\xA0\xBD lone high, lone low \xED\xB8\x80", text[11])
    -- spellings of one text share an id; texts that differ by one escape do not
    assert.equal(ids[1], ids[2])
    assert.equal(ids[1], ids[3])
    assert.are_not.equal(ids[1], ids[4])
    assert.are_not.equal(ids[1], ids[5])
    assert.equal(ids[6], ids[7])
    assert.equal(ids[6], ids[8])
    assert.equal("/usr/lib/x.py(3): k ", text[6])
    assert.equal(ids[9], ids[10])
    assert.equal("\u{1F600} pair \u{1F600}", text[9])
    assert.equal(ids[19], ids[20])
    assert.equal(ids[21], ids[22])
    assert.equal("\\u0041 is not an escape", text[18])
    assert.equal("\\", text[12])
    assert.equal("\\\\", text[13])
    assert.equal('"', text[14])
    assert.equal('ends with a quote"', text[15])
    assert.equal("ends with a backslash\\", text[17])
    local distinct = {}
    for _, id in ipairs(ids) do distinct[id] = true end
    assert.equal(#SPELLINGS - 7, h.count(distinct))
  end)

  it("gives a spelling met again and again the text and id of its first meeting", function()
    -- from the second meeting a spelling's raw text is kept and compared as it is: every
    -- spelling above, three times over, with the other spellings of its text in between
    local rows = {}
    for round = 1, 3 do
      for i = 1, #SPELLINGS do rows[(round - 1) * #SPELLINGS + i] = SPELLINGS[i] end
    end
    local p = dir .. "/again.json"
    h.write(p, trace(rows))
    local once_p = dir .. "/once.json"
    h.write(once_p, trace(SPELLINGS))
    local once_text, once_ids = scan(once_p)
    for _, threads in ipairs({ 1, 3 }) do
      local text, ids = scan(p, { threads = threads, min_range = 1 })
      for round = 0, 2 do
        for i = 1, #SPELLINGS do
          assert.equal(once_text[i], text[round * #SPELLINGS + i], "round " .. round .. " row " .. i)
          assert.equal(once_ids[i], ids[round * #SPELLINGS + i], "round " .. round .. " row " .. i)
        end
      end
    end
  end)

  it("stays right past the bound on kept raw text (8 MiB a reader)", function()
    -- 400 distinct 24 KB stacks, each met three times: 9.4 MB would be kept, so the last ones
    -- met again are confirmed against the decoded text as on their first meeting
    local frame = "\\/src\\/deep_module.py(%d): a_rather_long_function_name;\\r\\n"
    local rows, want = {}, {}
    for _ = 1, 3 do
      for i = 1, 400 do rows[#rows + 1] = frame:format(i):rep(400) .. i end
    end
    for i, r in ipairs(rows) do want[i] = r:gsub("\\/", "/"):gsub("\\r\\n", "\r\n") end
    assert.is_true(#rows[1] * 400 > 8 * 2 ^ 20)
    local p = dir .. "/bound.json"
    h.write(p, trace(rows))
    local text, ids = scan(p, { threads = 1 })
    assert.same(want, text)
    for i = 1, 400 do
      assert.equal(ids[i], ids[400 + i])
      assert.equal(ids[i], ids[800 + i])
      if i > 1 then assert.are_not.equal(ids[i - 1], ids[i]) end
    end
  end)

  it("gives the same texts and ids on one thread and on several, with many distinct stacks", function()
    -- some 1.2 MB of distinct escaped stacks: every range's string table spans several chunks,
    -- and is emptied chunk by chunk into the caller's while its ids are mapped
    local rows = {}
    for i = 1, 3000 do
      local frames = {}
      for k = 1, 6 do frames[k] = ("\\/src\\/m%d.py(%d): fn_%07d"):format(k, k, i) end
      rows[#rows + 1] = table.concat(frames, ";\\r\\n") .. (i % 7 == 0 and "\\u00e9" or "")
      if i % 5 == 0 then rows[#rows + 1] = rows[(i * 31) % #rows + 1] end -- an earlier one again
    end
    local p = dir .. "/many.json"
    h.write(p, trace(rows))
    local one_text, one_ids = scan(p, { threads = 1 })
    for i = 1, #rows do
      local want = rows[i]:gsub("\\/", "/"):gsub("\\r\\n", "\r\n"):gsub("\\u00e9", "\u{e9}")
      assert.equal(want, one_text[i])
    end
    assert.equal(3000 + 600, #one_ids)
    for _, threads in ipairs({ 2, 3, 4 }) do
      local text, ids, ranges = scan(p, { threads = threads, min_range = 1 })
      assert.equal(threads, ranges)
      assert.same(one_text, text)
      assert.same(one_ids, ids)
    end
  end)
end)
