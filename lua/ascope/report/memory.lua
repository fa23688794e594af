--- Writers of `ascope memory` results: memory_events.csv, memory_summary.json,
-- memory_report.md and memory_trace.json (Chrome trace for Perfetto / chrome://tracing).
local core = require "ascope_core"
local fmt = require "ascope.fmt"
local md = require "ascope.report.md"
local writer = require "ascope.report.writer"
local analysis = require "ascope.analysis.memory"
local labels = require "ascope.labels"
local heap = require "ascope.heap"
local json = core.json
local t = require("ascope.i18n").t
local header = require("ascope.report.html").header

local M = {}

M.EVENT_COLUMNS = { "name", "role", "rank_id", "call_stack", "call_stack_top", "size_kb",
  "start_time_ms", "duration_ms", "total_allocated_mb", "total_reserved_mb", "total_active_mb",
  "device_type" }

-- the concatenation of one column of every rank (the column itself for one rank)
local function all_ranks(ranks, key)
  if #ranks == 1 then return ranks[1][key] end
  local cols = {}
  for i, r in ipairs(ranks) do cols[i] = r[key] end
  return core.column.concat(cols)
end

--- memory_events.csv: one row per operator_memory.csv row of every rank, in time order.
-- Times are printed exactly (from integer ns), so no microsecond is lost; a total the file does
-- not give (Active of a CANN workspace row, the legacy header) stays empty, never 0. The rows are written
-- by the C writer straight from the columns.
function M.events_csv(result, path)
  local w, err = core.csv.writer(path)
  if not w then return nil, err end
  w:row(M.EVENT_COLUMNS)
  local ranks = result.ranks
  if #ranks > 0 then
    local function all(key) return all_ranks(ranks, key) end
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
      all("allocated_mb"), all("reserved_mb"), all("active_mb"), { all("device"), missing = "" },
    }, order)
  end
  return w:close()
end

local array = require("ascope.fmt").array

local function sites_out(list)
  local out = array()
  for i, s in ipairs(list) do
    out[i] = { call_site = s.call_site, size_kb = s.size_kb, count = s.count, share = s.share }
  end
  return out
end

local function component_out(c)
  local l = c.live_at_peak
  local ops = array()
  for i, o in ipairs(c.no_stack.operators) do ops[i] = { name = o.name, size_kb = o.size_kb, count = o.count, share = o.share } end
  return {
    component = c.component, events = c.events, allocations = c.allocations,
    peak = c.peak and { allocated_mb = c.peak.allocated_mb, time_ms = fmt.ms(c.peak.time_ns), seen_at = c.peak.at } or nil,
    peak_reserved = c.peak_reserved and { reserved_mb = c.peak_reserved.reserved_mb,
                                          time_ms = c.peak_reserved.time_ns and fmt.ms(c.peak_reserved.time_ns) } or nil,
    live_at_peak = c.peak and { size_kb = l.size_kb, count = l.count, call_sites = l.site_count,
                                without_stack_kb = l.no_stack_kb, earlier_or_unlisted_kb = l.earlier_kb,
                                top = sites_out(l.sites) } or nil,
    without_stack = { size_kb = c.no_stack.size_kb, count = c.no_stack.count, share = c.no_stack.share,
                      operators = ops },
    top_call_sites = { size_kb = c.top_call_sites.size_kb, call_sites = c.top_call_sites.site_count,
                       top = sites_out(c.top_call_sites.sites) },
    leak_suspects = { size_kb = c.leak_suspects.size_kb, call_sites = c.leak_suspects.site_count,
                      top = sites_out(c.leak_suspects.sites) },
  }
end

local function record_out(list)
  local out = array()
  for i, e in ipairs(list) do
    out[i] = { component = e.component, samples = e.samples,
               peak_allocated_mb = e.peak_allocated_mb, peak_allocated_time_ms = e.peak_allocated_ns and fmt.ms(e.peak_allocated_ns),
               peak_reserved_mb = e.peak_reserved_mb, peak_reserved_time_ms = e.peak_reserved_ns and fmt.ms(e.peak_reserved_ns),
               peak_active_mb = e.peak_active_mb }
  end
  return out
end

--- The per-rank summary as plain data (used by the JSON and the Markdown writers).
function M.summary_data(result)
  local ranks = array()
  for _, r in ipairs(result.ranks) do
    local s = r.summary
    local comps = array()
    for i, c in ipairs(s.components) do comps[i] = component_out(c) end
    ranks[#ranks + 1] = {
      role = r.role, rank = r.rank, folders = r.dirs,
      events = s.events, allocations = s.allocations, releases = s.releases,
      match = { mode = s.match_mode, matched = s.matched, rate = s.match_rate,
                latest_matches = s.latest_matches,
                suspect_latest_matches = s.suspect_latest_matches,
                changed_by_within_or_latest = s.changed_by_fallback },
      peak = s.peak and { allocated_mb = s.peak.allocated_mb, time_ms = fmt.ms(s.peak.time_ns),
                          component = s.peak.component } or nil,
      components = comps,
      memory_record = record_out(s.record),
      top_call_sites = { size_kb = s.top_call_sites.size_kb, call_sites = s.top_call_sites.site_count,
                         top = sites_out(s.top_call_sites.sites) },
      leak_suspects = { size_kb = s.leak_suspects.size_kb, call_sites = s.leak_suspects.site_count,
                        top = sites_out(s.leak_suspects.sites) },
      partial = #r.problems > 0 or nil,
      problems = array(r.problems),
      warnings = array(r.warnings),
    }
  end
  local failed = array()
  for _, f in ipairs(result.failed) do
    failed[#failed + 1] = { role = f.role, rank = f.rank, folders = f.dirs, reason = f.reason }
  end
  return { input = result.input, match_mode = result.match, ranks = ranks, failed = failed,
           duplicates = array(result.duplicates), unprofiled_roles = array(result.unprofiled),
           problems = array(result.problems) }
end

function M.summary_json(result, path)
  local w, err = writer.open(path)
  if not w then return nil, err end
  w:write(json.encode(M.summary_data(result), { indent = 2 }), "\n")
  return w:close()
end

local function mb(kb) return kb and ("%.1f"):format(kb / 1024) or "" end

local function sites_table(list, with_share)
  local rows = {}
  for i, s in ipairs(list) do
    rows[i] = { i, fmt.label(labels.show("call_site", s.call_site)), mb(s.size_kb), s.count, with_share and fmt.pct(s.share) or nil }
  end
  local head = header("report.memory.md.sites_header")
  if with_share then head[5] = t("report.memory.md.share") end
  return md.table(head, rows)
end

local function component_md(w, c)
  w:write(("### %s\n\n"):format(c.component))
  local l = c.live_at_peak
  if c.peak then
    w:write(t("report.memory.md.peak", fmt.num(c.peak.allocated_mb), c.peak.time_ms,
      c.peak_reserved and fmt.num(c.peak_reserved.reserved_mb) or "n/a", l.count, mb(l.size_kb), mb(l.without_stack_kb),
      mb(l.earlier_or_unlisted_kb)), c.peak.seen_at == "release" and " " .. t("report.memory.peak_at_release") or "",
      "\n\n")
    w:write(sites_table(l.top, true), "\n")
  end
  local ws = c.without_stack
  w:write(t("report.memory.md.without_stack", fmt.pct(ws.share), mb(c.top_call_sites.size_kb), ws.count))
  if #ws.operators > 0 then
    local names = {}
    for i, o in ipairs(ws.operators) do names[i] = ("`%s` %s MB"):format(o.name, mb(o.size_kb)) end
    w:write(t("report.memory.md.mostly", table.concat(names, ", ")))
  end
  w:write(".\n\n")
end

function M.report_md(result, path)
  local w, err = writer.open(path)
  if not w then return nil, err end
  local data = M.summary_data(result)
  w:write("# ", t("report.title.memory"), "\n\n")
  w:write(t("report.memory.md.intro", result.input, result.match, #result.ranks, #result.failed), "\n\n")
  local rows = {}
  for _, r in ipairs(data.ranks) do
    for _, c in ipairs(r.components) do
      rows[#rows + 1] = { r.role, r.rank, c.component, c.events, c.allocations, fmt.pct(r.match.rate),
        c.peak and ("%.1f"):format(c.peak.allocated_mb) or "", c.peak and c.peak.time_ms or "",
        fmt.pct(c.without_stack.share) }
    end
  end
  w:write(md.table(header("report.memory.md.ranks_header"), rows), "\n")
  for _, f in ipairs(data.failed) do
    w:write("- ", t("report.memory.md.failed", tostring(f.rank), f.role, f.reason), "\n")
  end
  for _, d in ipairs(data.duplicates) do w:write("- ", t("report.memory.md.warning", d), "\n") end
  for _, u in ipairs(data.unprofiled_roles or {}) do w:write("- ", t("report.memory.md.warning", u), "\n") end
  for _, p in ipairs(data.problems) do
    w:write(("- **%s** %s\n"):format(p.severity, p.message))
  end
  for _, r in ipairs(data.ranks) do
    w:write(("\n## %s rank %s\n\n"):format(r.role, r.rank))
    for _, p in ipairs(r.problems) do w:write("- ", t("report.memory.md.partial", p), "\n") end
    if #r.problems > 0 then w:write("\n") end
    local m = r.match
    if m.mode == "latest" and m.changed_by_within_or_latest > 0 then
      w:write(t("report.memory.md.fallback", m.suspect_latest_matches, m.latest_matches, m.changed_by_within_or_latest),
        "\n\n")
    end
    if #r.memory_record > 0 then
      local rec = {}
      for i, e in ipairs(r.memory_record) do
        rec[i] = { e.component, e.samples, fmt.num(e.peak_allocated_mb), e.peak_allocated_time_ms or "",
                   fmt.num(e.peak_reserved_mb), fmt.num(e.peak_active_mb) }
      end
      w:write("### ", t("report.memory.md.process"), "\n\n")
      w:write(md.table(header("report.memory.md.process_header"), rec), "\n")
    end
    for _, c in ipairs(r.components) do component_md(w, c) end
    w:write("### ", t("report.memory.md.top_sites", mb(r.top_call_sites.size_kb)), "\n\n")
    w:write(sites_table(r.top_call_sites.top, true), "\n")
    w:write("### ", t("report.memory.md.leaks", mb(r.leak_suspects.size_kb)), "\n\n")
    if #r.leak_suspects.top == 0 then
      w:write(t("report.none"), "\n\n")
    else
      w:write(sites_table(r.leak_suspects.top, false), "\n")
    end
    for _, warn in ipairs(r.warnings) do w:write("- ", t("report.memory.md.warning_line", warn), "\n") end
  end
  return w:close()
end

local SERIES = { { "allocated", "allocated_mb" }, { "reserved", "reserved_mb" }, { "active", "active_mb" } }

-- counter events of one component (its rows of cols): one event per row and series that has a
-- value (a missing value is no sample; it is never written as 0)
local function counters(w, pid, name, ts, cols, rows)
  local order = analysis.time_order(ts, rows)
  for _, s in ipairs(SERIES) do
    local col = cols[s[2]]
    if col then
      w:rows({ '{"ph":"C","name":', json.encode(name), ',"pid":', tostring(pid), ',"ts":', { ts, scale = 3 },
               ',"args":{"', s[1], '":', { col }, "}}" },
             { order = order, first = false, need = { ts, col } })
    end
  end
end

-- the last instant of the trace: never-released allocations run to it. ends: each rank's
-- analysis.end_ns.
local function trace_end(ranks, ends)
  local last
  local function see(col)
    local _, _, _, mx = col:stats()
    if mx and (not last or mx > last) then last = mx end
  end
  for i, r in ipairs(ranks) do
    see(r.start_ns)
    see(ends[i])
    if r.record then see(r.record.ts_ns) end
  end
  return last
end

--- memory_trace.json (Chrome trace-event format, for Perfetto and chrome://tracing). Per rank a
-- process with
--   counters: "<component> operators" (the running totals of operator_memory.csv rows of that
--     pool) and "<component>" (memory_record.csv), args allocated / reserved / active in MB;
--   one async slice per allocation (ph b/e, cat = component, name = operator, id unique in the
--     file): it begins at Allocation Time and ends after its Duration (analysis.end_ns); a
--     never-released allocation (no Duration: analysis.never_released, the summary's rule) ends
--     at the last instant of the trace with args.never_released = true.
-- Async slices need not nest, so allocations that overlap partially are drawn as they are. Call
-- stacks go to "stackFrames" once and slices point at them with "sf" ("0": no call stack). Frame
-- names and call_stack_top are labels for a viewer, capped at fmt.LABEL_MAX bytes.
-- Rows are written by the C template writer.
function M.trace_json(result, path)
  local w, err = json.writer(path)
  if not w then return nil, err end
  w:write('{"displayTimeUnit":"ms","traceEvents":[\n')
  -- the frames in C, once per distinct stack, the rows pointing at them by id
  local tree, has_frames = core.stacktree.new(), false
  local ranks = result.ranks
  local first, rows = true, 0
  for pid, r in ipairs(ranks) do
    rows = rows + r.n
    w:write(first and "" or ",\n", ('{"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":%s}},\n'
      .. '{"ph":"M","name":"process_sort_index","pid":%d,"tid":0,"args":{"sort_index":%d}}')
      :format(pid, json.encode(("rank %s (%s)"):format(r.rank, r.role)), pid, pid))
    first = false
    for _, c in ipairs(r.summary.components) do
      counters(w, pid, c.component .. " operators", r.start_ns, r, c.rows)
    end
    for _, e in ipairs(r.summary.record) do counters(w, pid, e.component, r.record.ts_ns, r.record, e.rows) end
  end
  -- Each step below leaves columns of a row or a stack each behind (the counters' time orders,
  -- the tree's scratch): gone before the next, a rank whose every operator has a stack of its
  -- own is not the sum of them at the writer's peak.
  heap.release(rows)
  if #ranks > 0 then
    local sfs = {}
    for i, r in ipairs(ranks) do
      sfs[i] = tree:ids(r.call_stack)
      has_frames = has_frames or sfs[i]:stats() > 0
    end
    heap.release(rows)
    local pid = "1" -- one rank: its pid is written as text, not a column of it
    if #ranks > 1 then
      local pids = {}
      for p, r in ipairs(ranks) do pids[p] = core.column.fill("integer", p, r.n) end
      pid = { core.column.concat(pids) }
    end
    local ends = {}
    for i, r in ipairs(ranks) do ends[i] = analysis.end_ns(r) end
    local start, size = all_ranks(ranks, "start_ns"), all_ranks(ranks, "size_kb")
    local stop = #ranks == 1 and ends[1] or core.column.concat(ends)
    local sf = #ranks == 1 and sfs[1] or core.column.concat(sfs)
    local head = { ',"cat":', { all_ranks(ranks, "component"), string = true }, ',"name":',
                   { all_ranks(ranks, "name"), string = true },
                   ',"id":', { start:order():order() }, ',"pid":', pid } -- id: the row's place in time order
    local function event(ph, ts, tail)
      local parts = { '{"ph":"' .. ph .. '"' }
      for _, p in ipairs(head) do parts[#parts + 1] = p end
      parts[#parts + 1] = ',"ts":'
      parts[#parts + 1] = ts
      for _, p in ipairs(tail) do parts[#parts + 1] = p end
      return parts
    end
    local args = { ',"sf":"', { sf, missing = "0" }, '","args":{"size_kb":', { size },
                   ',"call_stack_top":',
                   { all_ranks(ranks, "top"), string = true, missing = '""', max = fmt.LABEL_MAX } }
    local begin_released, begin_open = { table.unpack(args) }, { table.unpack(args) }
    begin_released[#begin_released + 1] = "}}"
    begin_open[#begin_open + 1] = ',"never_released":true}}'
    local ts = { start, scale = 3 }
    w:rows(event("b", ts, begin_released), { first = false, need = { start, stop }, positive = size })
    w:rows(event("b", ts, begin_open), { first = false, need = { start }, positive = size, missing = stop })
    w:rows(event("e", { stop, scale = 3 }, { "}" }), { first = false, need = { start, stop }, positive = size })
    local last = trace_end(ranks, ends)
    if last then
      w:rows(event("e", fmt.us(last), { ',"args":{"never_released":true}}' }),
             { first = false, need = { start }, positive = size, missing = stop })
    end
  end
  -- the members straight from the tree: a million distinct stacks make hundreds of MB of them
  w:write('\n],"stackFrames":{"0":{"name":"', labels.NO_STACK, '"}')
  if has_frames then w:write(",\n") end
  w:frames(tree, fmt.LABEL_MAX)
  w:write("}}\n")
  return w:close()
end

return M
