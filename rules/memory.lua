-- Rules of `ascope memory`: the input and output checks run on every invocation, and defaults.
-- Edit a copy (ascope --rules-dir DIR) or override single entries with --rules FILE, e.g.
--   return { output = { { id = "positive_size", severity = "error" } }, report = { top_n = 50 } }
--
-- A check: id, check (the kind, below), severity ("error" stops that rank / fails the run,
-- "warning" is reported), and text {en, zh} with %s for the detail.
-- Kinds: input  - file_present {input}, columns_present {input, columns}; input names a kind
--                 of input file (operator_memory, call_stacks, memory_record: see
--                 lua/ascope/ascend/discover.lua), found where the reader finds it
--        The columns of columns_present on operator_memory are the ones the reader requires.
--        output - rows_at_least {min}, numeric {columns}, any_positive {column}
return {
  input = {
    {
      id = "operator_memory_present", check = "file_present", severity = "error",
      input = "operator_memory",
      text = { en = "operator_memory.csv is missing: %s", zh = "缺少 operator_memory.csv：%s" },
    },
    {
      id = "trace_present", check = "file_present", severity = "warning",
      input = "call_stacks",
      text = { en = "trace_view.json is missing, call stacks stay empty: %s",
               zh = "缺少 trace_view.json，调用栈将为空：%s" },
    },
    {
      id = "required_columns", check = "columns_present", severity = "error",
      input = "operator_memory",
      columns = { "Name", "Size(KB)", "Allocation Time(us)", "Duration(us)",
                  "Allocation Total Allocated(MB)", "Device Type" },
      text = { en = "operator_memory.csv lacks required columns: %s",
               zh = "operator_memory.csv 缺少必需列：%s" },
    },
  },
  output = {
    {
      id = "not_empty", check = "rows_at_least", min = 1, severity = "error",
      text = { en = "no memory events were produced: %s", zh = "没有产生任何内存事件：%s" },
    },
    {
      id = "numeric_columns", check = "numeric", severity = "warning",
      columns = { "size_kb", "start_time_ms" },
      text = { en = "non-numeric values in numeric columns: %s", zh = "数值列中有非数值：%s" },
    },
    {
      id = "positive_size", check = "any_positive", column = "size_kb", severity = "warning",
      text = { en = "no allocation has a positive size: %s", zh = "没有任何正大小的内存申请：%s" },
    },
  },
  -- Pools (components) of operator_memory.csv rows. Each pool has its own running totals, so
  -- peaks, counters, charts and live-at-peak are kept per pool. A row belongs to the first pool
  -- whose prefix starts its Name, else to the default (the PyTorch caching allocator).
  components = {
    pools = {
      { name = "GE", prefixes = { "cann::" } },  -- CANN / graph-engine workspace rows
    },
    default = "PTA",
  },
  -- attribution mode when --match is not given: latest | within | within-or-latest
  match = { default_mode = "latest" },
  report = {
    top_n = 20,          -- rows in the top call sites / live-at-peak / leak tables
  },
}
