-- English messages. Keys are shared with zh.lua; formats use string.format.
return {
  ["memory.summary"] = "memory: %d rank(s), %d events, written to %s",
  ["memory.rank_failed"] = "rank %s (%s): %s",
  ["memory.no_trace"] = "%s: no trace_view.json; rows are kept with empty call stacks",
  ["memory.no_ranks"] = "no profiling data found under %s (looked for *_ascend_pt folders with ASCEND_PROFILER_OUTPUT/operator_memory.csv)",
  ["memory.reading"] = "rank %s (%s): reading %s",
  ["memory.suspect"] = "rank %s: %d of %d 'latest' matches point at an operator that had already ended; --match within-or-latest avoids them",
  ["memory.bad_cells"] = "%s: %d value(s) are not numbers and were left empty; first: %s",
  ["memory.trace_warning"] = "%s: %s (left empty)",
  ["memory.failed_ranks"] = "%d rank(s) could not be read; the others' results are written",
  ["memory.outputs"] = "results: %s",
  ["check.failed"] = "check %s failed: %s",
}
