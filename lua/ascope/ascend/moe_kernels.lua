--- The MoE dispatch/combine kernels by name, one definition for the jobs that pick them out:
-- plog (did a card fail on one), graph (the nodes compared) and opjitter (the types whose aiv
-- columns are checked). Lua patterns, matched
-- case-insensitively anywhere in a name (ascope.analysis.timeline.model.matcher), so that every
-- spelling counts: MoeDistributeDispatch, MoeDistributeCombineV2, moe_distribute_dispatch,
-- aclnnMoeDistributeDispatchV2, npu_moe_distribute_combine_v2, MOE_DISTRIBUTE_COMBINE.
-- @module ascope.ascend.moe_kernels
local M = {}

M.PATTERNS = { "moe_?distribute_?dispatch", "moe_?distribute_?combine" }

--- The patterns of a rule key that may be left out: the rule's own when given, else these.
function M.or_default(patterns) return patterns or M.PATTERNS end

return M
