-- Rules of `ascope timeline`: how lanes and device tasks are classified, and the expert rules
-- that turn metrics into findings. Override single entries with --rules FILE (lists merge by
-- id) or edit a copy with --rules-dir.
return {
  lanes = {
    -- Lua patterns matched against "process/thread" lane names (first match wins)
    overlap = "^Overlap Analysis/",
    device = "Ascend Hardware|NPU|AI Core|Device",
    comm = "Communication|HCCL",
    host = "Python|CANN|PyTorch|Thread|MsTx|Plugin|Python3",
  },
  -- device tasks are classified by args["Task Type"], never by lane alone: on real traces the
  -- Ascend Hardware streams also carry notify waits, SDMA copies and event syncs
  task_types = {
    compute = { "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU", "AIV", "AIC", "KERNEL_AICORE",
                "KERNEL_AIVEC", "KERNEL_AICPU", "KERNEL_MIX_AIC", "KERNEL_MIX_AIV" },
    comm = { "Notify Wait", "Notify Record", "SDMA", "SDMA_SQE", "RDMA", "Write Value", "HCCL",
             "COMMUNICATION", "PCIE_DMA_SQE", "DSA_SQE" },
    sync = { "EVENT_WAIT", "EVENT_WAIT_SQE", "EVENT_RECORD", "EVENT_RECORD_SQE", "PLACE_HOLDER_SQE",
             "STARS_COMMON", "FFTS_PLUS", "WRITE_VALUE_SQE" },
  },
  -- tasks without a task type are classified by name (case-insensitive Lua patterns)
  names = {
    comm = { "^hcom_", "allreduce", "allgather", "reducescatter", "broadcast", "alltoall", "send", "recv",
             "notify", "memcpy", "sdma" },
    compute = { "." }, -- anything else on a device lane counts as compute
  },
  patterns = {
    p2p = { "send", "recv", "p2p" },                                 -- PP point-to-point ops
    host_launch = { "launch", "enqueue", "dequeue", "aclnn", "synchronize", "aclrt", "torch_to_npu" },
    dataloader = { "dataloader", "_next_data", "h2d", "hosttodevice", "to_npu" },
    step = "^ProfilerStep#(%d+)",
    prefill = { "prefill" },
    decode = { "decode" },
  },
  top_n = 10,
  -- expert rules: metric (a key of the dashboard or of a finding), condition, severity and texts;
  -- %s in texts gets the metric value
  rules = {
    { id = "critical_path_low", metric = "critical_path_ratio", op = "<", value = 0.80, severity = "warning",
      finding = { en = "critical path covers only %s of the step: bubbles that overlap could hide",
                  zh = "关键路径仅占 step 的 %s：存在可被掩盖的空泡" },
      action = { en = "overlap first (communication/compute, host launch); do not start with single operators",
                 zh = "先做重叠（计算-通信、Host 下发），不要急着优化单算子" } },
    { id = "overlap_low", metric = "overlap_ratio", op = "<", value = 0.70, severity = "warning",
      finding = { en = "only %s of communication is hidden behind compute", zh = "通信仅有 %s 被计算掩盖" },
      action = { en = "run communication on its own stream concurrently with compute, loosen dependencies, more micro-batches",
                 zh = "开启通信-计算并发、放宽依赖、增大 micro-batch；检查通信流是否独立" } },
    { id = "host_bound", metric = "host_launch_gap_ratio", op = ">", value = 0.05, severity = "warning",
      finding = { en = "device gaps covered by host launch/sync take %s of the step: host-bound",
                  zh = "与 Host 下发/同步对齐的 device 空隙占 step 的 %s：Host 下发瓶颈" },
      action = { en = "bind cores, fuse operators or use graph mode, remove host synchronisation points",
                 zh = "绑核、算子融合/图模式减少下发、消除 Host 同步点" } },
    { id = "op_util_low", metric = "op_utilization", op = "<", value = 0.60, severity = "warning",
      finding = { en = "AI Core busy only %s of the step", zh = "算子利用率仅 %s，算力大量空置" },
      action = { en = "find what starves the device: bubbles, pipeline bubbles, host launch, blocked communication",
                 zh = "对照关键路径与 Host/PP 维度定位空置原因" } },
    { id = "lane_idle", metric = "max_lane_idle", op = ">", value = 0.10, severity = "info",
      finding = { en = "a device lane is idle %s of its span", zh = "有 device 泳道空挡比例达 %s" },
      action = { en = "check the idle lane in the timeline: waiting for host, communication or the pipeline",
                 zh = "在 Timeline 中查看该泳道空白段同时刻 Host 在做什么" } },
    { id = "step_jitter", metric = "step_cv", op = ">", value = 0.10, severity = "warning",
      finding = { en = "step time varies by %s (CV)", zh = "step 耗时 CV 为 %s，训练不稳定" },
      action = { en = "analyse the typical step; look for checkpoint, eval or GC in the long steps",
                 zh = "先 per-step 归一取典型 step；长尾排查 ckpt/eval/GC" } },
    { id = "comm_jitter", metric = "comm_jitter", op = ">", value = 0.15, severity = "warning",
      finding = { en = "per-step communication time varies by %s (CV)", zh = "逐 step 通信耗时 CV 为 %s" },
      action = { en = "look for slow links, congestion or HCCL retransmission across ranks",
                 zh = "跨 rank 排查慢链路、拥塞、HCCL 重传" } },
    { id = "long_tail", metric = "long_tail_steps", op = ">", value = 0, severity = "warning",
      finding = { en = "%s step(s) are long-tail (> P95 or > 1.5 x median)", zh = "%s 个长尾 step（> P95 或 > 1.5 倍中位数）" },
      action = { en = "compare a long step with the typical one", zh = "将长尾 step 与典型 step 并排对比" } },
    { id = "bubble_above_theory", metric = "bubble_excess", op = ">", value = 0.05, severity = "warning",
      finding = { en = "pipeline bubble exceeds the (p-1)/(p-1+m) theory by %s", zh = "PP bubble 超过理论值 %s" },
      action = { en = "more micro-batches, balanced stages, interleaved 1F1B",
                 zh = "增大 micro-batch、均衡 stage、interleaved 1F1B" } },
    { id = "hidden_comm_jitter", metric = "hidden_comm_jitter", op = "==", value = 1, severity = "info",
      finding = { en = "step CV is low but communication jitters: compute hides it for now",
                  zh = "step CV 正常但通信抖动大：通信抖动被计算掩盖，是潜在风险" },
      action = { en = "check links before it surfaces", zh = "结合跨 rank 工具查慢链路" } },
    { id = "raw_top_off_path", metric = "raw_top_off_path", op = "==", value = 1, severity = "info",
      finding = { en = "the slowest operator by raw time is not on the critical path",
                  zh = "裸耗时榜首不在关键路径上" },
      action = { en = "optimise the critical-path hotspot list instead", zh = "改打关键路径热点榜首" } },
  },
}
