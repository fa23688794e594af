--- Dimension 8: prefill/decode. With request boundaries (host slices named by
-- patterns.request) the seed's formulas hold, per request, averaged over the requests:
--   TTFT = the first token's time - the request's start, the first token coming at the end of
--          the request's prefill (the prefill slices that start in it, before its first decode)
--   TPOT = (request length - TTFT) / (output tokens - 1), output tokens = 1 + the decode slices
--          of the request (one token each)
-- Without request boundaries the values are the name-pattern approximation, and say so:
-- TTFT = the length of the first block of prefill activity, TPOT = the mean decode slice.
local data_labels = require "ascope.labels"

local M = {}

local function ms(ns) return ns and ns / 1e6 end

-- the rows of col that start in [w0, w1) (when given): the step's, as the times are clipped to it
local function rows_in(tl, col, w0, w1)
  local out = {}
  for k = 1, #col do
    local t = tl.ts[col[k]]
    if t and (not w0 or t >= w0) and (not w1 or t < w1) then out[#out + 1] = col[k] end
  end
  return out
end

-- slices sorted by start: {ts, te}
local function spans(tl, rows)
  local out = {}
  for _, r in ipairs(rows) do
    if tl.ts[r] and tl.dur[r] then out[#out + 1] = { tl.ts[r], tl.ts[r] + tl.dur[r] } end
  end
  table.sort(out, function(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    return a[2] < b[2]
  end)
  return out
end

-- TTFT and TPOT of each request from its prefill and decode slices
local function by_request(requests, pre, dec)
  local ttft, tpot = {}, {}
  for _, q in ipairs(requests) do
    local q0, q1 = q[1], q[2]
    local first_dec
    local decs = 0
    for _, d in ipairs(dec) do
      if d[1] >= q0 and d[1] < q1 then
        decs = decs + 1
        first_dec = first_dec or d[1]
      end
    end
    local token
    for _, p in ipairs(pre) do
      if p[1] >= q0 and p[1] < q1 and (not first_dec or p[1] < first_dec) then
        token = math.max(token or p[2], p[2])
      end
    end
    if token then
      local t = token - q0
      ttft[#ttft + 1] = t
      if decs > 0 then tpot[#tpot + 1] = (q1 - q0 - t) / decs end
    end
  end
  return ttft, tpot
end

local function mean(list)
  if #list == 0 then return nil end
  local s = 0
  for _, v in ipairs(list) do s = s + v end
  return s / #list
end

--- The phases of a step: m the model, [w0, w1) the window. Times, counts, TTFT and TPOT are
-- all the window's: the slices and requests that start in it.
function M.measure(m, w0, w1)
  local all_pre, all_dec = m.tagged_rows(m, "prefill"), m.tagged_rows(m, "decode")
  if #all_pre == 0 and #all_dec == 0 then
    return { applicable = false,
             reason = require("ascope.i18n").t("timeline.why.no_phases") }
  end
  local tl = m.tl
  local pre_rows, dec_rows = rows_in(tl, all_pre, w0, w1), rows_in(tl, all_dec, w0, w1)
  local pu, du = m.busy(m, pre_rows, w0, w1), m.busy(m, dec_rows, w0, w1)
  local out = { applicable = true, prefill_ms = ms(pu:total()), decode_ms = ms(du:total()),
                prefill_count = #pre_rows, decode_count = #dec_rows }
  local req = spans(tl, rows_in(tl, m.tagged_rows(m, "request", { host = true, other = true }), w0, w1))
  if #req > 0 then
    local ttft, tpot = by_request(req, spans(tl, pre_rows), spans(tl, dec_rows))
    out.method = data_labels.REQUESTS
    out.requests = #req
    out.ttft_ms, out.tpot_ms = ms(mean(ttft)), ms(mean(tpot))
    return out
  end
  out.method = data_labels.NAME_PATTERNS
  if #pu > 0 then
    local s, e = pu:get(1)
    out.ttft_ms = ms(e - s)
  end
  local sum, n = 0, 0
  for k = 1, #dec_rows do
    local d = tl.dur[dec_rows[k]]
    if d then sum, n = sum + d, n + 1 end
  end
  out.tpot_ms = n > 0 and ms(sum / n) or nil
  return out
end

return M
