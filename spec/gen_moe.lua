--- A generated MoE cluster for `make slurm-check`: 12 cards of mc2 window dumps in
-- OUT/<card>/, dispatch stuck because card 5 sent nothing (spec/moe_helper.lua knows the truth).
--   ascope run spec/gen_moe.lua OUT
local top = arg[0]:match("^(.*)/[^/]+$") or "."
package.path = top .. "/?.lua;" .. package.path
local mh = require "moe_helper"
local out = assert(arg[1], "usage: ascope run spec/gen_moe.lua OUT")
mh.write_cluster(out, mh.cluster({ cards = 12, moe = 24, cores = 4, state = "dispatch_stuck", fault = 5 }), "mc2")
