--- Descriptive statistics of a list of numbers, as numpy computes them: percentiles by linear
-- interpolation between order statistics, population standard deviation (ddof = 0).
local M = {}

function M.percentile(sorted, p)
  local n = #sorted
  if n == 0 then return nil end
  local pos = p / 100 * (n - 1)
  local lo = math.floor(pos)
  local frac = pos - lo
  local v = sorted[lo + 1]
  if lo + 2 <= n then v = v + frac * (sorted[lo + 2] - v) end
  return v
end

--- {n, mean, std, cv, p50, p95, max, min}
function M.describe(values)
  local n = #values
  local sorted = {}
  local sum = 0
  for i, v in ipairs(values) do
    sorted[i] = v
    sum = sum + v
  end
  table.sort(sorted)
  local mean = sum / n
  local var = 0
  for _, v in ipairs(values) do var = var + (v - mean) ^ 2 end
  local std = math.sqrt(var / n)
  return { n = n, mean = mean, std = std, cv = mean ~= 0 and std / mean or nil,
           p50 = M.percentile(sorted, 50), p95 = M.percentile(sorted, 95), max = sorted[n], min = sorted[1] }
end

return M
