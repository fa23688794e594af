--- Operator jitter across cards: the n-th call of each operator type on every card, side by
-- side. Definitions:
--   calls of a type on a card  the rows of that type, in file order; call index 0 is the first
--   max, min, jitter           over the cards that have a numeric duration for that call
--                              (NA values and missing cards are left out); jitter = max - min
--   valid call                 index >= skip_calls (1: the warm-up call 0 is left out) with at
--                              least two cards having a value; average jitter = mean over them
--   aiv check                  per card, type family and aiv column, calls >= skip_calls:
--                              non-numeric, not positive, or outside mean x (1 -/+ tolerance)
--                              of that column over the card's calls of that type
local column = require("ascope_core").column
local model = require "ascope.analysis.timeline.model"

local M = {}

-- type -> list of row numbers in file order, and the types in order of first appearance
local function calls_by_type(k)
  local _, types, rows = column.group(k.type)
  local by, order = {}, {}
  for i, t in ipairs(types) do
    local name = t[1] or "?"
    by[name] = rows[i]
    order[#order + 1] = name
  end
  return by, order
end

-- type -> plain Lua list of durations (nil for NA), gathered in C: the loops below then index
-- tables, not columns
local function durations_by_type(k)
  local by, order = calls_by_type(k)
  local out = {}
  for t, rows in pairs(by) do out[t] = { n = #rows, values = k.duration:take(rows):totable() } end
  return out, order
end

--- cards: list of {card = number, data = kernel_csv result} (data nil for a missing card).
-- Returns {cards, missing, types, rows = {{type, call, max, min, jitter, values = {card -> v}}},
--          avg = {{type, calls, valid, avg_jitter}}}
function M.jitter(cards, rules)
  local skip = rules.skip_calls or 1
  local per = {}
  local ref
  for _, c in ipairs(cards) do
    if c.data then
      local by, order = durations_by_type(c.data)
      per[c.card] = by
      if not ref or c.card == 0 then ref = { by = by, order = order, card = c.card } end
    end
  end
  local res = { rows = {}, avg = {}, reference_card = ref and ref.card }
  if not ref then return res end
  for _, t in ipairs(ref.order) do
    local ncalls = ref.by[t].n
    local sum, valid = 0, 0
    local lists = {}
    for k, c in ipairs(cards) do lists[k] = per[c.card] and per[c.card][t] and per[c.card][t].values or false end
    for i = 0, ncalls - 1 do
      local values, mx, mn, nvals = {}, nil, nil, 0
      for k, c in ipairs(cards) do
        local list = lists[k]
        local v = list and list[i + 1] or nil
        values[c.card] = v
        if v then
          nvals = nvals + 1
          if not mx or v > mx then mx = v end
          if not mn or v < mn then mn = v end
        end
      end
      -- rounded to the picosecond: the inputs have at most three decimals of us
      local jitter = nvals >= 2 and math.floor((mx - mn) * 1e6 + 0.5) / 1e6 or nil
      res.rows[#res.rows + 1] = { type = t, call = i, max = mx, min = mn, jitter = jitter, values = values, n = nvals }
      if i >= skip and jitter then
        sum = sum + jitter
        valid = valid + 1
      end
    end
    res.avg[#res.avg + 1] = { type = t, calls = ncalls, valid = valid, avg_jitter = valid > 0 and sum / valid or nil }
  end
  return res
end

--- The aiv checks; returns a list of {card, type, call, column, value, mean, low, high, kind}.
function M.aiv_checks(cards, rules)
  local out = {}
  local skip, tol = rules.skip_calls or 1, rules.tolerance or 0.5
  for _, c in ipairs(cards) do
    if c.data then
      local by, order = calls_by_type(c.data)
      for _, t in ipairs(order) do
        if model.matches(t, rules.aiv_types) then
          local rows = by[t]
          for _, col in ipairs(rules.aiv_columns) do
            if c.data.aiv_present[col] then
              local values = c.data.aiv[col]:take(rows):totable() -- gathered in C, indexed as a table
              local sum, n = 0, 0
              for i = skip + 1, #rows do
                local v = values[i]
                if v then sum, n = sum + v, n + 1 end
              end
              local mean = n > 0 and sum / n or nil
              local low, high = mean and mean * (1 - tol), mean and mean * (1 + tol)
              for i = skip + 1, #rows do
                local v = values[i]
                local kind
                if v == nil then kind = "non_numeric"
                elseif v <= 0 then kind = "not_positive"
                elseif mean and (v < low or v > high) then kind = "out_of_range" end
                if kind then
                  out[#out + 1] = { card = c.card, type = t, call = i - 1, column = col, value = v, mean = mean,
                                    low = low, high = high, kind = kind }
                end
              end
            end
          end
        end
      end
    end
  end
  return out
end

return M
