-- Rules of `ascope opjitter`: which operator families get the aiv checks, which columns, and
-- the tolerance around the mean. Override with --rules FILE.
return {
  -- operator types checked (Lua patterns, case-insensitive): the dispatch and combine
  -- families, V2 and V3 alike
  aiv_types = { "MoeDistributeDispatch", "MoeDistributeCombine" },
  aiv_columns = { "aiv_vec_time(us)", "aiv_scalar_time(us)", "aiv_mte2_time(us)", "aiv_mte3_time(us)" },
  tolerance = 0.5,   -- a value outside mean x (1 -/+ tolerance) is an outlier
  skip_calls = 1,    -- the first calls (warm-up) are left out of means, checks and averages
  top_n = 20,
}
