--- Memory attribution and its summary: pure functions over columns.
--
-- Attribution (mode "latest", the reference rule): index the cpu_op events that carry a call
-- stack by name, in ts order; an allocation gets the stack of the same-name event with the
-- largest ts <= its Allocation Time. "within" also needs Allocation Time <= ts + dur;
-- "within-or-latest" takes within where it exists, else latest.
local core = require "ascope_core"
local trace_fmt = require "ascope.ascend.trace"
local match, column = core.match, core.column

local M = {}

M.MODES = { "latest", "within", "within-or-latest" }

--- Attribute each memory row to a trace event.
-- mem: {n, name, alloc_ns}; trace: {n, name, ts, dur, stack} or nil.
-- Returns {rows (column of 1-based trace rows, null = none), call_stack (string column),
--          top (string column), matched, suspects, latest_matched}; suspects are the latest
-- matches whose operator had already ended (ts + dur < Allocation Time).
function M.attribute(mem, trace, mode)
  local n = mem.n
  if not trace or trace.n == 0 then
    local none = column.fill("string", nil, n)
    return { rows = column.fill("integer", nil, n), call_stack = none, top = none, matched = 0,
             suspects = 0, latest_matched = 0 }
  end
  local ix = match.index(trace.name, trace.ts, trace.dur)
  local latest, latest_matched, suspects = ix:latest(mem.name, mem.alloc_ns)
  local rows, matched = latest, latest_matched
  if mode == "within" then
    rows, matched = ix:within(mem.name, mem.alloc_ns)
  elseif mode == "within-or-latest" then
    local w = ix:within(mem.name, mem.alloc_ns)
    rows = column.new("integer")
    matched = 0
    for i = 1, n do
      local r = w[i] or latest[i]
      if r then matched = matched + 1 end
      rows:push(r)
    end
  end
  local call_stack = trace.stack:take(rows)
  return { rows = rows, call_stack = call_stack, top = call_stack:map(trace_fmt.top_frame),
           matched = matched, suspects = suspects, latest_matched = latest_matched }
end

local NO_STACK = "(no call stack)"

-- group_sum results -> the top_n call sites, largest first, with their share of `whole` KB
local function ranked(groups, whole_kb, top_n)
  local list = {}
  for i, g in ipairs(groups) do
    list[i] = { call_site = g.key or NO_STACK, size_kb = g.sum, count = g.count,
                share = whole_kb and whole_kb > 0 and g.sum / whole_kb or nil }
  end
  table.sort(list, function(a, b)
    if a.size_kb ~= b.size_kb then return a.size_kb > b.size_kb end
    return a.call_site < b.call_site
  end)
  local out = {}
  for i = 1, math.min(#list, top_n) do out[i] = list[i] end
  return out, #list
end

--- Summary of one rank's events.
-- ev: {n, size_kb, start_ns, dur_ns, allocated_mb, top} (columns). Returns plain numbers and
-- lists: events, allocations, releases, peak {allocated_mb, time_ns, row}, live_at_peak,
-- top_call_sites, leak_suspects.
--
-- peak: the largest Allocation Total Allocated(MB) and the allocation time of its row (the
-- first such row). live at peak: the allocations (size > 0) alive at the peak instant t, i.e.
-- start <= t < start + duration, or never released; grouped by call_stack_top.
-- leak suspects: allocations that were never released (no Duration), by call site.
function M.summarize(ev, top_n)
  top_n = top_n or 20
  local size, top = ev.size_kb, ev.top
  local sites, allocated_kb, allocations = column.group_sum(top, size, { positive = size })
  local _, _, releases = column.group_sum(nil, size, { negative = size })
  local leaks, leaked_kb = column.group_sum(top, size, { positive = size, missing = ev.dur_ns })
  local peak_row, peak_mb = ev.allocated_mb:argmax()
  local peak_ns = peak_row and ev.start_ns[peak_row]
  local live, live_kb, live_count = {}, 0, 0
  if peak_ns then
    live, live_kb, live_count = column.group_sum(top, size,
      { positive = size, alive_at = { ev.start_ns, ev.dur_ns, peak_ns } })
  end
  local live_list, live_sites = ranked(live, peak_mb and peak_mb * 1024, top_n)
  local site_list, nsites = ranked(sites, allocated_kb, top_n)
  local leak_list, nleaks = ranked(leaks, leaked_kb, top_n)
  return {
    events = ev.n,
    allocations = allocations,
    releases = releases,
    peak = peak_row and peak_ns and { allocated_mb = peak_mb, time_ns = peak_ns, row = peak_row } or nil,
    live_at_peak = { sites = live_list, site_count = live_sites, size_kb = live_kb, count = live_count },
    top_call_sites = { sites = site_list, site_count = nsites, size_kb = allocated_kb },
    leak_suspects = { sites = leak_list, site_count = nleaks, size_kb = leaked_kb },
  }
end

return M
