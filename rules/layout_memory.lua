-- Layout of the memory HTML report: the sections in order, what each shows, and its title.
-- Copy this file, edit it and pass it with --layout FILE (sections merge by id: change a title,
-- set top, or disabled = true; `order` lists the ids to show them in another order).
return {
  title = { en = "ascope memory report", zh = "ascope 内存分析报告" },
  sections = {
    { id = "overview", kind = "rank_table", title = { en = "Ranks", zh = "各 rank 概览" },
      columns = { "role", "rank", "events", "allocations", "releases", "match_rate", "suspect_matches",
                  "peak_component", "peak_mb", "peak_time_ms", "partial" } },
    { id = "peaks", kind = "peak_bars", title = { en = "Peak allocated memory per rank", zh = "各 rank 峰值内存" } },
    { id = "over_time", kind = "memory_over_time", series = { "allocated", "reserved", "active" },
      title = { en = "Memory over time, per pool", zh = "各内存池随时间变化" } },
    { id = "process", kind = "process_memory", series = { "allocated", "reserved", "active" },
      title = { en = "Process memory (memory_record.csv)", zh = "进程内存（memory_record.csv）" } },
    { id = "live", kind = "live_at_peak", top = 15, title = { en = "Live at the peak, by call site", zh = "峰值时刻存活内存（按调用点）" } },
    { id = "no_stack", kind = "without_stack", top = 5,
      title = { en = "Allocated without a call stack", zh = "无调用栈的内存申请" } },
    { id = "sites", kind = "top_sites", top = 15, title = { en = "Top call sites by bytes allocated", zh = "申请内存最多的调用点" } },
    { id = "leaks", kind = "leaks", top = 15, title = { en = "Never released (leak suspects)", zh = "未释放的内存（疑似泄漏）" } },
  },
}
