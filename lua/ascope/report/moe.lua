--- Writers of `ascope moe`: the win_*.csv archives, moe_summary.json, moe_report.html, and the
-- verdict's lines.
local core = require "ascope_core"
local writer = require "ascope.report.writer"
local field_html = require "ascope.report.field_html"
local i18n = require "ascope.i18n"
local findings = require "ascope.findings"
local heap = require "ascope.heap"
local list_text = require("ascope.analysis.moe_card").list_text
local json, column = core.json, core.column

local M = {}

local array = require("ascope.fmt").array
local SIDES = { "dispatch", "combine" }
local FIELDS = { "flag", "position", "rank_id", "moe_expert_num", "ep_world_size", "global_bs", "run_count",
                 "hccl_rank_id", "hccl_ep_world_size" }

--- The CSV archives, by name without .csv (files a merged run does not write are absent).
M.CSV_FILES = { "win_data", "win_data_list", "win_status_list", "win_analysis_error", "win_all_card_data",
                "win_all_card_expandidx" }

local function open(path, bom)
  local w, err = core.csv.writer(path, { bom = bom })
  if not w then error(err, 0) end
  return w
end

local function close(w)
  local ok, err = w:close()
  if not ok then error(err, 0) end
end

function M.csvs(res, out, bom)
  local w = open(out .. "/win_data.csv", bom)
  w:row("card", "side", "cores", "flag", "live_status_buffer", "run_count", "rank_id", "hccl_rank_id", "ep_world_size",
    "hccl_ep_world_size", "moe_expert_num", "global_bs", "bs", "k", "local_experts", "shared_expert_card", "stuck_in")
  for _, c in ipairs(res.cards) do
    for _, side in ipairs(SIDES) do
      local s = c[side]
      w:row(c.card, side, s.cores, s.flag, s.live_status_buffer, s.run_count, s.rank_id, s.hccl_rank_id, s.ep_world_size,
        s.hccl_ep_world_size, s.moe_expert_num, s.global_bs, s.bs, c.k, c.local_experts, c.shared_expert_card,
        c.stuck_in or "")
    end
  end
  close(w)
  if res.merged then return M.cross_csvs(res, out, bom) end -- per-core data stays in each machine's files
  w = open(out .. "/win_data_list.csv", bom)
  local header = { "card", "side", "core" }
  for _, f in ipairs(FIELDS) do header[#header + 1] = f end
  header[#header + 1] = "slots"
  header[#header + 1] = "missing_slots"
  w:row(header)
  for _, c in ipairs(res.cards) do
    for _, side in ipairs(SIDES) do
      local s = c[side]
      for i = 1, s.cores do
        local row = { c.card, side, i - 1 }
        for _, f in ipairs(FIELDS) do row[#row + 1] = s.per_core[f][i] end
        row[#row + 1] = s.slots_per_core and s.slots_per_core[i] or ""
        row[#row + 1] = s.missing_slots and s.missing_slots[i - 1] and list_text(s.missing_slots[i - 1]) or ""
        w:row(row)
      end
    end
  end
  close(w)
  -- every status word of the live buffers, written from columns a card and side at a time: the
  -- columns of all cards at once and their concatenation held several times the words (1536
  -- cards: a 1.4 GB peak for a 400 MB file)
  w = open(out .. "/win_status_list.csv", bom)
  w:row("card", "side", "buffer", "slot", "value")
  local slots -- 0 .. n - 1, shared by the buffers of one length (as a rule, all of them)
  local dropped = 0 -- rows of the columns made for the words written, garbage the collector does not see
  for _, c in ipairs(res.cards) do
    for _, side in ipairs(SIDES) do
      local s = c[side]
      if s.status_words then
        local n = #s.status_words
        if not slots or #slots ~= n then
          slots = column.new("integer")
          for i = 0, n - 1 do slots:push(i) end
        end
        w:columns({ column.fill("integer", c.card, n), column.fill("string", side, n),
                    column.fill("integer", s.live_status_buffer, n), slots, s.status_words })
        dropped = dropped + n
        if heap.release(dropped) then dropped = 0 end
      end
    end
  end
  close(w)
  M.cross_csvs(res, out, bom)
end

--- The files that hold the cross-card view (also written when merging machines).
function M.cross_csvs(res, out, bom)
  local w = open(out .. "/win_analysis_error.csv", bom)
  w:row("severity", "card", "analysis", "message")
  for _, a in ipairs(res.anomalies) do w:row(a.severity, a.card or "", a.analysis, a.message) end
  close(w)
  w = open(out .. "/win_all_card_data.csv", bom)
  w:row("card", "dispatch_run_count", "combine_run_count", "dispatch_moe_expert_num", "combine_moe_expert_num",
    "dispatch_global_bs", "combine_global_bs", "stuck_in")
  for _, c in ipairs(res.cards) do
    w:row(c.card, c.dispatch.run_count, c.combine.run_count, c.dispatch.moe_expert_num, c.combine.moe_expert_num,
      c.dispatch.global_bs, c.combine.global_bs, c.stuck_in or "")
  end
  close(w)
  w = open(out .. "/win_all_card_expandidx.csv", bom)
  w:row("card", "expert_ids", "expand_idx", "assist_info", "ep_send_counts", "expected_ep_send_counts", "local_experts",
    "stuck_in")
  for _, c in ipairs(res.cards) do
    local expected = res.cross and res.cross.expected_ep_send_counts and c.rank and res.cross.expected_ep_send_counts[c.rank]
    local function text(list) return list and list_text(list) or "" end
    w:row(c.card, text(c.expert_ids), text(c.expand_idx), text(c.assist_info), text(c.ep_send_counts), text(expected),
      c.local_experts, c.stuck_in or "")
  end
  close(w)
end

local function side_data(s)
  local missing = {}
  for core_i, list in pairs(s.missing_slots or {}) do missing[tostring(core_i)] = array(list) end
  local dev = {}
  for f, by in pairs(s.deviations) do
    dev[f] = {}
    for core_i, v in pairs(by) do dev[f][tostring(core_i)] = v end
  end
  return { cores = s.cores, ran = s.ran ~= false, positions = array(s.per_core and s.per_core.position or s.positions),
           idle_unarrived = s.idle_unarrived, flag = s.flag, live_status_buffer = s.live_status_buffer, run_count = s.run_count,
           rank_id = s.rank_id, hccl_rank_id = s.hccl_rank_id, ep_world_size = s.ep_world_size,
           hccl_ep_world_size = s.hccl_ep_world_size, moe_expert_num = s.moe_expert_num, global_bs = s.global_bs,
           total_status_slots = s.total_status_slots, slots_per_core = array(s.slots_per_core),
           waiting_cores = array(s.waiting_cores), missing_slots = missing, deviations = dev, status_error = s.status_error }
end

function M.sorted_anomalies(res)
  local list = {}
  for i, a in ipairs(res.anomalies) do list[i] = a end
  return findings.sort(list, function(a, b)
    if (a.card or -1) ~= (b.card or -1) then return (a.card or -1) < (b.card or -1) end
    return a.message < b.message
  end)
end

--- The wait-for graph as moe_summary.json holds it: {card, side, cores, waits_for, slots}, and
-- the root cards, the first to fail first.
function M.wait_for_data(res)
  local wait = array()
  local cross = res.cross or {}
  for i, e in ipairs(cross.wait_for or {}) do
    wait[i] = { card = e.card, side = e.side, cores = array(e.cores), waits_for = array(e.waits_for), slots = e.slots,
                unresolved_slots = e.unresolved }
  end
  return wait, array(cross.root_cards)
end

--- The wait-for edges said in few lines: a card alone as "card A (side, cores) waits for ...",
-- the cards that wait on one side for the same cards together (a 384-card hang is one line).
function M.wait_for_lines(edges)
  local groups, order = {}, {}
  for _, e in ipairs(edges) do
    local key = e.side .. ":" .. table.concat(e.waits_for, ",")
    local g = groups[key]
    if not g then
      g = { side = e.side, waits_for = e.waits_for, cards = {}, slots = 0, first = e }
      groups[key], order[#order + 1] = g, key
    end
    g.cards[#g.cards + 1] = e.card
    g.slots = g.slots + e.slots
  end
  local out = {}
  for _, key in ipairs(order) do
    local g = groups[key]
    if #g.cards == 1 then
      local e = g.first
      out[#out + 1] = i18n.t("moe.waits", e.card, e.side, list_text(e.cores, 16), list_text(e.waits_for), e.slots)
    else
      out[#out + 1] = i18n.t("moe.waits_group", list_text(g.cards, 32), #g.cards, g.side, list_text(g.waits_for), g.slots)
    end
  end
  return out
end

--- The verdict that ends a run: who waits for whom, and the root cards ({level, text} lines).
function M.verdict(res)
  local T = function(key, ...) return i18n.t("moe." .. key, ...) end
  local cross = res.cross or {}
  local lines = {}
  if #(cross.wait_for or {}) == 0 then
    lines[1] = { "INFO", T("verdict_healthy") }
    return lines
  end
  lines[1] = { "INFO", T("verdict") }
  for _, text in ipairs(M.wait_for_lines(cross.wait_for)) do lines[#lines + 1] = { "INFO", text } end
  for _, a in ipairs(res.anomalies) do
    if a.analysis == "8" then lines[#lines + 1] = { a.severity, a.message } end
  end
  return lines
end

--- moe_summary.json as plain data.
function M.summary_data(res)
  local cards = {}
  for _, c in ipairs(res.cards) do
    cards[tostring(c.card)] = { stuck_in = c.stuck_in or json.null, stuck_by = c.stuck_by, op = c.op, op_from = c.op_from,
                                time = c.time, assist_info = c.assist_info and array(c.assist_info),
                                k = c.k, local_experts = c.local_experts,
                                shared_expert_card = c.shared_expert_card, dispatch = side_data(c.dispatch),
                                combine = side_data(c.combine), expert_ids = c.expert_ids and array(c.expert_ids),
                                expand_idx = c.expand_idx and array(c.expand_idx),
                                ep_send_counts = c.ep_send_counts and array(c.ep_send_counts), machine = c.machine,
                                dir = c.dir }
  end
  local cross = {}
  if res.cross then
    for k, v in pairs(res.cross) do
      if type(v) == "table" and v.odd then cross[k] = { value = v.value, odd_cards = array(v.odd) } end
    end
    cross.ep_send_counts_checked = array(res.cross.checked)
  end
  local anomalies = array()
  for i, a in ipairs(M.sorted_anomalies(res)) do
    anomalies[i] = { severity = a.severity, card = a.card, analysis = a.analysis, message = a.message }
  end
  local failed = array()
  for i, f in ipairs(res.failed) do failed[i] = { card = f.card, dir = f.dir, reason = f.reason } end
  local wait, roots = M.wait_for_data(res)
  return { soc_version = res.soc, target_dir = res.target_dir, cards = cards, cross_card = cross,
           anomalies = anomalies, failed = failed, wait_for = wait, root_cards = roots }
end

function M.summary(res, path)
  local w, err = writer.open(path)
  if not w then error(err, 0) end
  w:write(json.encode(M.summary_data(res), { indent = 2 }), "\n")
  local ok, cerr = w:close()
  if not ok then error(cerr, 0) end
end

-- A CSV written as UTF-8 rewritten as GBK in place (atomically); a file not written is skipped.
local function to_gbk(path)
  local f = io.open(path, "rb")
  if not f then return true end
  local text = f:read("a")
  f:close()
  local gbk, err = core.iconv.convert(text, "UTF-8", "GBK", path)
  if not gbk then return nil, i18n.t("moe.gbk_failed", err) end
  return core.fs.write(path, gbk)
end

--- Write the outputs of the formats in the set formats into out: the CSV archives (encoding
-- "utf8" with a BOM, or "gbk"), moe_summary.json, moe_report.html. Returns true or nil, message.
function M.write(res, out, formats, encoding)
  local ok, err = pcall(function()
    if formats.csv then M.csvs(res, out, encoding ~= "gbk") end
    if formats.json then M.summary(res, out .. "/moe_summary.json") end
  end)
  if not ok then return nil, tostring(err) end
  if formats.html then
    local parts = field_html.moe_sections(res)
    table.insert(parts, 1, field_html.anomalies_section(M.sorted_anomalies(res)))
    local hok, herr = field_html.write(out .. "/moe_report.html", i18n.t("report.title.moe"), parts)
    if not hok then return nil, herr end
  end
  if formats.csv and encoding == "gbk" then
    for _, f in ipairs(M.CSV_FILES) do
      local gok, gerr = to_gbk(out .. "/" .. f .. ".csv")
      if not gok then return nil, gerr end
    end
  end
  return true
end

local TAG = { INFO = "[INFO]", WARNING = "[WARNING]", ERROR = "[ERROR]" }

--- The console lines before the outputs are written: the machines merged, where the archive goes.
function M.head_lines(res, out)
  local lines = {}
  if res.merged then
    local machines_failed = 0 -- the failures without a card are machines'; with one, ranks no machine holds
    for _, f in ipairs(res.failed) do if not f.card then machines_failed = machines_failed + 1 end end
    lines[1] = "[INFO] " .. i18n.t("moe.merged", #res.merged - machines_failed, #res.cards)
  end
  lines[#lines + 1] = "[INFO] " .. i18n.t("moe.archive", out)
  return lines
end

--- The console summary after the outputs: the counts, and with full the findings (not the
-- slot-by-slot DETAIL lines, which are in win_analysis_error.csv, nor the root cards of 8) and
-- the verdict; diagnose, which lists the findings and the verdict once for all analyses, asks
-- for the counts only.
function M.summary_lines(res, full)
  local shown = {}
  for _, a in ipairs(M.sorted_anomalies(res)) do
    if a.severity ~= "DETAIL" and a.analysis ~= "8" then shown[#shown + 1] = a end
  end
  local lines = { "[INFO] " .. i18n.t("moe.summary", #res.cards, #res.failed, #shown) }
  if full then
    for _, a in ipairs(shown) do lines[#lines + 1] = ("  %s %s"):format(TAG[a.severity] or a.severity, a.message) end
    for _, l in ipairs(M.verdict(res)) do lines[#lines + 1] = ("%s %s"):format(TAG[l[1]] or l[1], l[2]) end
  end
  return lines
end

return M
