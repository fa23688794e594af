-- Rules of `ascope plog`: the classifiers of Ascend plog error lines, the fields extracted from
-- them, and what counts as a dispatch/combine kernel. Add a classifier or change one by id with
-- --rules FILE, e.g. return { classifiers = { { id = "my_error", pattern = "MY_CODE", ... } } }
--
-- A classifier: id (stable, used in plog_summary.json), category, title {en, zh}, pattern (a Lua
-- pattern on the message, or a list of them), code = true to match the pattern as a whole word (so "GE" inside
-- "PAGE_SIZE" is not a GE error), sequence = true to need every pattern of the list, in order
-- (searched one after the other: linear in the line, unlike ".-"), modules = a list of log
-- modules whose lines match whatever the message (the GE module), any_level = true to match
-- lines of every level (default: only [ERROR] lines), advice and doc. Categories are independent:
-- a line counts in every category it matches; an [ERROR] line none matches is "unclassified".
-- Patterns run in C in time linear in the line when each quantified item (* + - ?) is followed
-- by something it cannot take, as all below are; another pattern (%b, ".-" before text it could
-- take, ...) still works, through Lua's matcher, more slowly (README: "plog rules and speed").
return {
  classifiers = {
    -- the runtime prints the code as "errcode:(0x800000, ..." or, in its AI Core exception line,
    -- "there is an aicore error exception, core id is N, error code = 0x800000, dump info: ..."
    { id = "bus_error_0x800000", category = "hardware",
      pattern = { "errcode:%(0x800000%f[^%x]", "error code = 0x800000%f[^%x]" },
      title = { en = "bus error 0x800000 (MTE address out of range)", zh = "总线错误 0x800000（MTE 地址越界）" },
      advice = { en = "check the 1520 log; an operator accessed memory outside its buffers",
                 zh = "请进一步查看 1520 日志：算子访问了越界地址" } },
    { id = "ub_link_ras_0x81b18603", category = "hardware", pattern = "ras_code=0x81b18603", any_level = true,
      title = { en = "UB link RAS event 0x81b18603", zh = "UB 链路 RAS 事件 0x81b18603" },
      advice = { en = "a UB link error: check the link and the peer card", zh = "UB 链路故障：检查链路与对端卡" } },
    { id = "ez9999", category = "aicore", pattern = "EZ9999", code = true,
      title = { en = "EZ9999 AI Core / vector core error", zh = "EZ9999 AI Core/Vector 错误" },
      advice = { en = "see the kernel and op named in the following lines", zh = "根据随后日志中的 kernel 与算子名定位" } },
    -- both wordings of the runtime's AI Core exception line, by CANN version: "there is an aicore
    -- error exception, ..." and "there is an exception of aicore error, ..." (aivec likewise)
    { id = "aicore_error_exception", category = "aicore",
      pattern = { "there is an aicore error exception", "there is an aivec error exception",
                  "there is an exception of aicore error", "there is an exception of aivec error" },
      title = { en = "AI Core / vector core error exception (its error code is in the line)",
                zh = "AI Core/Vector 错误异常（错误码见该行）" },
      advice = { en = "the core, error code and pc are in the line; the kernel follows in the next lines",
                 zh = "该行给出 core id、错误码与 pc；随后日志给出 kernel 名" } },
    { id = "aicore_timeout_0x25", category = "aicore", pattern = "retCode=0x25", code = false,
      title = { en = "AI Core timeout (retCode 0x25)", zh = "AI Core 超时（retCode 0x25）" } },
    { id = "aicore_exception_0x26", category = "aicore", pattern = "retCode=0x26",
      title = { en = "AI Core exception (retCode 0x26)", zh = "AI Core 异常（retCode 0x26）" } },
    { id = "vector_timeout_0x30", category = "aicore", pattern = "retCode=0x30",
      title = { en = "vector core timeout (retCode 0x30)", zh = "Vector Core 超时（retCode 0x30）" } },
    { id = "vector_exception_0x31", category = "aicore", pattern = "retCode=0x31",
      title = { en = "vector core exception (retCode 0x31)", zh = "Vector Core 异常（retCode 0x31）" } },
    { id = "aicpu_exception_0x2a", category = "aicpu", pattern = "retCode=0x2a",
      title = { en = "AI CPU exception (retCode 0x2a)", zh = "AI CPU 异常（retCode 0x2a）" } },
    { id = "stream_sync_0x222", category = "runtime", pattern = { "Stream Synchronize failed", "retCode=0x222" },
      sequence = true,
      title = { en = "stream synchronize failed (retCode 0x222)", zh = "Stream 同步失败（retCode 0x222）" } },
    { id = "aicore_kernel_failed", category = "aicore", pattern = "[Aa]icore kernel execute failed",
      title = { en = "Aicore kernel execute failed", zh = "Aicore kernel 执行失败" } },
    { id = "error_happened_origin_op", category = "aicore", pattern = "Error happened, origin_op_name",
      title = { en = "Error happened, origin_op_name", zh = "Error happened, origin_op_name 类报错" } },
    { id = "ee9999", category = "runtime", pattern = "EE9999", code = true,
      title = { en = "EE9999 runtime error (event wait timeout, fftsplus SDMA error)", zh = "EE9999 运行时错误（event wait 超时、fftsplus sdma 错误）" } },
    { id = "ee1001", category = "runtime", pattern = "EE1001", code = true,
      title = { en = "EE1001 runtime parameter error", zh = "EE1001 运行时参数错误" } },
    { id = "ee1002", category = "runtime", pattern = "EE1002", code = true,
      title = { en = "EE1002 runtime error", zh = "EE1002 运行时错误" } },
    { id = "ei0002", category = "hccl", pattern = "EI0002", code = true,
      title = { en = "EI0002 notify wait timeout", zh = "EI0002 notify wait 超时" },
      advice = { en = "a peer did not arrive: look for the card that failed first", zh = "对端未到达：查找最先失败的卡" } },
    { id = "ei0006", category = "hccl", pattern = "EI0006", code = true,
      title = { en = "EI0006 socket establish timeout", zh = "EI0006 建链超时" } },
    { id = "topo_exchange_timeout", category = "hccl", pattern = { "topo exchange", "timeout" }, sequence = true,
      title = { en = "topo exchange timeout", zh = "topo exchange 超时" } },
    { id = "oom", category = "memory", pattern = "EL0004", code = true,
      title = { en = "out of device memory", zh = "内存不足" } },
    { id = "oom_npu", category = "memory", pattern = "NPU out of memory",
      title = { en = "NPU out of memory", zh = "NPU 内存不足" } },
    { id = "torch_npu_error", category = "torch_npu", code = true,
      pattern = { "507014", "507015", "507018", "507033", "507034", "507035", "507048" },
      title = { en = "torch_npu error (507014/507015/507018/507033/507034/507035/507048)",
                zh = "torch_npu 错误（507014/507015/507018/507033/507034/507035/507048）" } },
    { id = "error_cqe", category = "hccl", pattern = "error cqe",
      title = { en = "error cqe (RDMA completion error)", zh = "error cqe（RDMA 完成错误）" } },
    { id = "ge_error", category = "ge", modules = { "GE" }, pattern = "E1%d%d%d%d", code = true,
      title = { en = "GE error (module GE, or an E1xxxx code)", zh = "GE 错误（GE 模块，或 E1xxxx 错误码）" },
      doc = "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/900beta2/index/index.html" },
  },
  -- fields extracted from every classified line (Lua patterns with one capture, case-insensitive
  -- on the key)
  fields = {
    device_id = { "device_id[=:]%s*(%d+)", "deviceId[=:]%s*(%d+)", "device%[(%d+)%]", "dev_id[=:]%s*(%d+)" },
    stream_id = { "stream_id[=:]%s*(%d+)", "streamId[=:]%s*(%d+)" },
    report_stream_id = { "report_stream_id[=:]%s*(%d+)" },
    task_id = { "task_id[=:]%s*(%d+)", "taskId[=:]%s*(%d+)" },
    kernel_name = { "fault kernel_name[=:]%s*([%w_%.%-]+)", "kernel_name[=:]%s*([%w_%.%-]+)" },
    origin_op_name = { "origin_op_name %[([^%]]+)%]", "origin_op_name[=:]%s*([%w_%.%-/]+)" },
    error_code = { "%f[%w](E[ZEILK]%d%d%d%d)%f[%W]", "%f[%w](E%d%d%d%d%d)%f[%W]", "(retCode=0x%x+)", "(errcode:%(0x%x+)",
                   "(error code = 0x%x+)", "(error code = %d+)" },
  },
  -- the order of the fields' columns in error_plog.csv (fields not listed follow, by name)
  field_order = { "device_id", "stream_id", "report_stream_id", "task_id", "kernel_name", "origin_op_name", "error_code" },
  -- kernels of the MoE dispatch/combine family (case-insensitive Lua patterns): left out, the
  -- ones graph compares too (ascope.ascend.moe_kernels: moe_?distribute_?dispatch and
  -- moe_?distribute_?combine, every spelling: MoeDistributeDispatchV2, moe_distribute_combine)
  -- moe_kernels = { "moe_?distribute_?dispatch", "moe_?distribute_?combine" },
  examples = 10, -- lines shown per category (at most 100)
  -- files read: every file under the path whose name matches one of these
  files = { "%.log$", "%.txt$", "^plog", "^device" },
  -- literals a line must hold to be looked at (searched in C at memory speed): the error
  -- level, and the any_level classifiers' texts
  prefilter = { "[ERROR]", "ras_code=" },
}
