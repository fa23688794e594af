-- Rules of `ascope timeline`: how lanes and device tasks are classified, and the expert rules
-- that turn metrics into findings. Override single entries with --rules FILE (lists merge by
-- id) or edit a copy with --rules-dir.
return {
  lanes = {
    -- POSIX extended regular expressions (case-insensitive) matched against "process/thread"
    -- lane names, first match wins in this order: overlap, comm, device, host; a value is one
    -- expression or a list of alternatives
    overlap = "^Overlap Analysis/",
    comm = "Communication|HCCL",
    device = "Ascend Hardware|NPU|AI Core|Device",
    host = "Python|CANN|PyTorch|Thread|MsTx|Plugin",
  },
  -- device tasks are classified by args["Task Type"] first; a missing, "Other" or unknown type
  -- goes by the names below. A device stream that carries a communication task is a
  -- communication stream: all of its tasks are communication (HCCL's reduce kernels say AI_CORE)
  task_types = {
    compute = { "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU", "AIV", "AIC", "KERNEL_AICORE",
                "KERNEL_AIVEC", "KERNEL_AICPU", "KERNEL_MIX_AIC", "KERNEL_MIX_AIV", "DSA_SQE" },
    comm = { "Notify Wait", "Notify Record", "SDMA", "RDMA", "Write Value", "HCCL", "COMMUNICATION" },
    copy = { "MEMCPY_ASYNC", "PCIE_DMA_SQE", "SDMA_SQE" },
    sync = { "EVENT_WAIT", "EVENT_WAIT_SQE", "EVENT_RECORD", "EVENT_RECORD_SQE", "PLACE_HOLDER_SQE",
             "STARS_COMMON", "FFTS_PLUS", "WRITE_VALUE_SQE" },
  },
  -- tasks without a known task type, by name (extended regular expressions, case-insensitive;
  -- tried in the order comm, copy, sync, compute)
  names = {
    comm = { "^hcom_", "allreduce", "allgather", "reducescatter", "broadcast", "alltoall", "notify" },
    copy = { "memcpy" },
    sync = { "^event_(wait|record)" },
    compute = { "." }, -- anything else on a device lane counts as compute
  },
  patterns = {
    -- P2P receive waits: the pipeline bubble (step_trace_time's Bubble), HCCL's names included
    p2p_wait = { "receive", "recv" },
    p2p = { "send", "p2p" },                                           -- other PP point-to-point ops
    host_launch = { "launch", "enqueue", "dequeue", "aclnn", "synchronize", "aclrt", "torch_to_npu" },
    dataloader = { "dataloader", "_next_data", "h2d", "hosttodevice" },
    step = "^ProfilerStep#(%d+)", -- a Lua pattern: it captures the step number
    prefill = { "prefill" },
    decode = { "decode" },
    request = { "^request" }, -- host slices that span one inference request (TTFT/TPOT by the seed's formulas)
    -- a stream waiting for another's event, and the recording: a wait that the last record on
    -- another stream inside its span ends is an edge of the critical path (record -> wait)
    event_wait = { "^event_wait" },
    event_record = { "^event_record" },
  },
  top_n = 10,
  -- a long-tail step takes more than long_tail_median x the median step, or more than the P95
  -- and more than median x (1 + the value of rule step_jitter)
  jitter = { long_tail_median = 1.5 },
  -- expert rules: metric (a key of the dashboard or a derived fact), condition, severity, texts
  -- (%s gets the metric value) and the view that shows the evidence (Timeline, Operator,
  -- Communication)
  rules = {
    { id = "critical_path_low", metric = "critical_path_ratio", op = "<", value = 0.80, severity = "warning",
      view = "Timeline",
      finding = { en = "compute, communication and copies fill only %s of the step: bubbles that overlap could hide",
                  zh = "计算、通信与拷贝仅占 step 的 %s：存在可被掩盖的空泡" },
      action = { en = "overlap first (communication/compute, host launch); do not start with single operators",
                 zh = "先做重叠（计算-通信、Host 下发），不要急着优化单算子" } },
    { id = "comm_on_critical_path", metric = "critical_path_comm_share", op = ">", value = 0.50, severity = "warning",
      view = "Communication",
      finding = { en = "communication makes %s of the critical path: it is not hidden behind compute",
                  zh = "通信占关键路径的 %s：通信未被计算掩盖，主导关键路径" },
      action = { en = "overlap communication with compute (own stream, looser dependencies), shrink or fuse collectives",
                 zh = "通信与计算并发（独立 stream、放宽依赖），减少或合并集合通信" } },
    { id = "overlap_low", metric = "overlap_ratio", op = "<", value = 0.70, severity = "warning", view = "Timeline",
      finding = { en = "only %s of communication is hidden behind compute", zh = "通信仅有 %s 被计算掩盖" },
      action = { en = "run communication on its own stream concurrently with compute, loosen dependencies, more micro-batches",
                 zh = "开启通信-计算并发、放宽依赖、增大 micro-batch；检查通信流是否独立" } },
    { id = "host_bound", metric = "host_launch_gap_median", op = ">", value = 0.05, severity = "warning",
      view = "Timeline",
      finding = { en = "device gaps under host launch/sync (not communication, not pipeline waits) take %s of the step, "
                    .. "in most steps: host-bound",
                  zh = "与 Host 下发/同步对齐（非通信、非流水线等待）的 device 空隙占 step 的 %s，且多数 step 复现：Host 下发瓶颈" },
      action = { en = "bind cores, fuse operators or use graph mode, remove host synchronisation points",
                 zh = "绑核、算子融合/图模式减少下发、消除 Host 同步点" } },
    { id = "dataloader_stall", metric = "dataloader_serial_ratio", op = ">", value = 0.05, severity = "warning",
      view = "Timeline",
      finding = { en = "data loading runs alone, without compute, for %s of the step",
                  zh = "数据加载与计算串行，占 step 的 %s" },
      action = { en = "prefetch (more workers, prefetch_factor), pin memory, overlap the host-to-device copy",
                 zh = "开启预取（增加 worker、prefetch_factor）、pin memory、H2D 拷贝与计算重叠" } },
    { id = "op_util_low", metric = "op_utilization", op = "<", value = 0.60, severity = "warning", view = "Timeline",
      finding = { en = "AI Core busy only %s of the step", zh = "算子利用率仅 %s，算力大量空置" },
      action = { en = "find what starves the device: bubbles, pipeline bubbles, host launch, blocked communication",
                 zh = "对照关键路径与 Host/PP 维度定位空置原因" } },
    { id = "lane_idle", metric = "max_lane_idle_unexplained", op = ">", value = 0.10, severity = "info",
      view = "Timeline",
      finding = { en = "a compute lane is idle %s of its span, not waiting for the pipeline",
                  zh = "计算泳道有 %s 的空挡（非流水线等待）" },
      action = { en = "check the idle lane in the timeline: waiting for host or communication",
                 zh = "在 Timeline 中查看该泳道空白段同时刻 Host 在做什么" } },
    { id = "step_jitter", metric = "step_cv", op = ">", value = 0.10, severity = "warning", view = "Timeline",
      finding = { en = "step time varies by %s (CV)", zh = "step 耗时 CV 为 %s，训练不稳定" },
      action = { en = "analyse the typical step; look for checkpoint, eval or GC in the long steps",
                 zh = "先 per-step 归一取典型 step；长尾排查 ckpt/eval/GC" } },
    { id = "comm_jitter", metric = "comm_jitter", op = ">", value = 0.15, severity = "warning", view = "Communication",
      finding = { en = "per-step communication time varies by %s (CV)", zh = "逐 step 通信耗时 CV 为 %s" },
      action = { en = "look for slow links, congestion or HCCL retransmission across ranks",
                 zh = "跨 rank 排查慢链路、拥塞、HCCL 重传" } },
    { id = "long_tail", metric = "long_tail_steps", op = ">", value = 0, severity = "warning", view = "Timeline",
      finding = { en = "%s step(s) are long-tail (> 1.5 x median, or > P95 and > median x (1 + the step CV threshold))",
                  zh = "%s 个长尾 step（> 1.5 倍中位数，或 > P95 且 > 中位数 x (1 + step CV 阈值)）" },
      action = { en = "compare the long step with the typical one (see what grew)", zh = "将长尾 step 与典型 step 并排对比（见增长项）" } },
    { id = "bubble_above_theory", metric = "bubble_excess", op = ">", value = 0.05, severity = "warning",
      view = "Timeline",
      finding = { en = "pipeline bubble exceeds the (p-1)/(p-1+m) theory by %s", zh = "PP bubble 超过理论值 %s" },
      action = { en = "more micro-batches, balanced stages, interleaved 1F1B",
                 zh = "增大 micro-batch、均衡 stage、interleaved 1F1B" } },
    { id = "hidden_comm_jitter", metric = "hidden_comm_jitter", op = "==", value = 1, severity = "info",
      view = "Communication",
      finding = { en = "step CV is low but communication jitters: compute hides it for now",
                  zh = "step CV 正常但通信抖动大：通信抖动被计算掩盖，是潜在风险" },
      action = { en = "check links before it surfaces", zh = "结合跨 rank 工具查慢链路" } },
    { id = "compute_side_jitter", metric = "compute_side_jitter", op = "==", value = 1, severity = "warning",
      view = "Timeline",
      finding = { en = "step time jitters but communication does not: the jitter comes from the compute/host side",
                  zh = "step 抖动大但通信稳定：抖动来自计算侧（GC / Host 调度 / 非稳态 kernel）" },
      action = { en = "look at what grew in the long step: GC, host scheduling, data loading, unsteady kernels",
                 zh = "查看长尾 step 的增长项：GC、Host 调度、数据加载、非稳态 kernel" } },
    { id = "raw_top_off_path", metric = "raw_top_off_path", op = "==", value = 1, severity = "info", view = "Operator",
      finding = { en = "the slowest operator by raw time is not on the critical path",
                  zh = "裸耗时榜首不在关键路径上" },
      action = { en = "optimise the critical-path hotspot list instead", zh = "改打关键路径热点榜首" } },
  },
}
