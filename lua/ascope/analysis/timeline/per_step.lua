--- Step windows and the time split of every step, from busy sets of the whole trace:
--   wall       the ProfilerStep's own duration (without markers: the stage)
--   stage      first to last compute or communication task in the window (the profiler's Stage)
--   preparing  window start to the stage start: host-only time at the start of the step
--   compute, communication (busy unions; communication without the P2P receive waits, which
--              are the pipeline bubble: the profiler's "Exclude Receive"),
--   exposed    communication not covered by compute,
--   free       stage time with neither compute nor communication
--   bubble     union of P2P receive waits in the stage (step_trace_time's Bubble)
--   launch_gap compute gaps in the stage not covered by communication or P2P ops but covered
--              by host launch/sync activity
-- All in ns here; the analyses turn them into ms.
local M = {}

--- Windows {id, w0, w1, wall} from the step markers (a window runs to the next step's start;
-- the last one to its own end: what runs after it is not part of the profiled steps) and the index of the chosen one: want_step, else the
-- step with the median wall time. Without markers: one window over everything.
function M.windows(steps, want_step)
  local wins = {}
  for k, s in ipairs(steps) do
    local nxt = steps[k + 1]
    wins[k] = { id = s.id, w0 = s.start, w1 = nxt and nxt.start or s.start + s.dur, wall = s.dur }
  end
  if #wins == 0 then return { { id = nil, w0 = math.mininteger, w1 = math.maxinteger } }, 1 end
  if want_step then
    local k = M.find(wins, want_step)
    if k then return wins, k end
    return nil, require("ascope.i18n").t("timeline.no_step", want_step, wins[1].id, wins[#wins].id)
  end
  return wins, M.median_index(wins, "wall")
end

--- The index of the item of list whose `key` is the median (of an even count the lower middle;
-- of equal values the first): a typical step.
function M.median_index(list, key)
  local order = {}
  for k = 1, #list do order[k] = k end
  table.sort(order, function(a, b)
    if list[a][key] ~= list[b][key] then return list[a][key] < list[b][key] end
    return a < b
  end)
  return order[(#order + 1) // 2]
end

--- Index of the window of step id, or nil.
function M.find(wins, id)
  for k, w in ipairs(wins) do
    if w.id == id then return k end
  end
end

--- The split of one window. sets: whole-trace busy sets {compute, comm, p2p, p2p_wait, launch,
-- dataloader}. Returns nil when the window holds no compute or communication. span: first to
-- last compute or communication; stage: the span less the receive waits in it (bubble), as
-- the profiler's Stage = end-to-end - Bubble.
function M.split(sets, w)
  -- the device's side of the window (the tasks the step launched), as analysis/timeline
  -- sets it; the host's is w0, w1
  local d0, d1 = w.d0 or w.w0, w.d1 or w.w1
  local comp, comm = sets.compute:clip(d0, d1), sets.comm:clip(d0, d1)
  local act = comp:union(comm)
  local lo, hi = act:bounds()
  if not lo then return nil end
  local s = { id = w.id, lo = lo, hi = hi, span = hi - lo }
  s.wall = w.wall or s.span
  s.preparing = M.preparing(sets, w, lo)
  local waits = sets.p2p_wait:clip(lo, hi)
  local comm_x = comm:subtract(waits)
  s.compute, s.comm = comp:total(), comm_x:total()
  s.exposed = comm_x:subtract(comp):total()
  s.free = s.span - act:total()
  s.bubble = waits:total()
  -- the profiler's Stage: the span less a pipeline's receive waits (its Bubble)
  s.stage = s.span - s.bubble
  local gaps = comp:gaps(lo, hi):subtract(comm):subtract(sets.p2p)
  -- a gap while the next task was already launched is the device's, not the host's
  s.launch_gap = gaps:intersect(sets.launch:clip(lo, hi)):subtract(sets.queued):total()
  -- the host's loading in its window (to the stage's end) while the device computes nothing,
  -- the step before's tasks included: a device running behind runs them while the host loads
  s.dataloader_serial = sets.dataloader:clip(w.w0, math.min(hi, w.w1)):subtract(sets.compute):total()
  return s
end

--- The host-only time at the start of a step whose stage starts at lo: from the window's start,
-- or from the last device task still running in it (the step before, on a device that runs
-- behind the host), to lo. 0 without step markers.
function M.preparing(sets, w, lo)
  if not w.id then return 0 end
  return math.max(lo - (M.busy_to(sets, w.w0, lo) or w.w0), 0)
end

--- The end of the compute and communication in [t0, t1) (at most t1), or nil when there is
-- none: bounds of clips, which build no set (a set a step, of the tasks of the steps before
-- on a device that runs behind, held 13 MB on 20000 short steps).
function M.busy_to(sets, t0, t1)
  local _, a = sets.compute:bounds(t0, t1)
  local _, b = sets.comm:bounds(t0, t1)
  if a and b then return math.max(a, b) end
  return a or b
end

--- Splits of all windows (at most `limit`, evenly spread, so a trace of thousands of steps stays
-- bounded), in step order.
function M.all(sets, wins, limit)
  local out = {}
  local n = #wins
  local stride = (limit and n > limit) and n / limit or 1
  local k, last = 1.0, nil
  while k <= n do
    local i = math.floor(k)
    if i ~= last then
      out[#out + 1] = M.split(sets, wins[i]) or { id = wins[i].id, wall = wins[i].wall, empty = true }
      last = i
    end
    k = k + stride
  end
  return out
end

return M
