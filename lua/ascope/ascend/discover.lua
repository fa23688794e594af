--- Finding profiling data: which folders hold one rank's output, which rank and role they are,
-- and in which order several collections of one rank come.
--
-- A rank folder is a `*_ascend_pt` folder (or any folder holding ASCEND_PROFILER_OUTPUT/).
-- rank: the N of profiler_info_N.json, else its "rank_id" (string or int), else a number in
--       the folder name ("rank_3", "rank3"); role: profiler_metadata.json "role", else the
--       name of the folder above the rank folder.
local core = require "ascope_core"
local fs, json = core.fs, core.json
local i18n = require "ascope.i18n"
local model = require "ascope.analysis.timeline.model"

local M = {}

local function basename(p) return (p:gsub("/+$", ""):match("([^/]+)$")) or p end
local function dirname(p)
  local d = p:gsub("/+$", ""):match("^(.*)/[^/]+$")
  if d == nil then return "." end
  if d == "" then return "/" end
  return d
end
M.basename, M.dirname = basename, dirname

local function is_dir(p)
  local st = fs.stat(p)
  return st and st.type == "dir"
end

local function is_file(p)
  local st = fs.stat(p)
  return st and st.type == "file"
end
M.is_file, M.is_dir = is_file, is_dir

--- Collection time from the folder name, as a sortable string (17 digits, ms precision):
-- 20260526_085155_ascend_pt -> "20260526085155000"; host_123_20250101120000123_ascend_pt ->
-- "20250101120000123". nil when the name carries no time.
function M.time_key(name)
  local d, t = name:match("(%d%d%d%d%d%d%d%d)_(%d%d%d%d%d%d)_ascend_pt$")
  if d then return d .. t .. "000" end
  local long = name:match("_(%d+)_ascend_pt$")
  if long and #long >= 14 then return (long .. "000"):sub(1, 17) end
  return nil
end

-- Each folder of a rank is listed once per run. A rank description carries `listing`: folder
-- path -> its sorted names (false: it could not be listed), filled from the walk that found the
-- rank folder, else by fs.list the first time a folder is asked for; what finds the rank's
-- files (M.find, the input checks, the readers) asks through it. Without a listing, every
-- question lists the folder anew.
local function names_in(listing, base)
  if not listing then return fs.list(base) or {} end
  local l = listing[base]
  if l == nil then
    l = fs.list(base) or false
    listing[base] = l
  end
  return l or {}
end

-- the files below dir, walked once per listing (the key holds a NUL, which no path does)
local function files_below(listing, dir)
  if not listing then return (fs.walk(dir)) end
  local key = dir .. "\0walk"
  listing[key] = listing[key] or fs.walk(dir)
  return listing[key]
end

local function rank_of(dir, listing)
  local names = names_in(listing, dir)
  for _, n in ipairs(names) do
    local r = n:match("^profiler_info_(%d+)%.json$")
    if r then return math.tointeger(tonumber(r)), "profiler_info" end
  end
  local unread -- a profiler_info file that could not be read: why, should nothing else tell
  for _, n in ipairs(names) do
    if n:match("^profiler_info.*%.json$") then
      local doc, err = json.load(dir .. "/" .. n)
      unread = unread or (doc == nil and err or nil)
      local r = type(doc) == "table" and doc.rank_id
      r = math.tointeger(tonumber(r))
      if r then return r, "rank_id" end
    end
  end
  local r = basename(dir):match("[Rr]ank_?(%d+)")
  if r then return math.tointeger(tonumber(r)), "folder name" end
  return nil, nil, unread
end

local function role_of(dir)
  local meta = dir .. "/profiler_metadata.json"
  if is_file(meta) then
    local doc = json.load(meta)
    if type(doc) == "table" and type(doc.role) == "string" and doc.role ~= "" then return doc.role end
  end
  return basename(dirname(dir))
end

local function describe(dir, listing)
  local out = dir .. "/ASCEND_PROFILER_OUTPUT"
  listing = listing or {}
  local rank, how, unread = rank_of(dir, listing)
  return {
    dir = dir,
    listing = listing,
    output_dir = is_dir(out) and out or nil,
    name = basename(dir),
    rank = rank,
    rank_source = how,
    rank_unread = unread, -- with rank nil: the profiler_info file's error, which hid the rank
    role = role_of(dir),
    time_key = M.time_key(basename(dir)),
  }
end

--- What makes two rank folders the same collection: the real path of the folder (a symlink or
-- a second way in), and the profiler's own identity (rank, start counter and end time in
-- profiler_info_*.json; equal in a copy). listing: the rank description's. Returns real path,
-- identity text or nil.
function M.identity(dir, listing)
  local real = fs.realpath(dir) or dir
  for _, n in ipairs(names_in(listing, dir)) do
    if n:match("^profiler_info.*%.json$") then
      local doc = json.load(dir .. "/" .. n)
      local start = type(doc) == "table" and type(doc.start_info) == "table" and doc.start_info or {}
      local stop = type(doc) == "table" and type(doc.end_info) == "table" and doc.end_info or {}
      local cnt, t_end = start.start_cnt or start.start_monotonic, stop.collectionTimeEnd or stop.MonotonicTimeEnd
      if cnt and t_end then
        return real, i18n.t("discover.identity", n, tostring(doc.rank_id), tostring(cnt), tostring(t_end))
      end
    end
  end
  return real, nil
end

-- A dump file of one card folder: what part of the dump it is, and the index of a workspace or
-- an input; nil for the files a dump folder also holds (npy, csv, .o, json, txt, log files).
local function moe_dump_part(name)
  local wi = name:match("%.workspace%.(%d+)%..*%.npy$") or name:match("%.workspace%.(%d+)%.npy$")
  if wi then return { part = "workspace", index = tonumber(wi) } end
  local ii = name:match("%.input%.(%d+)%..*%.[bn][ip][ny]$") or name:match("%.input%.(%d+)%.[bn][ip][ny]$")
  if ii then return { part = "input", index = tonumber(ii) } end
  if name:match("^mc2_exception_info") then return { part = "window" } end
  if name:match("_host%.o$") then return { part = "kernels" } end
  for _, ext in ipairs({ "npy", "csv", "o", "json", "txt", "log" }) do
    if name:match("%." .. ext .. "$") then return nil end
  end
  return { part = "raw" }
end

--- The input files, by kind: where each is looked for and which reader reads it. The readers
-- and the input checks of rules/*.lua (check = "file_present", input = KIND) find files through
-- M.find (a rank folder's file) and M.files (every file of a kind under a path), so they cannot
-- disagree on where a file is; a new input format is a reader plus an entry here.
--   names   file names, Lua patterns (anchored), in order of preference
--   match   instead of names, for the kinds M.files walks: function(name, rules) -> what the
--           file is (true, or the entry of the rules it goes by), nil when it is not of the kind
--   places  folders of the rank folder tried, in order ("" is the rank folder itself)
--   deep    a name pattern looked for anywhere below the rank folder when nothing else matched
--   walk    found by M.files: every file of the kind under a path, in path order
--   as_is   with walk: a path that is a file is taken whatever its name
--   reader  the function that reads the file, as "module.function"
M.inputs = {
  -- a rank exported as a database only has its memory there (ascope.ascend.memory_db); the text
  -- files come first where both are
  operator_memory = { names = { "operator_memory%.csv", "ascend_pytorch_profiler.*%.db" },
                      reader = "ascope.ascend.memory_csv.read" },
  memory_record = { names = { "memory_record%.csv", "ascend_pytorch_profiler.*%.db" },
                    reader = "ascope.ascend.memory_record.read" },
  call_stacks = { names = { "trace_view%.json", "ascend_pytorch_profiler.*%.db" },
                  reader = "ascope.ascend.trace.call_stacks" },
  -- a JSON trace first: it carries the Overlap Analysis lanes the .db lacks
  timeline = { names = { "trace_view%.json", "ascend_pytorch_profiler.*%.db" }, deep = "msprof_.*%.json",
               reader = "ascope.ascend.timeline.read" },
  -- the field jobs' inputs, found anywhere under the path they are given
  -- (a database export's kernels: ascope.ascend.kernel_db, where the folder has no CSV of them)
  kernel_details = { names = { "kernel_details%.csv", "op_summary.*%.csv", "ascend_pytorch_profiler.*%.db" },
                     walk = true, reader = "ascope.ascend.kernel_csv.read" },
  -- plog and device logs: the names rules/plog.lua's files list (unanchored patterns)
  plog = { walk = true, as_is = true, reader = "ascope.ascend.plog.classifier",
           match = function(name, rules) return model.matches(name, rules.files) or nil end },
  -- compiled graphs: the kinds of rules/graph.lua's files list (the entry a name matches)
  graph = { walk = true, reader = "ascope.ascend.graph.nodes",
            match = function(name, rules)
              for _, f in ipairs(rules.files) do
                if name:match(f.name) then return f end
              end
            end },
  moe_summary = { names = { "moe_summary%.json" }, walk = true, reader = "ascope.ascend.moe_summary.summary_cards" },
  moe_dump = { walk = true, match = moe_dump_part, reader = "ascope.ascend.dump.read_card" },
}
local PLACES = { "ASCEND_PROFILER_OUTPUT", "" }

local function input_kind(kind)
  local k = M.inputs[kind]
  if not k then error(i18n.t("discover.no_kind", tostring(kind)), 3) end
  return k
end

-- the search behind M.find, through the listing (none: the folders are listed now)
local function find(kind, dir, listing)
  local k = input_kind(kind)
  local best, best_rank, odd = nil, nil, nil
  for pi, place in ipairs(k.places or PLACES) do
    local base = place == "" and dir or dir .. "/" .. place
    for _, name in ipairs(names_in(listing, base)) do
      for ni, pat in ipairs(k.names) do
        if name:match("^" .. pat .. "$") then
          local path = base .. "/" .. name
          local rank = { ni, pi, path }
          if not is_file(path) then
            odd = odd or path
          elseif not best_rank or rank[1] < best_rank[1] or (rank[1] == best_rank[1] and (rank[2] < best_rank[2]
              or (rank[2] == best_rank[2] and rank[3] < best_rank[3]))) then
            best, best_rank = path, rank
          end
          break
        end
      end
    end
  end
  if not best and k.deep then
    local below = files_below(listing, dir) or {}
    local all = table.move(below, 1, #below, 1, {})
    table.sort(all)
    for _, p in ipairs(all) do
      if basename(p):match("^" .. k.deep .. "$") and is_file(p) then return p end
    end
  end
  if best then return best end
  if odd then return nil, i18n.t("input.not_regular", odd), odd end
  return nil, M.looked_for(kind, dir)
end

--- The file of an input kind in a rank folder: its path, or nil and what was looked for (the
-- paths tried, or the one that is there but not a regular file, which is never read, and then
-- that path as a third value).
-- listing: the rank description's (see names_in), so that its folders are listed once.
function M.find(kind, dir, listing)
  if not listing then return find(kind, dir) end
  -- once per rank folder and kind: the plan, the input checks and the reader ask the same
  local key = dir .. "\0find\0" .. kind
  listing[key] = listing[key] or { find(kind, dir, listing) }
  return listing[key][1], listing[key][2], listing[key][3]
end

--- What a file name is as an input of kind (see M.inputs: true, or what its match says), or nil.
function M.of_kind(kind, name, rules)
  local k = input_kind(kind)
  if k.match then return k.match(name, rules) end
  for _, pat in ipairs(k.names) do
    if name:match("^" .. pat .. "$") then return true end
  end
  return nil
end

--- Every file of a walked input kind under path (a file is taken as it is when the kind is
-- as_is, else when its name is of the kind), in path order: {{path, of = what M.of_kind says}},
-- and the messages of the folders that could not be read and of the names of the kind that are
-- no regular file ({} when none); nil, message when path is not there. A FIFO, device or socket
-- (path itself, or a name of the kind under it) is named, never opened: reading one waits
-- forever. rules: the job's rules, for the kinds whose names they give. walked: the files
-- under path as fs.walk gave them, when the caller has walked it already (a folder is walked
-- once per run, not once per question asked about it).
function M.files(kind, path, rules, walked)
  local k = input_kind(kind)
  local st = fs.stat(path)
  if not st then return nil, i18n.t("input.no_such", path) end
  if st.type == "other" then return {}, { i18n.t("input.not_regular", path) } end
  local all, unreadable, others = { path }, nil, false
  if st.type ~= "file" then
    if walked then
      all = walked
    else
      -- the names that are neither file nor folder come too, to be named when of the kind
      all, unreadable = fs.walk(path, { others = true })
      others = true
    end
  end
  unreadable = unreadable or {}
  local out = {}
  for _, p in ipairs(all or {}) do
    local of = (st.type == "file" and k.as_is) or M.of_kind(kind, basename(p), rules)
    if of and others and not is_file(p) then
      unreadable[#unreadable + 1] = i18n.t("input.not_regular", p)
    elseif of then
      out[#out + 1] = { path = p, of = of }
    end
  end
  return out, unreadable
end

--- Where an input kind is looked for in a rank folder, as text for a message.
function M.looked_for(kind, dir)
  local k = input_kind(kind)
  local tried = {}
  for _, place in ipairs(k.places or PLACES) do
    for _, pat in ipairs(k.names) do
      local shown = pat:gsub("%%%.", "."):gsub("%.%*", "*")
      tried[#tried + 1] = (place == "" and dir or dir .. "/" .. place) .. "/" .. shown
    end
  end
  if k.deep then tried[#tried + 1] = dir .. "/**/" .. k.deep:gsub("%%%.", "."):gsub("%.%*", "*") end
  return table.concat(tried, i18n.t("input.or"))
end

--- The rank folder a file given on its own sits in (ASCEND_PROFILER_OUTPUT/<file> or
-- <x>_ascend_pt/<file>), described as rank_dirs describes one, or nil when it sits in none.
function M.rank_of_file(path)
  local dir = dirname(path)
  if basename(dir) == "ASCEND_PROFILER_OUTPUT" then return describe(dirname(dir)) end
  if basename(dir):match("_ascend_pt$") or is_dir(dir .. "/ASCEND_PROFILER_OUTPUT") then return describe(dir) end
  return nil
end

--- Rank folders under input (a tree, one *_ascend_pt folder, or an ASCEND_PROFILER_OUTPUT
-- folder), ordered by role, rank, then collection time. Returns the list or nil, message; the
-- list's field unreadable names the folders that could not be read (the caller reports them),
-- but for a rank's own folder and its ASCEND_PROFILER_OUTPUT: those are in the rank's own field
-- unreadable (the rank fails with them).
function M.rank_dirs(input)
  input = input:gsub("(.)/+$", "%1")
  local st, err = fs.stat(input)
  if not st then return nil, err end
  if st.type == "other" then return nil, i18n.t("input.not_regular_file", input) end -- a FIFO given as the input
  if st.type ~= "dir" then return nil, i18n.t("input.not_folder", input) end
  local found, unreadable = {}, nil
  if basename(input) == "ASCEND_PROFILER_OUTPUT" then
    found[1] = describe(dirname(input))
  elseif is_dir(input .. "/ASCEND_PROFILER_OUTPUT") or basename(input):match("_ascend_pt$") then
    found[1] = describe(input)
  else
    local seen = {}
    local all
    all, unreadable = fs.walk(input, { dirs = true, others = true })
    -- the names in each folder, from this walk (FIFOs and links to nothing too, as fs.list gives
    -- them): the rank folders found are not listed again. A folder the walk did not enter (a
    -- link to a folder) is listed when first asked about.
    local names = {}
    for _, p in ipairs(all) do
      local parent = dirname(p)
      names[parent] = names[parent] or {}
      table.insert(names[parent], basename(p))
    end
    local function listing_of(dir)
      local out = dir .. "/ASCEND_PROFILER_OUTPUT"
      return { [dir] = names[dir], [out] = names[out] }
    end
    for _, p in ipairs(all) do
      local dir
      if basename(p) == "ASCEND_PROFILER_OUTPUT" and is_dir(p) then
        dir = dirname(p)
      elseif p:match("_ascend_pt$") and is_dir(p) then
        dir = p
      end
      if dir and not seen[dir] then
        seen[dir] = true
        found[#found + 1] = describe(dir, listing_of(dir))
      end
    end
  end
  table.sort(found, function(a, b)
    if a.role ~= b.role then return a.role < b.role end
    local ra, rb = a.rank or math.maxinteger, b.rank or math.maxinteger
    if ra ~= rb then return ra < rb end
    local ta, tb = a.time_key or a.name, b.time_key or b.name
    if ta ~= tb then return ta < tb end
    return a.dir < b.dir
  end)
  -- a rank's own folder or its ASCEND_PROFILER_OUTPUT that could not be read is that rank's to
  -- fail with (its inputs are looked for there): not a failure of its own beside the rank, which
  -- would have its files missing. Any other folder that could not be read (a raw PROF_* one)
  -- stays a failure of its own, and the rank is read. A message is "<path>: <reason>"; the path
  -- may hold ": " itself, so each place it could end is looked up.
  local place = {}
  for _, d in ipairs(found) do
    place[d.dir], place[d.dir .. "/ASCEND_PROFILER_OUTPUT"] = d, d
  end
  local loose = {}
  for _, why in ipairs(unreadable or {}) do
    local owner
    for at in why:gmatch("(): ") do
      owner = owner or place[why:sub(1, at - 1)]
    end
    if owner then
      owner.unreadable = owner.unreadable or {}
      owner.unreadable[#owner.unreadable + 1] = why
    else
      loose[#loose + 1] = why
    end
  end
  found.unreadable = unreadable and loose
  return found
end

return M
