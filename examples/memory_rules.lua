-- A rule override for `ascope memory --rules examples/memory_rules.lua`.
-- Only what you give changes; lists of checks merge by id.
return {
  output = {
    -- make "no positive allocation" fail the run instead of warning
    { id = "positive_size", severity = "error" },
  },
  input = {
    -- a missing trace_view.json is fine for this cluster: drop the warning
    { id = "trace_present", disabled = true },
  },
  match = { default_mode = "within-or-latest" },
  report = { top_n = 5 },
}
