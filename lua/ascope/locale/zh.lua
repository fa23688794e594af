-- 中文消息。键与 en.lua 相同；格式串用 string.format。
return {
  ["memory.summary"] = "内存分析：%d 个 rank，%d 条记录，已写入 %s",
  ["memory.rank_failed"] = "rank %s（%s）：%s",
  ["memory.no_trace"] = "%s：缺少 trace_view.json，记录保留但调用栈为空",
  ["memory.no_ranks"] = "在 %s 下未找到 profiling 数据（需要含 ASCEND_PROFILER_OUTPUT/operator_memory.csv 的 *_ascend_pt 目录）",
  ["memory.reading"] = "rank %s（%s）：读取 %s",
  ["memory.suspect"] = "rank %s：%d / %d 条 latest 匹配指向已结束的算子；可用 --match within-or-latest 避免",
  ["memory.bad_cells"] = "%s：%d 个值不是数字，已置空；第一个：%s",
  ["memory.trace_warning"] = "%s：%s（已置空）",
  ["memory.failed_ranks"] = "%d 个 rank 无法读取；其余 rank 的结果已写出",
  ["memory.outputs"] = "结果：%s",
  ["check.failed"] = "检查 %s 未通过：%s",
}
