--- Write a command's output files in parallel. The outputs are dealt into one group per job,
-- heaviest first, each to the lightest group so far; each group is one process, and the calling
-- process writes one group itself, so that no process is forked for a few kilobytes of JSON and
-- the parent does not sit idle beside its workers.
--
--   outputs.write({
--     { path = "out/events.csv", weight = 4, write = function(path) return csv_writer(res, path) end },
--     { path = "out/summary.json", write = function(path) return json_writer(res, path) end },
--   }, jobs)   --> true, or nil and the messages of the outputs that could not be written
local core = require "ascope_core"
local log = require "ascope.log"
local i18n = require "ascope.i18n"

local M = {}

--- Deal outputs (each with weight, default 1) into at most `jobs` groups.
function M.groups(outputs, jobs)
  local n = math.max(1, math.min(jobs, #outputs))
  local order = {}
  for i = 1, #outputs do order[i] = i end
  table.sort(order, function(a, b)
    local wa, wb = outputs[a].weight or 1, outputs[b].weight or 1
    if wa ~= wb then return wa > wb end
    return a < b
  end)
  local groups, load = {}, {}
  for g = 1, n do groups[g], load[g] = {}, 0 end
  for _, i in ipairs(order) do
    local best = 1
    for g = 2, n do
      if load[g] < load[best] then best = g end
    end
    local grp = groups[best]
    grp[#grp + 1] = outputs[i]
    load[best] = load[best] + (outputs[i].weight or 1)
  end
  return groups
end

function M.write(outputs, jobs)
  if #outputs == 0 then return true end
  -- the output folders first, once each: a folder that cannot be made is one message, not one
  -- per output file
  local made = {}
  for _, o in ipairs(outputs) do
    local dir = o.path:match("^(.*)/[^/]+$")
    if dir and dir ~= "" and not made[dir] then
      local ok, err = core.fs.mkdirs(dir)
      if not ok then return nil, err end
      made[dir] = true
    end
  end
  jobs = require("ascope.workers").count(jobs)
  -- The workers keep their collector: the report builders make garbage in proportion to the
  -- ranks (3.5 MB a rank for the memory HTML), which a stopped collector kept to the end (512
  -- ranks: 1.8 GB). Marking copies the inherited heap's pages it touches, but par.map forks
  -- from a collected heap, so that is the live results only.
  local _, errs = core.par.map(M.groups(outputs, jobs), function(group)
    local failed = {}
    for _, o in ipairs(group) do
      log.stage("%s", i18n.t("report.writing", o.path))
      local ok, err = o.write(o.path)
      if not ok then failed[#failed + 1] = tostring(err) end
    end
    if #failed > 0 then error(table.concat(failed, "; "), 0) end
    return true
  end, { jobs = jobs, here = true })
  local msgs = {}
  for _, e in pairs(errs) do msgs[#msgs + 1] = tostring(e) end
  if #msgs > 0 then
    table.sort(msgs)
    return nil, table.concat(msgs, "; ")
  end
  return true
end

return M
