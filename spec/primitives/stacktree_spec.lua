-- stacktree: call stacks as a tree of frames for memory_trace.json's "stackFrames".
local core = require "ascope_core"
local json = core.json

-- the tree built in plain Lua (frames split at ";\r\n", ";\n" and NUL, trimmed, empty ones
-- dropped, the last frame the root): the model the C tree must match byte for byte
local function model()
  local ids, n, lines = {}, 0, {}
  return function(stack)
    local frames = {}
    for f in (stack:gsub(";\r\n", "\0"):gsub(";\n", "\0") .. "\0"):gmatch("([^%z]*)%z") do
      f = f:gsub("^%s+", ""):gsub("%s+$", "")
      if f ~= "" then frames[#frames + 1] = f end
    end
    local parent
    for k = #frames, 1, -1 do
      local key = (parent or 0) .. "\0" .. frames[k]
      if not ids[key] then
        n = n + 1
        ids[key] = n
        lines[#lines + 1] = ('"%d":{"name":%s%s}'):format(n, json.encode(frames[k]),
          parent and (',"parent":"' .. parent .. '"') or "")
      end
      parent = ids[key]
    end
    return parent
  end, function() return table.concat(lines, ",\n") end
end

describe("stacktree", function()
  it("names each (parent, frame) once, innermost frame last", function()
    local t = core.stacktree.new()
    assert.equal(2, t:add("a.py(1): f;\r\nmain.py(9): <module>"))
    assert.equal(3, t:add("b.py(2): g;\nmain.py(9): <module>"))
    assert.equal(2, t:add("  a.py(1): f ;\r\n main.py(9): <module>\t"))
    assert.equal(5, t:add("main.py(9): <module>;\r\na.py(1): f"))
    assert.equal('"1":{"name":"main.py(9): <module>"},\n"2":{"name":"a.py(1): f","parent":"1"},\n'
      .. '"3":{"name":"b.py(2): g","parent":"1"},\n"4":{"name":"a.py(1): f"},\n'
      .. '"5":{"name":"main.py(9): <module>","parent":"4"}', t:json())
  end)

  it("gives nil for a stack without frames and writes nothing for it", function()
    local t = core.stacktree.new()
    assert.is_nil(t:add(""))
    assert.is_nil(t:add(" ;\r\n\t;\n"))
    assert.equal("", t:json())
  end)

  it("matches the plain-Lua model on awkward stacks", function()
    local t = core.stacktree.new()
    local add, text = model()
    local stacks = { "x;\r\ny", "x;\ny", "x\0y", ";;\r\n;", "a;\r;\nb", "\"q\"\\;\r\n\1ctl", "中文(1): 函数;\r\n根",
                     "cut \228\184;\r\nroot", "cut \228\185;\r\nroot", "cut \228\184;\r\nroot", "bad \255;\r\nroot",
                     "x;\r\n", ";\r\nx", "  ", "deep" .. (";\r\nf"):rep(300) }
    for i = 1, 200 do stacks[#stacks + 1] = ("m%d.py(%d): fn;\r\nshared.py(1): run;\r\nmain"):format(i % 37, i) end
    for _, s in ipairs(stacks) do assert.equal(add(s), t:add(s), s) end
    assert.equal(text(), t:json())
  end)

  it("matches the model through many growths of its table, stacks met again keeping their ids", function()
    -- 6,079 frames (1 + 11 + 1,067 + 5,000): the tree's slots grow and are refilled four times
    local t = core.stacktree.new()
    local add, text = model()
    local function stack(i)
      return ("leaf_%d.py(%d): f;\r\nmid_%d.py(2): g;\r\nmod_%d.py(3): h;\r\nmain"):format(i, i, i % 97, i % 11)
    end
    local leaf = {}
    for i = 1, 5000 do
      leaf[i] = add(stack(i))
      assert.equal(leaf[i], t:add(stack(i)), stack(i))
    end
    for i = 5000, 1, -7 do assert.equal(leaf[i], t:add(stack(i)), stack(i)) end
    assert.equal(text(), t:json())
  end)

  it("branches anywhere along the frames one stack made, and past its innermost one", function()
    -- the first stack makes root, d, c, b, a at once (ids 1-5); the others leave it at c, go
    -- on from its innermost frame, stop inside it, or come back to a branch made after it
    local t = core.stacktree.new()
    local add, text = model()
    local stacks = { "a;\r\nb;\r\nc;\r\nd;\r\nroot", "x;\r\nc;\r\nd;\r\nroot", "y;\r\nx;\r\nc;\r\nd;\r\nroot",
                     "c;\r\nd;\r\nroot", "b;\r\nc;\r\nd;\r\nroot", "z;\r\na;\r\nb;\r\nc;\r\nd;\r\nroot", "root",
                     "b;\r\nx;\r\nc;\r\nd;\r\nroot", "a;\r\nb;\r\nc;\r\nd;\r\nroot2", "a;\r\nb;\r\nc;\r\nd;\r\nroot",
                     "x;\r\nx;\r\nc;\r\nd;\r\nroot", "d;\r\nroot", "x;\r\nd;\r\nroot" }
    local want = { 5, 6, 7, 3, 4, 8, 1, 9, 14, 5, 15, 2, 16 }
    for i, s in ipairs(stacks) do
      assert.equal(want[i], add(s), s)
      assert.equal(want[i], t:add(s), s)
    end
    assert.equal(text(), t:json())
  end)

  -- stacks down a random tree of frames: each stack a path from a root, some of them the
  -- prefix of another, branching at any depth
  local function random_stacks(n, seed)
    local rnd, out = seed, {}
    local function next_int(m)
      rnd = (rnd * 1103515245 + 12345) % 2147483648
      return rnd % m
    end
    for _ = 1, n do
      local frames, depth = {}, next_int(12) + 1
      for d = 1, depth do frames[depth - d + 1] = ("f%d_%d.py(%d): g"):format(d, next_int(d < 4 and 2 or 3), d) end
      out[#out + 1] = table.concat(frames, ";\r\n")
    end
    return out
  end

  it("matches the model on random branching stacks, in a column and one by one", function()
    local stacks = random_stacks(3000, 7)
    local add, text = model()
    local want = {}
    for i, s in ipairs(stacks) do want[i] = add(s) end
    local t = core.stacktree.new()
    local ids = t:ids(core.column.new("string", stacks))
    for i = 1, #stacks do assert.equal(want[i], ids[i], stacks[i]) end
    assert.equal(text(), t:json())
    local plain = core.stacktree.new()
    for i, s in ipairs(stacks) do assert.equal(want[i], plain:add(s), s) end
    assert.equal(text(), plain:json())
  end)

  it("matches the model on random branching stacks read back from the table's file", function()
    local H = require "spec.helper"
    local dir = H.tmpdir()
    local script = dir .. "/tree.lua"
    -- each stack interned beside a string of 40 KB, so the stacks a lookup meets are read back
    -- into windows apart
    H.write(script, [[
      local core = require "ascope_core"
      local stacks, pad = core.column.new("string"), core.column.new("string")
      for line in io.lines(arg[1]) do
        stacks:push((line:gsub("|", "\r\n")))
        pad:push(("%d"):format(#stacks):rep(10000))
      end
      local t = core.stacktree.new()
      local ids = t:ids(stacks)
      local leaves = {}
      for i = 1, #stacks do leaves[i] = tostring(ids[i]) end
      io.write(table.concat(leaves, " "), "\n", t:json())
    ]])
    local stacks = random_stacks(400, 11)
    local lines = {}
    for i, s in ipairs(stacks) do lines[i] = s:gsub("\r\n", "|") end
    H.write(dir .. "/stacks.txt", table.concat(lines, "\n") .. "\n")
    local code, out, err = H.run({ ASCOPE_STRING_MEMORY = "0" }, "run", script, dir .. "/stacks.txt")
    H.cleanup(dir)
    assert.are.equal(0, code, err)
    local add, text = model()
    local want = {}
    for i, s in ipairs(stacks) do want[i] = tostring(add(s)) end
    local leaves, json_text = out:match("^(.-)\n(.*)$")
    assert.equal(table.concat(want, " "), leaves)
    assert.equal(text(), json_text)
  end)

  it("gives the ids of a string column's rows, each distinct stack added once", function()
    local col = core.column.new("string", { "b;\r\nroot", "", "a;\r\nroot", "b;\r\nroot", " ;\n", "a;\r\nroot" })
    col = core.column.concat({ col, core.column.fill("string", nil, 1) })
    local t = core.stacktree.new()
    local ids = t:ids(col)
    assert.same({ 2, nil, 3, 2, nil, 3, nil }, { ids[1], ids[2], ids[3], ids[4], ids[5], ids[6], ids[7] })
    assert.equal(7, #ids)
    assert.equal('"1":{"name":"root"},\n"2":{"name":"b","parent":"1"},\n"3":{"name":"a","parent":"1"}', t:json())
    assert.has_error(function() t:ids(core.column.new("integer", { 1 })) end)
  end)

  it("reads the frames of a column from its string table, also after the table has grown", function()
    local col = core.column.new("string", { "b;\r\nroot", "a;\r\nroot" })
    local t = core.stacktree.new()
    local ids = t:ids(col)
    -- a few MB more strings move the table's text elsewhere; the tree only kept where its frames are
    local more = core.column.new("string")
    for i = 1, 3000 do more:push(("%d"):format(i):rep(400)) end
    assert.same({ 2, 3 }, { ids[1], ids[2] })
    assert.equal('"1":{"name":"root"},\n"2":{"name":"b","parent":"1"},\n"3":{"name":"a","parent":"1"}', t:json())
    assert.equal(3000, #more)
  end)

  it("is written by a json writer as its json() text, names cut as labels when asked", function()
    local t = core.stacktree.new()
    local long = ("中"):rep(400) .. "\"q\"" -- 1203 bytes
    t:ids(core.column.new("string", { long .. ";\r\nroot", "x\1y;\r\nroot" }))
    local path = os.tmpname()
    local function written(max)
      local w = assert(json.writer(path))
      w:frames(t, max)
      assert(w:close())
      local f = assert(io.open(path, "rb"))
      local text = f:read("a")
      f:close()
      return text
    end
    assert.equal(t:json(), written())
    local cut = ("中"):rep(333) .. "…"
    assert.equal('"1":{"name":"root"},\n"2":{"name":"' .. cut .. '","parent":"1"},\n'
      .. '"3":{"name":"x\\u0001y","parent":"1"}', written(1000))
    assert.equal(t:json(1000), written(1000))
    assert.equal(json.encode(long), ('"%s"'):format(t:json():match('"2":{"name":"(.-)","parent"')))
    os.remove(path)
    assert.has_error(function() t:json(-1) end)
  end)

  it("gives the top frame of each row as the plain-Lua reader does", function()
    local top_frame = require("ascope.ascend.trace").top_frame
    local stacks = { "a.py(1): f;\r\nmain", "  b.py(2): g \t;\nmain", "x;\ny;\r\nz", "only one frame", "", "  ",
                     " ;\r\nroot", "a;\rb", "semi; colon;\r\nroot", "nul\0in;\r\nroot", ";", ";\r", "\r\n;\n",
                     "中文(1): 函数;\r\n根", ("x"):rep(5000) }
    local col = core.column.new("string", stacks)
    col = core.column.concat({ col, core.column.fill("string", nil, 2), col })
    local top = core.stacktree.top(col)
    assert.equal(#col, #top)
    for i = 1, #col do assert.equal(col[i] and top_frame(col[i]), top[i], ("row %d"):format(i)) end
    assert.equal("x;\ny", top[3]) -- ";\r\n" first wherever it is, as the reader's find does
    assert.equal("", top[6])
    -- a stack that is its own top frame keeps its string: nothing copied
    assert.equal(col:id(4), top:id(4))
    -- with blank = false a blank top frame is no value, as no stack is
    local named = core.stacktree.top(col, false)
    for i = 1, #col do
      assert.equal(top[i] ~= "" and top[i] or nil, named[i], ("row %d"):format(i))
    end
    assert.is_nil(named[5])
    assert.is_nil(named[7])
    assert.has_error(function() core.stacktree.top(core.column.new("integer", { 1 })) end)
  end)

  describe("join", function()
    local col = core.column
    -- the plain-Lua join: one stack per run of equal non-null keys, frames in row order
    local function joined(keys, frames)
      local out, out_keys, missing, last = {}, {}, 0, nil
      for i = 1, #keys do
        local k = keys[i]
        if k ~= nil then
          local f = frames[i]
          if f == nil then missing = missing + 1 end
          if k == last then
            out[#out] = out[#out] .. ";\r\n" .. (f or "")
          else
            out[#out + 1], out_keys[#out_keys + 1] = f or "", k
          end
          last = k
        end
      end
      return out, out_keys, missing
    end

    it("joins each run of a chain's frames with ;\\r\\n, innermost first, as the plain-Lua join", function()
      local keys = { 3, 3, 3, 7, nil, 7, 9, 12, 12 }
      local frames = { "a.py(1): f", "b.py(2): g", "main", "x", "skipped", nil, "", "中文(1): 函数", "根" }
      local k = col.new("integer", { 3, 3, 3, 7 })
      k = col.concat({ k, col.fill("integer", nil, 1), col.new("integer", { 7, 9, 12, 12 }) })
      local f = col.concat({ col.new("string", { "a.py(1): f", "b.py(2): g", "main", "x", "skipped" }),
                             col.fill("string", nil, 1), col.new("string", { "", "中文(1): 函数", "根" }) })
      local stacks, ids, missing = core.stacktree.join(k, f)
      local want, want_keys, want_missing = joined(keys, frames)
      assert.same({ "a.py(1): f;\r\nb.py(2): g;\r\nmain", "x;\r\n", "", "中文(1): 函数;\r\n根" }, want)
      assert.same(want, stacks:totable())
      assert.same(want_keys, ids:totable())
      assert.equal(want_missing, missing)
      assert.equal(1, missing) -- the null frame of chain 7; the null key's row is in no stack
      -- the stacks are in the shared table: a stack met in a column elsewhere has the same id
      assert.equal(col.new("string", { "a.py(1): f;\r\nb.py(2): g;\r\nmain" }):id(1), stacks:id(1))
    end)

    it("matches the plain-Lua join on many generated chains", function()
      local keys, frames = {}, {}
      for c = 1, 500 do
        for d = 1, c % 23 + 1 do
          keys[#keys + 1] = c * 3
          frames[#frames + 1] = ("m%d.py(%d): fn_%d"):format(c % 41, d, (c * d) % 97)
        end
      end
      local want, want_keys = joined(keys, frames)
      local stacks, ids, missing = core.stacktree.join(col.new("integer", keys), col.new("string", frames))
      assert.same(want, stacks:totable())
      assert.same(want_keys, ids:totable())
      assert.equal(0, missing)
    end)

    it("stops at a byte budget (each frame and its separator counted), and at rows out of order", function()
      local k = col.new("integer", { 1, 1, 2 })
      local f = col.new("string", { "abcd", "ef", "ghi" })
      -- (4 + 3) + (2 + 3) + (3 + 3) = 18 bytes
      assert.equal("a;\r\nb", core.stacktree.join(col.new("integer", { 1, 1 }), col.new("string", { "a", "b" }), 8)[1])
      assert.equal(2, #core.stacktree.join(k, f, 18))
      assert.same({ nil, "too big", 12 }, { core.stacktree.join(k, f, 17) })
      local function order(keys, depths)
        local n = #keys
        local r = { core.stacktree.join(col.new("integer", keys), col.fill("string", "x", n), nil,
          col.new("integer", depths)) }
        return r[1] and "ok" or r[2]
      end
      assert.equal("ok", order({ 1, 1, 1, 4, 4 }, { 0, 1, 2, 0, 5 }))
      assert.equal("order", order({ 1, 1, 4, 1 }, { 0, 1, 0, 2 })) -- chain 1's rows apart
      assert.equal("order", order({ 4, 1 }, { 0, 0 }))             -- chains not in key order
      assert.equal("order", order({ 1, 1 }, { 1, 0 }))             -- depths falling
      assert.equal("order", order({ 1, 1 }, { 0, 0 }))             -- a depth twice
      local d = col.concat({ col.new("integer", { 0 }), col.fill("integer", nil, 1) })
      local none, why = core.stacktree.join(col.new("integer", { 1, 1 }), col.fill("string", "x", 2), nil, d)
      assert.same({ nil, "order" }, { none, why }) -- a depth missing: where a sort would put it is not known here
      assert.has_error(function() core.stacktree.join(col.new("string", { "a" }), col.new("string", { "a" })) end)
      assert.has_error(function() core.stacktree.join(col.new("integer", { 1 }), col.new("string", { "a", "b" })) end)
      assert.has_error(function() core.stacktree.join(k, f, -1) end)
      assert.has_error(function() core.stacktree.join(k, f, nil, col.new("integer", { 0 })) end)
    end)
  end)

  it("refuses a value that is not a string", function()
    assert.has_error(function() core.stacktree.new():add({}) end)
  end)
end)
