-- Window ("win区") layouts of the MoE dispatch/combine kernels: where the diagnostic state sits
-- in the last 1 MiB of the window dump. A new kernel version is a new table here, not new code.
-- Offsets are bytes from the start of that last MiB; fields are int32 word indexes in a
-- per-core block.
local KiB = 1024
local v2 = {
  window_bytes = 1024 * KiB,
  dispatch = {
    status = { [0] = { 0, 64 * KiB }, [1] = { 384 * KiB, 448 * KiB } },   -- status buffers 0 and 1
    info = { 768 * KiB, 818 * KiB },                                      -- per-core info area
  },
  combine = {
    status = { [0] = { 64 * KiB, 384 * KiB }, [1] = { 448 * KiB, 768 * KiB } },
    info = { 818 * KiB, 868 * KiB },
  },
  block_bytes = 512,            -- one per-core block: 128 int32
  fields = { flag = 0, position = 1, rank_id = 2, moe_expert_num = 3, ep_world_size = 4, global_bs = 5,
             run_count = 6, hccl_rank_id = 8, hccl_ep_world_size = 9 },
  in_use_words = 9,             -- a core is in use until the first block whose first 9 words are 0
  waiting_position = 1,         -- run position: 0 still sending, 1 waiting for status, 2 status received
  slot_bytes = 32,              -- a status slot: 8 int32
  slot_word = 0,                -- the slot's word that says whether the peer's data arrived
  not_arrived = 0,
  live_buffer = "other",        -- the live status buffer is the one the flag does not name
}

return {
  -- by SOC_VERSION: where the window is, which layout it uses, and the layout of the combine's
  -- assistInfoForCombine input where it is known ("rank_token_k": int32 triples (source rank,
  -- token, k) grouped by local expert, then source rank, token, k, zero-padded to A x 128 words).
  -- The operator's documentation warns that these values may differ across products,
  -- communication algorithms and versions: a SOC without assist_info gets the values shown as
  -- INFO, never an ERROR.
  socs = {
    ["910_93"] = { window = "workspace", workspace_index = 1, layout = "v2", assist_info = "rank_token_k" },
    ["950"] = { window = "mc2_exception_info", layout = "v2", assist_info = "rank_token_k" },
    ["910B"] = { window = "mc2_exception_info", layout = "v2" },
  },
  layouts = { v2 = v2 },
  -- inputs of the combine kernels (0-based input index): expertIds, the combine's third input
  -- (V1: expandIdx, a per-(token, k) counter; V2 and V3: assistInfoForCombine) and epSendCounts.
  -- V3 kernels shift every index by one. A kernel name without a version suffix is V1.
  inputs = {
    V1 = { expert_ids = 1, expand_idx = 2, ep_send_counts = 3 },
    V2 = { expert_ids = 1, assist_info = 2, ep_send_counts = 3 },
    V3 = { expert_ids = 2, assist_info = 3, ep_send_counts = 4 },
  },
}
