-- Layout of the timeline HTML report (see rules/layout_memory.lua for how to edit it).
return {
  title = { en = "ascope timeline report", zh = "ascope 时间线分析报告" },
  sections = {
    { id = "ranks", kind = "rank_table", title = { en = "Ranks", zh = "各 rank 指标" } },
    { id = "findings", kind = "findings", title = { en = "Findings", zh = "诊断结论" } },
    { id = "swimlanes", kind = "swimlanes", title = { en = "Lanes of the typical step", zh = "典型 step 泳道" } },
    { id = "idle", kind = "lane_idle", top = 20, title = { en = "Idle ratio per lane", zh = "各泳道空挡比例" } },
    { id = "overlap", kind = "overlap", title = { en = "Compute and communication", zh = "计算与通信重叠" } },
    { id = "critical_path", kind = "critical_path", title = { en = "Critical path composition", zh = "关键路径构成" } },
    { id = "steps", kind = "steps", title = { en = "Step times", zh = "各 step 耗时" } },
    { id = "compare", kind = "compare", title = { en = "The long step against the typical one", zh = "长尾 step 与典型 step 对比" } },
    { id = "hotspots", kind = "hotspots", title = { en = "Critical-path hotspots", zh = "关键路径热点" } },
    { id = "dashboard", kind = "dashboard", title = { en = "Metrics dashboard", zh = "指标看板" } },
  },
}
