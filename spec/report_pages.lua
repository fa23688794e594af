-- The four HTML reports that `make check-html` checks and `make screenshots` photographs: memory,
-- timeline and opjitter of the real two-rank sample, and moe of a generated four-card dispatch
-- hang (card 2 sent nothing).
--   local pages = require("report_pages").write(dir, bin, "en")  --> {memory = path, ...}
local core = require "ascope_core"

local M = {}

M.NAMES = { "memory", "timeline", "opjitter", "moe" }

function M.write(dir, bin, lang)
  assert(core.fs.mkdirs(dir))
  local real = "spec/fixtures/real/msinsight_pytorch_text_level0"
  local opts = ("-q --format html --lang %s > /dev/null 2>&1"):format(lang or "en")
  for _, name in ipairs({ "memory", "timeline", "opjitter" }) do
    os.execute(("%s %s %s -o %s/%s %s"):format(bin, name, real, dir, name, opts))
  end
  package.path = "spec/?.lua;" .. package.path
  local mh = require "moe_helper"
  mh.write_cluster(dir .. "/dumps", (mh.cluster({ state = "dispatch_stuck", cards = 4, fault = 2 })), "mc2")
  os.execute(("%s moe TARGET_DIR=%s/dumps SOC_VERSION=950 -o %s/moe %s"):format(bin, dir, dir, opts))
  local pages = {}
  for _, name in ipairs(M.NAMES) do pages[name] = ("%s/%s/%s_report.html"):format(dir, name, name) end
  return pages
end

return M
