--- Ascend exception dumps of the MoE dispatch/combine kernels, in the three forms found in the
-- field, reduced to the same thing: the window region (a bin view of its last 1 MiB), the
-- operator's int32 inputs, and the name of the operator that raised the exception.
--   raw dump     8-byte little-endian header length, a protobuf DumpData header, then the
--                input, output, buffer and workspace bytes in that order (the file size must add
--                up); the window is in workspace space[1]
--   msaicerr     files split by CANN's msaicerr: *.workspace.<i>.*.npy, *.input.<i>.*.bin|npy
--   mc2 window   mc2_exception_info_<op>.<stream>.<task>.<ts>: the window itself
local core = require "ascope_core"
local discover = require "ascope.ascend.discover"
local bin, fs = core.bin, core.fs
local i18n = require "ascope.i18n"

local M = {}

--- Text from a damaged file (an operator name, a message quoting a dtype) with the bytes that
-- are not UTF-8 shown as \xNN: it goes into JSON, CSV and HTML that must stay valid.
--   dump.readable("op\xC8") --> "op\\xC8"
function M.readable(msg)
  local out, i = {}, 1
  while i <= #msg do
    local n, bad = utf8.len(msg, i)
    if n then
      out[#out + 1] = msg:sub(i)
      break
    end
    out[#out + 1] = msg:sub(i, bad - 1) .. ("\\x%02X"):format(msg:byte(bad))
    i = bad + 1
  end
  return table.concat(out)
end

local SHAPE = { [1] = { "dim", "int", repeated = true } }
--- DumpData (field numbers of Ascend's dump_data.proto)
M.SCHEMA = {
  [1] = { "version", "string" },
  [2] = { "dump_time", "int" },
  [3] = { "output", "message", { [1] = { "data_type", "int" }, [2] = { "format", "int" }, [3] = { "shape", "message", SHAPE },
                                 [5] = { "data", "bytes" }, [6] = { "size", "int" } }, repeated = true },
  [4] = { "input", "message", { [1] = { "data_type", "int" }, [2] = { "format", "int" }, [3] = { "shape", "message", SHAPE },
                                [4] = { "data", "bytes" }, [5] = { "size", "int" } }, repeated = true },
  [5] = { "buffer", "message", { [1] = { "buffer_type", "int" }, [2] = { "data", "bytes" }, [3] = { "size", "int" } },
          repeated = true },
  [6] = { "op_name", "string" },
  [8] = { "space", "message", { [1] = { "type", "int" }, [2] = { "data", "bytes" }, [3] = { "size", "int" } },
          repeated = true },
}

--- A raw dump: {view, header, inputs = {[i] = {offset, size, shape}}, spaces = {[i] = {offset, size}}}
-- (0-based indexes) or nil, message naming the file and what does not add up.
function M.read_raw(path)
  local v, err = bin.open(path)
  if not v then return nil, err end
  local size = v:size()
  if size < 8 then return nil, i18n.t("dump.too_short", path, size) end
  local hl = v:read("u64", 0)
  if hl < 0 or 8 + hl > size then
    return nil, i18n.t("dump.header_past_end", path, hl, size)
  end
  local ok, header = pcall(v.protobuf, v, M.SCHEMA, 8, hl)
  if not ok then return nil, tostring(header) end
  local at = 8 + hl
  local parts = { inputs = {}, outputs = {}, buffers = {}, spaces = {} }
  local bad
  local function place(list, into, what)
    for i, item in ipairs(list or {}) do
      local n = item.size or 0
      -- a negative size would place later parts on top of earlier ones while the total still adds
      -- up; one larger than the file could wrap the sum (a cut file is the total check's)
      if not bad and (math.type(n) ~= "integer" or n < 0 or n > size) then
        bad = i18n.t("dump.impossible_size", path, what, i - 1, tostring(n), size)
      end
      if bad then return end
      into[i - 1] = { offset = at, size = n, shape = item.shape and item.shape.dim or {}, data_type = item.data_type }
      at = at + n
    end
  end
  place(header.input, parts.inputs, "input")
  place(header.output, parts.outputs, "output")
  place(header.buffer, parts.buffers, "buffer")
  place(header.space, parts.spaces, "workspace")
  if bad then return nil, bad end
  if at ~= size then
    return nil, i18n.t("dump.not_add_up", path, at, hl, size, at > size and i18n.t("dump.truncated") or "")
  end
  parts.view, parts.header, parts.path = v, header, path
  return parts
end

--- The files of one card folder, by kind. walked: its files as fs.walk gives them, when the
-- caller has them already (else the folder is walked here). A folder that holds dumps of several
-- times (an earlier exception left beside the new one) gives the newest dump's files, and
-- `older` the others: a window of one dump read with the inputs of another would be neither.
function M.card_files(dir, walked)
  local files = { workspace = {}, input = {}, raw = {}, window = {}, kernels = {}, older = {} }
  local found, newest = (discover.files("moe_dump", dir, nil, walked)) or {}, nil
  for _, f in ipairs(found) do
    local t = f.of.part ~= "kernels" and M.time_of_names({ f.path })
    if t and (not newest or t > newest) then newest = t end
  end
  local ops = {} -- the operators the newest dump's files name: the kernel objects to keep
  local kept = {}
  for _, f in ipairs(found) do
    local t = f.of.part ~= "kernels" and M.time_of_names({ f.path })
    if t and t ~= newest then
      files.older[#files.older + 1] = f.path
    else
      kept[#kept + 1] = f
      local op = f.of.part ~= "kernels" and discover.basename(f.path):match("(MoeDistribute%a+V?%d?)")
      if op then ops[op] = true end
    end
  end
  for _, f in ipairs(kept) do
    local op = f.of.part == "kernels" and discover.basename(f.path):match("^(MoeDistribute%a+V?%d?)_")
    if op and next(ops) and not ops[op] and #files.older > 0 then
      files.older[#files.older + 1] = f.path -- the kernel object of an older dump's operator
    else
      local part = files[f.of.part]
      if f.of.index then
        part[f.of.index] = f.path
      else
        part[#part + 1] = f.path
      end
    end
  end
  table.sort(files.older)
  return files
end

--- int32 values of an input: a column and its shape ({} when unknown).
local function int32_input(v, offset, size, shape)
  local n = size // 4
  return v:array("i32", offset, n), shape
end

local function npy_input(path)
  local v, err = bin.open(path)
  if not v then return nil, err end
  if path:match("%.bin$") then return v:array("i32", 0, v:size() // 4), {} end
  local a, nerr = v:npy()
  if not a then return nil, nerr end
  return a.data, a.shape
end

--- The last window_bytes of a region of a view.
local function tail(view, offset, size, want)
  if size < want then return nil, i18n.t("dump.window_short", size, want) end
  return view:sub(offset + size - want, want)
end

--- The dump time stamp a file name carries: the last number of a raw or mc2 dump name
-- (<op>.<task>.<stream>.<time>), the number before .input./.workspace. of a msaicerr file.
function M.time_of_names(paths)
  for _, p in ipairs(paths) do
    local name = discover.basename(p)
    local t = name:match("%.(%d+)%.input%.%d+%.") or name:match("%.(%d+)%.workspace%.%d+%.") or name:match("%.(%d+)$")
    if t and #t >= 9 and #t <= 18 then return math.tointeger(tonumber(t)) end
  end
end

--- Everything one card folder gives: {window (view), window_source (its file), inputs = {[i] = {values, shape}}, op, op_source,
-- op_from ("header", "host_o" or "file_name"), time (dump time stamp, nil when unknown), sources}
-- or nil, message. soc: the socs entry of rules/win_layout.lua; want: the window size.
function M.read_card(dir, soc, want, walked)
  local files = M.card_files(dir, walked)
  local out = { inputs = {}, sources = {}, older = files.older }
  -- the operator: the dump header, else the kernel object, else the file names
  for _, k in ipairs(files.kernels) do
    local op = discover.basename(k):match("^(MoeDistribute%a+V?%d?)_")
    if op then out.op, out.op_source, out.op_from = op, k, "host_o" end
  end
  local raw
  local raw_path = files.raw[1] -- one raw dump per card folder
  if raw_path then
    local r, err = M.read_raw(raw_path)
    if not r then return nil, err end
    raw = r
    out.sources[#out.sources + 1] = raw_path
    if r.header.op_name and r.header.op_name ~= "" then
      out.op, out.op_source, out.op_from = M.readable(r.header.op_name), raw_path, "header"
    end
    if (r.header.dump_time or 0) > 0 then out.time = r.header.dump_time end
    for i, inp in pairs(r.inputs) do
      out.inputs[i] = { int32_input(r.view, inp.offset, inp.size, inp.shape) }
    end
  end
  for i, p in pairs(files.input) do
    if not out.inputs[i] then
      local values, shape = npy_input(p)
      if not values then return nil, shape end
      out.inputs[i] = { values, shape }
      out.sources[#out.sources + 1] = p
    end
  end
  if soc.window == "workspace" then
    local wi = soc.workspace_index or 1
    if raw and raw.spaces[wi] then
      local s = raw.spaces[wi]
      local w, err = tail(raw.view, s.offset, s.size, want)
      if not w then return nil, i18n.t("dump.workspace", raw.path, wi, err) end
      out.window, out.window_source = w, raw.path
    elseif files.workspace[wi] then
      local p = files.workspace[wi]
      local v, err = bin.open(p)
      if not v then return nil, err end
      local a, nerr = v:npy()
      if not a then return nil, nerr end
      local bytes = a.count * a.itemsize
      if bytes < 0 or bytes > v:size() - a.offset then
        return nil, i18n.t("dump.npy_size", p, a.count, a.itemsize, v:size() - a.offset)
      end
      local w, terr = tail(v, a.offset, bytes, want)
      if not w then return nil, p .. ": " .. terr end
      out.window, out.window_source = w, p
      out.sources[#out.sources + 1] = p
    end
  else
    local p = files.window[1]
    if p then
      local v, err = bin.open(p)
      if not v then return nil, err end
      local w, terr = tail(v, 0, v:size(), want)
      if not w then return nil, p .. ": " .. terr end
      out.window, out.window_source = w, p
      out.sources[#out.sources + 1] = p
      if not out.op then
        out.op, out.op_source, out.op_from = discover.basename(p):match("^mc2_exception_info_?([%w]*)"), p, "file_name"
      end
      if out.op == "" then out.op, out.op_from = nil, nil end
    end
  end
  out.time = out.time or M.time_of_names(out.sources)
  if not out.window then
    return nil, i18n.t("dump.no_window", dir, soc.window == "workspace" and i18n.t("dump.want_workspace") or "mc2_exception_info_*")
  end
  return out
end

--- Card folders TARGET_DIR/<n>/ in numeric order: {card, dir}; nil, message when the folder
-- cannot be listed.
function M.card_dirs(target)
  target = target:gsub("(.)/+$", "%1")
  local names, err = fs.list(target)
  if not names then return nil, err end
  local out = {}
  for _, n in ipairs(names) do
    if n:match("^%d+$") then
      local st = fs.stat(target .. "/" .. n)
      if st and st.type == "dir" then out[#out + 1] = { card = math.tointeger(tonumber(n)), dir = target .. "/" .. n } end
    end
  end
  table.sort(out, function(a, b) return a.card < b.card end)
  return out
end

return M
