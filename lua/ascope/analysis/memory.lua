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

local function ranked(groups, total_kb, top_n)
  local list = {}
  for site, g in pairs(groups) do
    list[#list + 1] = { call_site = site, size_kb = g.size_kb, count = g.count,
                        share = total_kb and total_kb > 0 and g.size_kb / total_kb or nil }
  end
  table.sort(list, function(a, b)
    if a.size_kb ~= b.size_kb then return a.size_kb > b.size_kb end
    return a.call_site < b.call_site
  end)
  local out = {}
  for i = 1, math.min(#list, top_n) do out[i] = list[i] end
  return out, #list
end

local function add(groups, site, kb)
  local g = groups[site]
  if not g then
    g = { size_kb = 0, count = 0 }
    groups[site] = g
  end
  g.size_kb = g.size_kb + kb
  g.count = g.count + 1
end

--- Summary of one rank's events.
-- ev: {n, size_kb, start_ns, dur_ns, allocated_mb, top} (columns). Returns plain numbers and
-- lists: events, allocations, releases, peak {allocated_mb, time_ns, row}, live_at_peak,
-- top_call_sites, leak_suspects.
--
-- live at peak: the allocations (size > 0) alive at the peak instant t, i.e.
-- start <= t < start + duration, or never released; grouped by call_stack_top.
function M.summarize(ev, top_n)
  top_n = top_n or 20
  local n = ev.n
  local size, start, dur, alloc, top = ev.size_kb, ev.start_ns, ev.dur_ns, ev.allocated_mb, ev.top
  local allocations, releases = 0, 0
  local peak_mb, peak_row = nil, nil
  local sites, leaks = {}, {}
  local allocated_kb, leaked_kb = 0, 0
  for i = 1, n do
    local s = size[i]
    if s and s > 0 then
      allocations = allocations + 1
      local site = top[i] or NO_STACK
      add(sites, site, s)
      allocated_kb = allocated_kb + s
      if dur[i] == nil then
        add(leaks, site, s)
        leaked_kb = leaked_kb + s
      end
    elseif s and s < 0 then
      releases = releases + 1
    end
    local a = alloc[i]
    if a and (peak_mb == nil or a > peak_mb) then
      peak_mb, peak_row = a, i
    end
  end
  local live, live_kb, live_count = {}, 0, 0
  local peak_ns = peak_row and start[peak_row]
  if peak_ns then
    for i = 1, n do
      local s = size[i]
      if s and s > 0 then
        local st = start[i]
        local d = dur[i]
        if st <= peak_ns and (d == nil or st + d > peak_ns) then
          add(live, top[i] or NO_STACK, s)
          live_kb = live_kb + s
          live_count = live_count + 1
        end
      end
    end
  end
  local peak_kb = peak_mb and peak_mb * 1024
  local live_list, live_sites = ranked(live, peak_kb, top_n)
  local site_list, nsites = ranked(sites, allocated_kb, top_n)
  local leak_list, nleaks = ranked(leaks, leaked_kb, top_n)
  return {
    events = n,
    allocations = allocations,
    releases = releases,
    peak = peak_row and { allocated_mb = peak_mb, time_ns = peak_ns, row = peak_row } or nil,
    live_at_peak = { sites = live_list, site_count = live_sites, size_kb = live_kb, count = live_count },
    top_call_sites = { sites = site_list, site_count = nsites, size_kb = allocated_kb },
    leak_suspects = { sites = leak_list, site_count = nleaks, size_kb = leaked_kb },
  }
end

return M
