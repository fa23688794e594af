--- Writers of `ascope memory` results: memory_events.csv, memory_summary.json,
-- memory_report.md and memory_trace.json (Chrome trace for Perfetto / chrome://tracing).
local core = require "ascope_core"
local fmt = require "ascope.fmt"
local md = require "ascope.report.md"
local writer = require "ascope.report.writer"
local trace_fmt = require "ascope.ascend.trace"
local json = core.json

local M = {}

M.EVENT_COLUMNS = { "name", "role", "rank_id", "call_stack", "call_stack_top", "size_kb",
  "start_time_ms", "duration_ms", "total_allocated_mb", "total_reserved_mb", "total_active_mb",
  "device_type" }

--- memory_events.csv: one row per operator_memory.csv row of every rank, in time order.
-- Times are printed exactly (from integer ns), so no microsecond is lost. The rows are written
-- by the C writer straight from the columns.
function M.events_csv(result, path)
  local w, err = core.csv.writer(path)
  if not w then return nil, err end
  w:row(M.EVENT_COLUMNS)
  local ranks = result.ranks
  if #ranks > 0 then
    local function all(key)
      if #ranks == 1 then return ranks[1][key] end
      local cols = {}
      for i, r in ipairs(ranks) do cols[i] = r[key] end
      return core.column.concat(cols)
    end
    local role, rank
    if #ranks == 1 then
      role, rank = ranks[1].role, tostring(ranks[1].rank)
    else
      local roles, nums = {}, {}
      for i, r in ipairs(ranks) do
        roles[i] = core.column.fill("string", r.role, r.n)
        nums[i] = core.column.fill("integer", r.rank, r.n)
      end
      role, rank = core.column.concat(roles), core.column.concat(nums)
    end
    local order = result:order()
    w:columns({
      all("name"), role, rank, { all("call_stack"), missing = "" }, { all("top"), missing = "" },
      all("size_kb"), { all("start_ns"), scale = 6 }, { all("dur_ns"), scale = 6, missing = "0.0" },
      { all("allocated_mb"), missing = "0.0" }, { all("reserved_mb"), missing = "0.0" },
      { all("active_mb"), missing = "0.0" }, { all("device"), missing = "" },
    }, order)
  end
  return w:close()
end

local function sites_out(list)
  local out = setmetatable({}, { __jsontype = "array" })
  for i, s in ipairs(list) do
    out[i] = { call_site = s.call_site, size_kb = s.size_kb, count = s.count, share = s.share }
  end
  return out
end

--- The per-rank summary as plain data (used by the JSON and the Markdown writers).
function M.summary_data(result)
  local ranks = setmetatable({}, { __jsontype = "array" })
  for _, r in ipairs(result.ranks) do
    local s = r.summary
    ranks[#ranks + 1] = {
      role = r.role, rank = r.rank, folders = r.dirs,
      events = s.events, allocations = s.allocations, releases = s.releases,
      match = { mode = s.match_mode, matched = s.matched, rate = s.match_rate,
                latest_matches = s.latest_matches,
                suspect_latest_matches = s.suspect_latest_matches },
      peak = s.peak and { allocated_mb = s.peak.allocated_mb, time_ms = fmt.ms(s.peak.time_ns) } or nil,
      live_at_peak = { size_kb = s.live_at_peak.size_kb, count = s.live_at_peak.count,
                       call_sites = s.live_at_peak.site_count, top = sites_out(s.live_at_peak.sites) },
      top_call_sites = { size_kb = s.top_call_sites.size_kb, call_sites = s.top_call_sites.site_count,
                         top = sites_out(s.top_call_sites.sites) },
      leak_suspects = { size_kb = s.leak_suspects.size_kb, call_sites = s.leak_suspects.site_count,
                        top = sites_out(s.leak_suspects.sites) },
      warnings = setmetatable(r.warnings, { __jsontype = "array" }),
    }
  end
  local failed = setmetatable({}, { __jsontype = "array" })
  for _, f in ipairs(result.failed) do
    failed[#failed + 1] = { role = f.role, rank = f.rank, folders = f.dirs, reason = f.reason }
  end
  return { input = result.input, match_mode = result.match, ranks = ranks, failed = failed,
           problems = setmetatable(result.problems or {}, { __jsontype = "array" }) }
end

function M.summary_json(result, path)
  local w, err = writer.open(path)
  if not w then return nil, err end
  w:write(json.encode(M.summary_data(result), { indent = 2 }), "\n")
  return w:close()
end

local function sites_table(list, with_share)
  local rows = {}
  for i, s in ipairs(list) do
    rows[i] = { i, s.call_site, ("%.1f"):format(s.size_kb / 1024), s.count,
                with_share and fmt.pct(s.share) or nil }
  end
  local header = { "#", "call site (call_stack_top)", "MB", "count" }
  if with_share then header[5] = "share" end
  return md.table(header, rows)
end

function M.report_md(result, path)
  local w, err = writer.open(path)
  if not w then return nil, err end
  local data = M.summary_data(result)
  w:write("# ascope memory report\n\n")
  w:write(("Input: `%s`; match mode: `%s`; %d rank(s) read, %d failed.\n\n")
    :format(result.input, result.match, #result.ranks, #result.failed))
  local rows = {}
  for _, r in ipairs(data.ranks) do
    rows[#rows + 1] = { r.role, r.rank, r.events, r.allocations, r.releases, fmt.pct(r.match.rate),
      r.match.suspect_latest_matches, r.peak and ("%.1f"):format(r.peak.allocated_mb) or "",
      r.peak and r.peak.time_ms or "" }
  end
  w:write(md.table({ "role", "rank", "events", "allocations", "releases", "match rate",
    "suspect matches", "peak allocated MB", "peak time ms" }, rows), "\n")
  for _, f in ipairs(data.failed) do
    w:write(("- **failed** rank %s (%s): %s\n"):format(tostring(f.rank), f.role, f.reason))
  end
  for _, p in ipairs(data.problems) do
    w:write(("- **%s** %s\n"):format(p.severity, p.message))
  end
  for _, r in ipairs(data.ranks) do
    w:write(("\n## %s rank %s\n\n"):format(r.role, r.rank))
    if r.match.suspect_latest_matches > 0 and r.match.mode == "latest" then
      w:write(("%d of %d matches point at an operator that had already ended when the memory was allocated: "
        .. "run with `--match within-or-latest` for a stricter attribution.\n\n")
        :format(r.match.suspect_latest_matches, r.match.latest_matches))
    end
    if r.peak then
      w:write(("### Live at the peak (%.1f MB allocated at %s ms)\n\n"):format(r.peak.allocated_mb, r.peak.time_ms))
      w:write(("%d allocation(s), %.1f MB, from %d call site(s).\n\n"):format(
        r.live_at_peak.count, r.live_at_peak.size_kb / 1024, r.live_at_peak.call_sites))
      w:write(sites_table(r.live_at_peak.top, true), "\n")
    end
    w:write(("### Top call sites by bytes allocated (%.1f MB in all)\n\n"):format(r.top_call_sites.size_kb / 1024))
    w:write(sites_table(r.top_call_sites.top, true), "\n")
    w:write(("### Never released (leak suspects, %.1f MB)\n\n"):format(r.leak_suspects.size_kb / 1024))
    if #r.leak_suspects.top == 0 then w:write("None.\n\n") else w:write(sites_table(r.leak_suspects.top, false), "\n") end
    for _, warn in ipairs(r.warnings) do w:write("- warning: ", warn, "\n") end
  end
  return w:close()
end

--- memory_trace.json: per rank a process with counter tracks (allocated / reserved / active
-- MB) and one slice per attributed allocation ("B" without an end for never-released memory,
-- which the viewers extend to the end of the trace); call stacks go to "stackFrames" once and
-- slices point at them with "sf". Rows are written by the C template writer.
function M.trace_json(result, path)
  local w, err = json.writer(path)
  if not w then return nil, err end
  w:write('{"displayTimeUnit":"ms","traceEvents":[\n')
  local frames, nframes, frame_lines = {}, 0, {}
  local function frame_id(stack)
    local parent
    local fs_ = trace_fmt.frames(stack)
    for k = #fs_, 1, -1 do
      local key = (parent or 0) .. "\0" .. fs_[k]
      local id = frames[key]
      if not id then
        nframes = nframes + 1
        id = nframes
        frames[key] = id
        frame_lines[#frame_lines + 1] = ('"%d":{"name":%s%s}'):format(id, json.encode(fs_[k]),
          parent and (',"parent":"' .. parent .. '"') or "")
      end
      parent = id
    end
    return parent
  end
  local first = true
  for pid, r in ipairs(result.ranks) do
    local head = ('{"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":%s}},\n'
      .. '{"ph":"M","name":"thread_name","pid":%d,"tid":1,"args":{"name":"allocations"}}')
      :format(pid, json.encode(("rank %s (%s)"):format(r.rank, r.role)), pid)
    w:write(first and "" or ",\n", head)
    first = false
    local order = r.start_ns:order()
    local ts = { r.start_ns, scale = 3 }
    w:rows({ '{"ph":"C","name":"memory (MB)","pid":', tostring(pid), ',"ts":', ts,
             ',"args":{"allocated":', { r.allocated_mb, missing = "0" }, ',"reserved":',
             { r.reserved_mb, missing = "0" }, ',"active":', { r.active_mb, missing = "0" }, "}}" },
           { order = order, first = false, need = { r.start_ns } })
    local sf = r.call_stack:map(frame_id)
    local slice = { ',"pid":', tostring(pid), ',"tid":1,"ts":', ts, ',"sf":', { sf, string = true },
                    ',"args":{"size_kb":', { r.size_kb }, ',"call_stack_top":', { r.top, string = true } }
    local released = { '{"ph":"X","name":', { r.name, string = true }, ',"dur":', { r.dur_ns, scale = 3 } }
    for _, part in ipairs(slice) do released[#released + 1] = part end
    released[#released + 1] = "}}"
    w:rows(released, { order = order, first = false, need = { r.start_ns, r.dur_ns, sf }, positive = r.size_kb })
    local open = { '{"ph":"B","name":', { r.name, string = true } }
    for _, part in ipairs(slice) do open[#open + 1] = part end
    open[#open + 1] = ',"released":false}}'
    w:rows(open, { order = order, first = false, need = { r.start_ns, sf }, positive = r.size_kb, missing = r.dur_ns })
  end
  w:write('\n],"stackFrames":{', table.concat(frame_lines, ",\n"), "}}\n")
  return w:close()
end

return M
