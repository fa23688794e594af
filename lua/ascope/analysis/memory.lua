--- Memory attribution and its summary: pure functions over columns.
--
-- Attribution (mode "latest", the reference rule): index the cpu_op events that carry a call
-- stack by name, in ts order; an allocation gets the stack of the same-name event with the
-- largest ts <= its Allocation Time. "within" also needs Allocation Time <= ts + dur;
-- "within-or-latest" takes within where it exists, else latest.
--
-- Components (pools): operator_memory.csv interleaves the rows of separate allocators, each
-- with its own running totals: the PyTorch caching allocator (PTA: aten::, npu:: ...) and the
-- CANN / graph-engine workspace pool (GE: cann::). A peak, a counter or a live-at-peak set only
-- means something inside one pool, so every such figure is computed per component.
local core = require "ascope_core"
local match, column, stacktree = core.match, core.column, core.stacktree
local LABEL_MAX = require("ascope.fmt").LABEL_MAX
local heap = require "ascope.heap"

local M = {}

M.MODES = { "latest", "within", "within-or-latest" }

-- The matched rows of mem in trace, and the counts attribute returns. The index and the
-- answers not kept are this function's locals: garbage once it returns.
local function match_rows(mem, trace, mode)
  local ix = match.index(trace.name, trace.ts, trace.dur)
  if mode == "within" then
    local _, latest_matched, suspects = ix:latest(mem.name, mem.alloc_ns)
    local rows, matched = ix:within(mem.name, mem.alloc_ns)
    -- within-or-latest matches every row latest matches (a within match is a latest one too),
    -- and differs from within on the rows only latest matches
    return rows, matched, latest_matched - matched, latest_matched, suspects
  end
  -- one pass gives latest and the count of changed rows, which decides whether "latest"
  -- suggests the other mode
  local w_rows, w_matched, _, changed, latest, latest_matched, suspects = ix:within_or_latest(mem.name, mem.alloc_ns)
  if mode == "within-or-latest" then return w_rows, w_matched, changed, latest_matched, suspects end
  return latest, latest_matched, changed, latest_matched, suspects
end

--- Attribute each memory row to a trace event.
-- mem: {n, name, alloc_ns}; trace: {n, name, ts, dur, stack} or nil.
-- Returns {rows (column of 1-based trace rows, null = none), call_stack (string column),
--          top (string column), matched, suspects, latest_matched, changed_by_fallback}:
-- suspects are the latest matches whose operator had already ended (ts + dur < Allocation
-- Time); changed_by_fallback is how many rows within-or-latest would attribute differently
-- from the mode used (within-or-latest itself: from latest, the rows it changed).
function M.attribute(mem, trace, mode)
  local n = mem.n
  if not trace or trace.n == 0 then
    local none = column.fill("string", nil, n)
    return { rows = column.fill("integer", nil, n), call_stack = none, top = none, matched = 0,
             suspects = 0, latest_matched = 0, changed_by_fallback = 0 }
  end
  local rows, matched, changed, latest_matched, suspects = match_rows(mem, trace, mode)
  -- the index (five words an event) goes before the stacks' columns and top frames are made:
  -- a rank whose every operator has a stack of its own peaked here
  heap.release(trace.n)
  local call_stack = trace.stack:take(rows)
  return { rows = rows, call_stack = call_stack, top = stacktree.top(call_stack, false),
           matched = matched, suspects = suspects, latest_matched = latest_matched,
           changed_by_fallback = changed }
end

--- A function name -> component from the rules' components table
-- ({pools = {{name = "GE", prefixes = {"cann::"}}, ...}, default = "PTA"}).
function M.classifier(components)
  local pools = components and components.pools or {}
  local default = components and components.default or "PTA"
  return function(name)
    for _, p in ipairs(pools) do
      for _, prefix in ipairs(p.prefixes) do
        if name:sub(1, #prefix) == prefix then return p.name end
      end
    end
    return default
  end
end

--- The rows of each value of a string column: {{name = value, rows = integer column of 1-based
-- rows in file order}}, in order of first appearance. The rank's columns are not copied: the
-- summaries read them through the rows (group_sum's rows option, argmax(rows)).
function M.rows_by(keys)
  local _, values, rows = column.group(keys)
  local out = {}
  for g, v in ipairs(values) do out[g] = { name = v[1], rows = rows[g] } end
  return out
end

--- The given rows in time order (ties in file order): an order for downsample and the writers.
function M.time_order(ts, rows) return rows:take(ts:take(rows):order()) end

local NO_STACK = require("ascope.labels").NO_STACK

-- The top_n groups of a group_sum, largest first (ties by key, the keyless group named
-- NO_STACK), with their share of `whole` KB, ranked in C: with a distinct call stack per row
-- there are as many groups as rows, and no Lua table or string is made for the others. Keys are
-- report labels, capped at fmt.LABEL_MAX bytes (a 100 MB frame is shown by its start).
-- Returns the list, the totals (KB, count), the number of groups and the keyless group's KB.
local function top_groups(keys, size, opts, whole_kb, top_n, label)
  opts.top, opts.none, opts.key_max = top_n, NO_STACK, LABEL_MAX
  local groups, total_kb, count, ngroups, keyless_kb = column.group_sum(keys, size, opts)
  whole_kb = whole_kb or total_kb
  local out = {}
  for i, g in ipairs(groups) do
    out[i] = { [label or "call_site"] = g.key or NO_STACK, size_kb = g.sum, count = g.count,
               share = whole_kb and whole_kb > 0 and g.sum / whole_kb or nil }
  end
  return out, total_kb, count, ngroups, keyless_kb
end

-- The largest of a total over the rows, at the first instant it was seen: at an allocation
-- (at, start_ns) or at a release (rel, release_ns), whichever came first where both show it. A
-- total counts only where the row gives its time: a total without its instant was seen at no
-- instant the file gives (it used to take the peak away: the largest total with one is the
-- peak). Rows are in allocation order, so their releases are not in time order, and a total
-- stays as it is until the next row changes it: several rows show it.
-- Returns row, value, time_ns, "allocation"|"release"; nil when no row has the total.
local function largest(at, rel, start_ns, release_ns, rows)
  local row, v = at:argmax(rows, start_ns, start_ns) -- a row without its time shows no instant
  local rrow, rv = nil, nil
  if rel then rrow, rv = rel:argmax(rows, release_ns, release_ns) end
  if rrow and (not row or rv > v or (rv == v and (not start_ns[row] or release_ns[rrow] < start_ns[row]))) then
    return rrow, rv, release_ns[rrow], "release"
  end
  if row then return row, v, start_ns[row], "allocation" end
  return nil
end

--- The one rule of "never released", for the summary (leak suspects, live at the peak) and the
-- trace (open slices) alike: a row without a Duration, whatever its Release Time. Returns the
-- column whose missing values mark those rows.
function M.never_released(ev) return ev.dur_ns end

--- When each allocation ends: Allocation Time + Duration; none for a row never released
-- (M.never_released). A row that gives both ends at its Release Time, the same instant as the
-- profiler writes it, so only a file with rows that give just one of them costs a Lua pass.
-- ev: {start_ns, dur_ns, release_ns}.
function M.end_ns(ev)
  local dur, release = M.never_released(ev), ev.release_ns
  local _, _, dur_only = column.group_sum(nil, dur, { missing = release })
  local _, _, release_only = column.group_sum(nil, release, { missing = dur })
  if dur_only == 0 and release_only == 0 then return release end
  local out, start = column.new("integer"), ev.start_ns
  for i = 1, #dur do
    local s0, d = start[i], dur[i]
    out:push(s0 and d and s0 + d or nil)
  end
  return out
end

--- Summary of one component's rows.
-- ev: the rank's columns {name, size_kb, start_ns, dur_ns, release_ns, allocated_mb, reserved_mb,
-- rel_allocated_mb, rel_reserved_mb, call_stack, top}; rows: the component's rows (integer
-- column). peak: the largest total allocated the file shows for the component, at the instant
-- it shows it: an allocation's Allocation Total Allocated(MB) at its allocation time, or a
-- release's Release Total Allocated(MB) at its release time where that is larger (rows the
-- file does not list were allocated between), at the first instant it was seen (peak.at says
-- which kind of row). The
-- reserved peak likewise. Live at the peak: the allocations (size > 0) alive at that instant t (start <= t < start +
-- duration, or never released), by call_stack_top; the rest of the peak (peak minus live) was
-- allocated before the first row of the file or is not listed. no_stack: the share of allocated
-- KB whose row has no call stack (or a blank top frame, which names no call site), and the operators behind it.
--
-- whole: given when rows are all the rank's rows (one component), the rank's own top call sites
-- and leak suspects {site_list, kb, count, groups} each, which are then the component's too;
-- the other figures are then read over every row without the rows' indirection.
function M.summarize_component(ev, rows, top_n, whole)
  local size, top = ev.size_kb, ev.top
  local sel = not whole and rows or nil
  local site_list, allocated_kb, allocations, nsites, leak_list, leaked_kb, nleaks, _
  if whole then
    site_list, allocated_kb, allocations, nsites = table.unpack(whole.sites, 1, whole.sites.n)
    leak_list, leaked_kb, _, nleaks = table.unpack(whole.leaks, 1, whole.leaks.n)
  else
    site_list, allocated_kb, allocations, nsites = top_groups(top, size, { positive = size, rows = sel }, nil, top_n)
    leak_list, leaked_kb, _, nleaks = top_groups(top, size,
      { positive = size, missing = M.never_released(ev), rows = sel }, nil, top_n)
  end
  local peak_row, peak_mb, peak_ns, peak_at = largest(ev.allocated_mb, ev.rel_allocated_mb, ev.start_ns,
    ev.release_ns, sel)
  local reserved_row, reserved_mb, reserved_ns = largest(ev.reserved_mb, ev.rel_reserved_mb, ev.start_ns,
    ev.release_ns, sel)
  local live_list, live_kb, live_count, live_sites, live_no_stack_kb = {}, 0, 0, 0, 0
  if peak_ns then
    live_list, live_kb, live_count, live_sites, live_no_stack_kb = top_groups(top, size,
      { positive = size, alive_at = { ev.start_ns, M.never_released(ev), peak_ns }, rows = sel },
      peak_mb and peak_mb * 1024, top_n)
  end
  local op_list, no_stack_kb, no_stack_count = top_groups(ev.name, size,
    { positive = size, missing = top, rows = sel }, nil, 5, "name")
  return {
    events = #rows,
    rows = rows,
    allocations = allocations,
    peak = peak_row and peak_ns and { allocated_mb = peak_mb, time_ns = peak_ns, row = peak_row, at = peak_at } or nil,
    peak_reserved = reserved_row and { reserved_mb = reserved_mb, time_ns = reserved_ns } or nil,
    live_at_peak = {
      sites = live_list, site_count = live_sites, size_kb = live_kb, count = live_count,
      no_stack_kb = live_no_stack_kb,
      earlier_kb = peak_mb and peak_mb * 1024 - live_kb or nil,
    },
    top_call_sites = { sites = site_list, site_count = nsites, size_kb = allocated_kb },
    leak_suspects = { sites = leak_list, site_count = nleaks, size_kb = leaked_kb },
    no_stack = { size_kb = no_stack_kb, count = no_stack_count,
                 share = allocated_kb > 0 and no_stack_kb / allocated_kb or nil, operators = op_list },
  }
end

--- Summary of one rank's events: counts over all rows, and the figures that only hold inside
-- one pool per component (components, in order of first appearance). peak is the largest of
-- the components' peaks, with its component named (for tables that show one number a rank).
-- ev: the columns summarize_component reads plus component (string column), n.
function M.summarize(ev, top_n)
  top_n = top_n or 20
  local size, top = ev.size_kb, ev.top
  local sites = table.pack(top_groups(top, size, { positive = size }, nil, top_n))
  local _, _, releases = column.group_sum(nil, size, { negative = size })
  local leaks = table.pack(top_groups(top, size, { positive = size, missing = M.never_released(ev) }, nil, top_n))
  local site_list, allocated_kb, allocations, nsites = table.unpack(sites, 1, sites.n)
  local leak_list, leaked_kb, _, nleaks = table.unpack(leaks, 1, leaks.n)
  local components, peak = {}, nil
  for _, part in ipairs(M.rows_by(ev.component)) do
    local s = M.summarize_component(ev, part.rows, top_n, #part.rows == ev.n and { sites = sites, leaks = leaks } or nil)
    s.component = part.name or "?"
    components[#components + 1] = s
    -- of pools that reach the same peak, the one that reached it first
    if s.peak and (not peak or s.peak.allocated_mb > peak.allocated_mb
        or (s.peak.allocated_mb == peak.allocated_mb and s.peak.time_ns < peak.time_ns)) then
      peak = { allocated_mb = s.peak.allocated_mb, time_ns = s.peak.time_ns, component = s.component }
    end
  end
  return {
    events = ev.n,
    allocations = allocations,
    releases = releases,
    peak = peak,
    components = components,
    top_call_sites = { sites = site_list, site_count = nsites, size_kb = allocated_kb },
    leak_suspects = { sites = leak_list, site_count = nleaks, size_kb = leaked_kb },
  }
end

--- Peaks of memory_record.csv per component: {{component, samples, rows, peak_allocated_mb,
-- peak_allocated_ns, peak_reserved_mb, peak_reserved_ns, peak_active_mb}} in order of first
-- appearance. A missing value is no sample: APP has no allocated value, so no allocated peak.
function M.record_peaks(rec)
  local out = {}
  if not rec or rec.n == 0 then return out end
  for _, p in ipairs(M.rows_by(rec.component)) do
    local rows = p.rows
    local e = { component = p.name or "?", samples = #rows, rows = rows }
    local ra, a = rec.allocated_mb:argmax(rows, nil, rec.ts_ns)
    local rr, r = rec.reserved_mb:argmax(rows, nil, rec.ts_ns)
    local _, act = rec.active_mb:argmax(rows)
    if ra then e.peak_allocated_mb, e.peak_allocated_ns = a, rec.ts_ns[ra] end
    if rr then e.peak_reserved_mb, e.peak_reserved_ns = r, rec.ts_ns[rr] end
    e.peak_active_mb = act
    out[#out + 1] = e
  end
  return out
end

return M
