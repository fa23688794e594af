-- Rules of `ascope opjitter`: which operator families get the aiv checks, which columns, and
-- the tolerance around the mean. Override with --rules FILE.
return {
  -- operator types checked (Lua patterns, case-insensitive, anywhere in the type name): left
  -- out, the dispatch/combine kernels plog and graph pick out too (ascope.ascend.moe_kernels:
  -- moe_?distribute_?dispatch and moe_?distribute_?combine, every spelling and version:
  -- MoeDistributeDispatchV2, MoeDistributeCombineV3, moe_distribute_combine)
  -- aiv_types = { "moe_?distribute_?dispatch", "moe_?distribute_?combine" },
  aiv_columns = { "aiv_vec_time(us)", "aiv_scalar_time(us)", "aiv_mte2_time(us)", "aiv_mte3_time(us)" },
  tolerance = 0.5,   -- a value outside mean x (1 -/+ tolerance) is an outlier
  skip_calls = 1,    -- the first calls (warm-up) are left out of means, checks and averages
  top_n = 20,
}
