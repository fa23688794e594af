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
local i18n = require "ascope.i18n"

local M = {}

-- A card's types: gids (each row's group number, an integer column), ngroups, names (type
-- number -> name, in order of first appearance), number (name -> type number) and renumber
-- (group number -> type number; nil when they are the same). A missing type is named "?" and
-- shares the number of a type written "?". Made in C but for a pass over the distinct types:
-- older CANN names each operator its own type, and a table and a column a type and card made
-- 48k types on 16 cards cost 8.6 s against 1.3 s for 5 types. Kept while the card's data is
-- (four bytes a row), for jitter, aiv_checks and the report.
local known = setmetatable({}, { __mode = "k" }) -- card data -> its types
local function info_of(k)
  local info = known[k]
  if info then return info end
  local gids, firsts = column.group(k.type, nil, { rows = false, keys = "first" })
  local values = k.type:take(firsts):totable()
  local names, number, renumber, same = {}, {}, {}, true
  for g = 1, #firsts do
    local name = values[g] or "?"
    local n = number[name]
    if not n then
      n = #names + 1
      names[n], number[name] = name, n
    end
    renumber[g], same = n, same and n == g
  end
  info = { gids = gids, ngroups = #firsts, renumber = not same and renumber or nil, names = names, number = number }
  known[k] = info
  return info
end

-- The reference card's calls laid out as the result's rows: for each of its types in order,
-- calls 0 .. ncalls - 1. Returns ncalls and base (type number -> calls, and the rows before
-- the type's first call).
local function layout(info)
  local per_group, ncalls, base, nrows = {}, {}, {}, 0
  for g = 1, info.ngroups do per_group[g] = 0 end
  local gids = info.gids:totable()
  for r = 1, #gids do per_group[gids[r]] = per_group[gids[r]] + 1 end
  for t = 1, #info.names do ncalls[t] = 0 end
  for g = 1, info.ngroups do
    local t = info.renumber and info.renumber[g] or g
    ncalls[t] = ncalls[t] + per_group[g]
  end
  for t = 1, #info.names do
    base[t] = nrows
    nrows = nrows + ncalls[t]
  end
  return ncalls, base, nrows
end

-- A card's durations placed in the result's rows (result row -> value; false for NA or a call the
-- card does not have): the i-th call of a type on the card goes to the reference's i-th call.
-- Filled first with false, so that the calls, which come in file order and not in the result's,
-- are stored in the table's array part (16 bytes a value, not 40).
local function place(k, ref_number, ncalls, base, nrows, left)
  local info = info_of(k)
  local of_group = {} -- group number -> the reference's type number (nil: not on the reference)
  for g = 1, info.ngroups do
    of_group[g] = ref_number[info.names[info.renumber and info.renumber[g] or g]]
  end
  local refs = info.gids:lookup(of_group):totable()
  local dur, seen, out = k.duration:totable(), {}, {}
  for i = 1, nrows do out[i] = false end
  local other, extra = 0, 0 -- calls of types the reference lacks, calls past its count
  for r = 1, k.n do
    local t = refs[r]
    if t then
      local i = seen[t] or 0
      seen[t] = i + 1
      if i < ncalls[t] then out[base[t] + i + 1] = dur[r] or false else extra = extra + 1 end
    else
      other = other + 1
    end
  end
  if other + extra > 0 then
    left.cards[#left.cards + 1] = k
    left.other, left.extra = left.other + other, left.extra + extra
    for _, name in ipairs(info.names) do
      if not ref_number[name] then left.types[name] = true end
    end
  end
  return out
end

--- cards: list of {card = number, data = kernel_csv result} (data nil for a missing card).
-- Returns {cards, missing, types, rows = {{type, call, max, min, jitter, values = {card -> v}}},
--          avg = {{type, calls, valid, avg_jitter}}, left_out}: the rows follow the reference
-- card's types and calls; left_out (nil when nothing was) counts what other cards have beyond
-- them: {cards = {card data, ...}, other = calls of types the reference lacks, extra = calls
-- past the reference's count of their type, types = {name -> true}}.
function M.jitter(cards, rules)
  local skip = rules.skip_calls or 1
  local ref -- card 0, else the first card read
  for _, c in ipairs(cards) do
    if c.data and (not ref or c.card == 0) then ref = c end
  end
  local res = { rows = {}, avg = {}, reference_card = ref and ref.card }
  if not ref then return res end
  local ref_info = info_of(ref.data)
  local ncalls, base, nrows = layout(ref_info)
  local placed, left = {}, { cards = {}, other = 0, extra = 0, types = {} }
  for k, c in ipairs(cards) do
    placed[k] = c.data and place(c.data, ref_info.number, ncalls, base, nrows, left) or false
  end
  if #left.cards > 0 then res.left_out = left end
  for t, name in ipairs(ref_info.names) do
    local sum, valid = 0, 0
    for i = 0, ncalls[t] - 1 do
      local at = base[t] + i + 1
      local values, mx, mn, nvals = {}, nil, nil, 0
      for k, c in ipairs(cards) do
        local v = placed[k] and placed[k][at] or nil
        values[c.card] = v
        if v then
          nvals = nvals + 1
          if not mx or v > mx then mx = v end
          if not mn or v < mn then mn = v end
        end
      end
      -- rounded to the picosecond: the inputs have at most three decimals of us
      local jitter = nvals >= 2 and math.floor((mx - mn) * 1e6 + 0.5) / 1e6 or nil
      res.rows[#res.rows + 1] = { type = name, call = i, max = mx, min = mn, jitter = jitter, values = values,
                                  n = nvals }
      if i >= skip and jitter then
        sum = sum + jitter
        valid = valid + 1
      end
    end
    res.avg[#res.avg + 1] = { type = name, calls = ncalls[t], valid = valid, avg_jitter = valid > 0 and sum / valid or nil }
  end
  return res
end

-- Violations listed one by one: at most AIV_LISTED of a card, type and column, AIV_LISTED_MOST
-- in all; the others are counted by kind. A column the profiler did not fill (N/A in every
-- call) or a storm of outliers is then a count, not a line per call (2M lines, 7 GB, for 16
-- cards of 80k calls).
M.AIV_LISTED, M.AIV_LISTED_MOST = 20, 2000

-- The aiv checks of one column of one type on a card: values are the column's cells of the
-- type's calls, in order. A violation is listed in out while there is room, and counted in
-- the group of its card, type and column, which goes to unlisted when some were not listed.
local function check_calls(out, unlisted, card, type_, col, values, n, skip, tol)
  local sum, cnt = 0, 0
  for i = skip + 1, n do
    local v = values[i]
    if v then sum, cnt = sum + v, cnt + 1 end
  end
  local mean = cnt > 0 and sum / cnt or nil
  local low, high = mean and mean * (1 - tol), mean and mean * (1 + tol)
  local listed, group = 0, nil
  for i = skip + 1, n do
    local v = values[i]
    local kind
    if v == nil then kind = "non_numeric"
    elseif v <= 0 then kind = "not_positive"
    elseif mean and (v < low or v > high) then kind = "out_of_range" end
    if kind then
      if listed < M.AIV_LISTED and #out < M.AIV_LISTED_MOST then
        listed = listed + 1
        out[#out + 1] = { card = card, type = type_, call = i - 1, column = col, value = v, mean = mean, low = low,
                          high = high, kind = kind }
      else
        group = group or { card = card, type = type_, column = col, count = 0, kinds = {} }
        group.count = group.count + 1
        group.kinds[kind] = (group.kinds[kind] or 0) + 1
      end
    end
  end
  if group then unlisted[#unlisted + 1] = group end
end

--- The rows of some of a card's types: a list of the types kept (in order of first appearance)
-- and type -> integer column of its rows, in file order. keep(name) says which types; a missing
-- type is "?", as in jitter. The rows are picked in C, with no list of every row's type.
function M.rows_by_type(k, keep)
  local info = info_of(k)
  local kept, index = {}, {}
  for t, name in ipairs(info.names) do
    if keep(name) then
      kept[#kept + 1] = name
      index[t] = #kept
    end
  end
  local lists = {}
  if #kept == 0 then return kept, lists end
  local of_group = {} -- group number -> kept index (nil: not kept)
  for g = 1, info.ngroups do of_group[g] = index[info.renumber and info.renumber[g] or g] end
  local _, values, rows = column.group(info.gids:lookup(of_group), nil, { ids = false, missing = false })
  for g, v in ipairs(values) do
    if v[1] then lists[kept[v[1]]] = rows[g] end
  end
  return kept, lists
end

--- The line that stands for the violations of an aiv_checks group that were not listed: how
-- many, and how many of each kind, in the language of the messages.
function M.unlisted_text(g)
  local parts = {}
  for _, k in ipairs({ "non_numeric", "not_positive", "out_of_range" }) do
    if g.kinds[k] then parts[#parts + 1] = i18n.t("opjitter.count." .. k, g.kinds[k]) end
  end
  return i18n.t("opjitter.aiv_more", g.card, g.type, g.column, g.count,
    table.concat(parts, i18n.t("opjitter.count.separator")))
end

--- The aiv checks; returns the violations listed, {card, type, call, column, value, mean, low,
-- high, kind} each, and those not listed, {card, type, column, count, kinds = {kind -> count}}
-- for each card, type and column that had more (see AIV_LISTED).
function M.aiv_checks(cards, rules)
  local out, unlisted = {}, {}
  local skip, tol = rules.skip_calls or 1, rules.tolerance or 0.5
  local is_aiv, verdict = model.matcher(rules.aiv_types), {} -- a name is tested once, not once a card
  local function checked(name)
    if verdict[name] == nil then verdict[name] = is_aiv(name) end
    return verdict[name]
  end
  for _, c in ipairs(cards) do
    if c.data then
      local types, rows = M.rows_by_type(c.data, checked)
      for _, name in ipairs(types) do
        local list = rows[name]
        for _, col in ipairs(rules.aiv_columns) do
          if c.data.aiv_present[col] then
            check_calls(out, unlisted, c.card, name, col, c.data.aiv[col]:take(list):totable(), #list, skip, tol)
          end
        end
      end
    end
  end
  return out, unlisted
end

return M
