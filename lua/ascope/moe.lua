--- MoE dispatch/combine hang diagnosis across all cards of TARGET_DIR/<n>/.
--     local r = assert(require("ascope.moe").run({ target_dir = "dumps", soc_version = "950" }))
--     for _, c in ipairs(r.cards) do print(c.card, c.stuck_in) end
-- @module ascope.moe
local core = require "ascope_core"
local dump = require "ascope.ascend.dump"
local analysis = require "ascope.analysis.moe"
local rules_mod = require "ascope.rules"
local fs = core.fs
local i18n = require "ascope.i18n"

local function T(key, ...) return i18n.t("moe." .. key, ...) end

local M = {}

function M.rules(user_file)
  local r, err = rules_mod.load("win_layout", user_file)
  if not r then return nil, err end
  for soc, s in pairs(r.socs or {}) do
    if not (r.layouts or {})[s.layout] then
      return nil, ("rules: win_layout.socs[%q] names layout %q, which win_layout.layouts does not have"):format(soc,
        tostring(s.layout))
    end
  end
  return r
end

--- Card folders TARGET_DIR/<n>/ in numeric order.
function M.card_dirs(target)
  target = target:gsub("(.)/+$", "%1")
  local names, err = fs.list(target)
  if not names then return nil, err end
  local out = {}
  for _, n in ipairs(names) do
    if n:match("^%d+$") then
      local st = fs.stat(target .. "/" .. n)
      if st and st.type == "dir" then out[#out + 1] = { card = math.tointeger(tonumber(n)), dir = target .. "/" .. n } end
    end
  end
  table.sort(out, function(a, b) return a.card < b.card end)
  return out
end

local function list_text(t, max)
  local parts = {}
  for i, v in ipairs(t) do
    if max and i > max then
      parts[#parts + 1] = "..."
      break
    end
    parts[#parts + 1] = tostring(v)
  end
  return "[" .. table.concat(parts, ",") .. "]"
end
M.list_text = list_text

local function version_of(op)
  return op and op:match("V(%d)$") and ("V" .. op:match("V(%d)$")) or "V2"
end

local function stuck_side(op)
  if not op then return nil end
  local l = op:lower()
  if l:find("dispatch") then return "dispatch" end
  if l:find("combine") then return "combine" end
end

--- Analyse one card. params: the KEY=VALUE parameters as numbers; t: message function.
-- Returns the card result; problems go to c.anomalies, lines to log(level, text).
function M.card(entry, layout, win_rules, params, log)
  local c = { card = entry.card, dir = entry.dir, anomalies = {} }
  local function anomaly(sev, an, msg)
    c.anomalies[#c.anomalies + 1] = { severity = sev, card = entry.card, analysis = an, message = msg }
    log(sev, msg)
  end
  log("INFO", T("sources", entry.card, table.concat(entry.data.sources, ", ")))
  local win = entry.data.window
  c.op, c.op_source = entry.data.op, entry.data.op_source
  -- 1 input checks
  log("INFO", T("inputs"))
  for _, side in ipairs({ "dispatch", "combine" }) do
    local s = analysis.read_side(win, layout, side)
    c[side] = s
    log("INFO", T("cores", side, s.cores))
    if s.cores == 0 then
      anomaly("ERROR", "1", T("no_core", entry.card, side))
    else
      for _, f in ipairs({ "rank_id", "ep_world_size", "hccl_rank_id", "hccl_ep_world_size", "moe_expert_num", "global_bs",
                           "run_count", "flag" }) do
        log("INFO", T("per_core", side, f, list_text(s.per_core[f], 16)))
        if s.deviations[f] then
          local cores = {}
          for core_i, v in pairs(s.deviations[f]) do cores[#cores + 1] = ("%d=%d"):format(core_i, v) end
          table.sort(cores)
          anomaly("WARNING", "1", T("differs", entry.card, side, f,
            table.concat(cores, ","), s[f]))
        end
      end
      if s.rank_id ~= s.hccl_rank_id then
        anomaly("ERROR", "1", (T("rank_hccl"))
          :format(entry.card, side, s.rank_id, s.hccl_rank_id))
      end
      if s.ep_world_size ~= s.hccl_ep_world_size then
        anomaly("ERROR", "1", (T("ep_hccl"))
          :format(entry.card, side, s.ep_world_size, s.hccl_ep_world_size))
      end
      s.bs = s.ep_world_size ~= 0 and s.global_bs // s.ep_world_size or nil
    end
  end
  local d = c.dispatch
  local ep, moe = d.ep_world_size or 0, d.moe_expert_num or 0
  local shared_cards = params.share_expert_card_count or 0
  c.shared_expert_card = d.rank_id ~= nil and d.rank_id < shared_cards
  c.local_experts = c.shared_expert_card and math.max(params.share_expert_num or 0, 1)
    or ((ep - shared_cards) > 0 and moe // (ep - shared_cards) or 0)
  log("INFO", T(c.shared_expert_card and "shared" or "not_shared", entry.card, c.local_experts))
  c.stuck_op = stuck_side(c.op)
  if c.op then log("INFO", T("raised", c.op, c.op_source or "?")) end
  -- expertIds
  local idx = win_rules.inputs[version_of(c.op)] or win_rules.inputs.V2
  local ids_in = entry.data.inputs[idx.expert_ids]
  local bs = d.bs
  if ids_in then
    local values, shape = ids_in[1], ids_in[2]
    local ids = values:totable()
    local k = shape and shape[2] or (bs and bs > 0 and #ids // bs) or nil
    c.k, c.expert_ids = k, ids
    local limit = moe + (params.sp_moe_num or 0)
    if k and k > 0 then
      local bad = 0
      for row = 0, #ids // k - 1 do
        local seen = {}
        for j = 1, k do
          local e = ids[row * k + j]
          if e < 0 or e >= limit then
            bad = bad + 1
            anomaly("ERROR", "1", T("ids_range", entry.card, row, j - 1, e,
              limit))
          elseif seen[e] then
            bad = bad + 1
            anomaly("ERROR", "1", T("ids_repeat", entry.card, row, e))
          end
          seen[e] = true
        end
      end
      if bad == 0 then log("INFO", T("ids_ok", entry.card,
        list_text(ids, 16), k)) end
    end
  else
    log("WARNING", T("no_ids", entry.card))
    c.k = params.k
  end
  -- 2 execution order
  log("INFO", T("order"))
  local dr, cr = d.run_count, c.combine.run_count
  if dr and cr and dr == cr + 1 then
    c.stuck_in = "dispatch"
  elseif dr and cr and dr == cr then
    c.stuck_in = "combine"
  end
  if c.stuck_in then
    log("WARNING", T("stuck", entry.card, dr, cr, c.stuck_in))
  else
    anomaly("ERROR", "2", T("undetermined",
      entry.card, tostring(dr), tostring(cr)))
  end
  if c.stuck_op and c.stuck_in and c.stuck_op ~= c.stuck_in then
    anomaly("WARNING", "2", T("op_mismatch", entry.card,
      c.stuck_in, c.op))
  end
  -- 3 dispatch status bits
  log("INFO", T("dstatus"))
  local dtotal = c.shared_expert_card and ep or c.local_experts * ep
  analysis.status(win, layout, "dispatch", d, analysis.split(dtotal, d.cores))
  -- 4 combine status bits
  log("INFO", T("cstatus"))
  local cs = c.combine
  local k = c.k
  if k and bs then
    local tokens = analysis.split(bs, cs.cores)
    local slots = {}
    for i, t in ipairs(tokens) do slots[i] = t * (k + (params.share_expert_num or 0)) end
    analysis.status(win, layout, "combine", cs, slots)
  else
    cs.status_error = "k is unknown (no expertIds input): combine slots cannot be counted"
  end
  for _, side in ipairs({ "dispatch", "combine" }) do
    local s = c[side]
    if s.status_error then
      anomaly("ERROR", side == "dispatch" and "3" or "4", T("status_error", entry.card, s.status_error))
    elseif s.missing_slots then
      log("INFO", T("slots", side == "dispatch" and "3.1" or "4.1",
        side, s.total_status_slots, list_text(s.slots_per_core, 24), s.live_status_buffer))
      local cores = {}
      for core_i in pairs(s.missing_slots) do cores[#cores + 1] = core_i end
      table.sort(cores)
      if #cores > 0 then
        anomaly("ERROR", side == "dispatch" and "3" or "4", T("missing", side == "dispatch" and "3.2" or "4.2", entry.card,
          #cores, side, list_text(cores)))
        for _, core_i in ipairs(cores) do
          c.anomalies[#c.anomalies + 1] = { severity = "DETAIL", card = entry.card, analysis = side == "dispatch" and "3" or "4",
            message = T("missing_detail", entry.card, side, core_i,
              list_text(s.missing_slots[core_i]), s.live_status_buffer) }
        end
      end
    end
    if #s.waiting_cores > 0 then
      log("INFO", T("waiting", entry.card, side, list_text(s.waiting_cores, 32)))
    end
  end
  c.inputs = entry.data.inputs
  c.input_index = idx
  return c
end

--- Cross-card checks (6) and the epSendCounts / expandIdx check (7).
function M.cross(cards, params, log)
  local out = { anomalies = {} }
  local function anomaly(sev, an, msg)
    out.anomalies[#out.anomalies + 1] = { severity = sev, card = nil, analysis = an, message = msg }
    log(sev, msg)
  end
  log("INFO", T("cross"))
  for _, spec in ipairs({ { "dispatch", "run_count", "WARNING" }, { "combine", "run_count", "WARNING" },
                          { "dispatch", "moe_expert_num", "ERROR" }, { "combine", "moe_expert_num", "ERROR" },
                          { "dispatch", "global_bs", "WARNING" }, { "combine", "global_bs", "WARNING" } }) do
    local side, field, sev = spec[1], spec[2], spec[3]
    local values = {}
    for _, c in ipairs(cards) do values[#values + 1] = c[side][field] end
    local common = analysis.most_common(values)
    local odd = {}
    for _, c in ipairs(cards) do
      if c[side][field] ~= common then odd[#odd + 1] = ("%d=%s"):format(c.card, tostring(c[side][field])) end
    end
    local key = side .. "_" .. field
    out[key] = { value = common, odd = odd }
    log("INFO", T("cross_values", side, field, list_text(values, 32)))
    if #odd > 0 then
      anomaly(sev, "6", T("cross_odd", side, field, tostring(common),
        table.concat(odd, ", ")))
    end
  end
  -- 7: expected epSendCounts and expandIdx vs the inputs of the cards stuck in combine
  log("INFO", T("seven"))
  local by_rank, ep, shared, local_n = {}, nil, params.share_expert_card_count or 0, nil
  for _, c in ipairs(cards) do
    ep = ep or c.dispatch.ep_world_size
    if not c.shared_expert_card then local_n = local_n or c.local_experts end
    if c.dispatch.rank_id and c.expert_ids and c.k then by_rank[c.dispatch.rank_id] = { ids = c.expert_ids, k = c.k } end
  end
  out.checked = {}
  if ep and local_n then
    local counts, triples = analysis.expected_send_counts(by_rank, ep, shared, local_n)
    out.expected_ep_send_counts, out.expert_triples = counts, triples
    for _, c in ipairs(cards) do
      if c.stuck_in == "combine" then
        local rank = c.dispatch.rank_id
        local send = c.inputs[c.input_index.ep_send_counts]
        local expected = counts[rank]
        if send and expected then
          local got = send[1]:totable()
          c.ep_send_counts = got
          for i = 1, #expected do
            if got[i] ~= expected[i] then
              anomaly("ERROR", "7", T("send_bad",
                c.card, i - 1, tostring(got[i]), expected[i]))
              break
            end
          end
          out.checked[#out.checked + 1] = c.card
        end
        local ex = c.inputs[c.input_index.expand_idx]
        if ex and c.expert_ids then
          local got = ex[1]:totable()
          c.expand_idx = got
          local want = analysis.expected_expand_idx(c.expert_ids)
          for i = 1, #want do
            if got[i] ~= want[i] then
              anomaly("ERROR", "7", T("expand_bad", c.card, i - 1, tostring(got[i]),
                want[i]))
              break
            end
          end
        end
      end
    end
  end
  return out
end

--- START_A2_CLUSTER=1: merge the moe_summary.json of every machine (found anywhere under
-- TARGET_DIR, from runs with START_A2_CLUSTER=0) and run the cross-card checks (6, 7) over all
-- cards, numbered by their global rank (the window's rankId).
function M.merge(opts)
  local log = opts.log or function() end
  local found = {}
  for _, p in ipairs(fs.walk(opts.target_dir)) do
    if p:match("/moe_summary%.json$") then found[#found + 1] = p end
  end
  if #found == 0 then return nil, opts.target_dir .. ": no moe_summary.json of the machines to merge" end
  local res = { cards = {}, failed = {}, anomalies = {}, soc = opts.soc_version, target_dir = opts.target_dir, merged = found }
  local seen = {}
  for _, p in ipairs(found) do
    local doc, err = core.json.load(p)
    if not doc then return nil, err end
    log("INFO", T("merging", p))
    for _, c in pairs(doc.cards or {}) do
      local rank = c.dispatch and c.dispatch.rank_id
      if rank == nil or seen[rank] then
        local msg = ("%s: a card with %s rank id"):format(p, rank == nil and "no" or ("a duplicate (" .. rank .. ")"))
        res.anomalies[#res.anomalies + 1] = { severity = "ERROR", analysis = "merge", message = msg }
        log("ERROR", msg)
      else
        seen[rank] = true
        local card = { card = rank, machine = p, stuck_in = c.stuck_in ~= core.json.null and c.stuck_in or nil,
                       op = c.op, k = c.k, local_experts = c.local_experts, shared_expert_card = c.shared_expert_card,
                       dispatch = c.dispatch, combine = c.combine, expert_ids = c.expert_ids, anomalies = {},
                       input_index = { ep_send_counts = "ep_send_counts", expand_idx = "expand_idx" },
                       inputs = {} }
        -- the inputs the cross check compares, as the columns a dump would give
        if c.ep_send_counts then card.inputs.ep_send_counts = { core.column.new("integer", c.ep_send_counts) } end
        if c.expand_idx then card.inputs.expand_idx = { core.column.new("integer", c.expand_idx) } end
        for _, s in ipairs({ "dispatch", "combine" }) do
          card[s].deviations = card[s].deviations or {}
          card[s].waiting_cores = card[s].waiting_cores or {}
        end
        res.cards[#res.cards + 1] = card
      end
    end
    for _, a in ipairs(doc.anomalies or {}) do res.anomalies[#res.anomalies + 1] = a end
  end
  table.sort(res.cards, function(a, b) return a.card < b.card end)
  res.cross = M.cross(res.cards, opts, log)
  for _, a in ipairs(res.cross.anomalies) do res.anomalies[#res.anomalies + 1] = a end
  return res
end

--- The whole run over the cards of `TARGET_DIR/<n>/`.
-- @tparam table opts `target_dir`, `soc_version` ("910_93", "950", "910B"),
-- `share_expert_card_count`, `sp_moe_num`, `tp_worldsize`, `share_expert_num`, `k`, `rules`, and
-- `log` (`function(level, text)`, called for every line of the analysis)
-- @treturn table `{cards, failed, ...}`; each card has `card`, `stuck_in` and `anomalies`
-- @treturn[2] nil when the input cannot be used at all
-- @treturn[2] string why
function M.run(opts)
  local rules, rerr = M.rules(opts.rules)
  if not rules then return nil, rerr end
  local soc = rules.socs[opts.soc_version]
  if not soc then
    local list = {}
    for k in pairs(rules.socs) do list[#list + 1] = k end
    table.sort(list)
    return nil, ("SOC_VERSION %q is not one of %s"):format(tostring(opts.soc_version), table.concat(list, ", "))
  end
  local layout = rules.layouts[soc.layout]
  local entries, err = M.card_dirs(opts.target_dir)
  if not entries then return nil, err end
  local log = opts.log or function() end
  local res = { cards = {}, failed = {}, anomalies = {}, soc = opts.soc_version, target_dir = opts.target_dir }
  for _, e in ipairs(entries) do
    log("INFO", T("analysing", e.card))
    local data, derr = dump.read_card(e.dir, soc, layout.window_bytes)
    if not data then
      res.failed[#res.failed + 1] = { card = e.card, dir = e.dir, reason = derr }
      res.anomalies[#res.anomalies + 1] = { severity = "ERROR", card = e.card, analysis = "input", message = derr }
      log("ERROR", derr)
    else
      e.data = data
      local ok, c = pcall(M.card, e, layout, rules, opts, log)
      if ok then
        res.cards[#res.cards + 1] = c
        for _, a in ipairs(c.anomalies) do res.anomalies[#res.anomalies + 1] = a end
      else
        local msg = ("%s: %s"):format(e.dir, tostring(c))
        res.failed[#res.failed + 1] = { card = e.card, dir = e.dir, reason = msg }
        res.anomalies[#res.anomalies + 1] = { severity = "ERROR", card = e.card, analysis = "input", message = msg }
        log("ERROR", msg)
      end
    end
  end
  if #res.cards > 0 then
    res.cross = M.cross(res.cards, opts, log)
    for _, a in ipairs(res.cross.anomalies) do res.anomalies[#res.anomalies + 1] = a end
  end
  res.layout = layout
  return res
end

return M
