-- Rules of `ascope graph`: which graph files are read, how node names are found in each kind,
-- and which nodes are compared. Override with --rules FILE.
return {
  -- nodes kept (Lua patterns, case-insensitive): left out, the MoE dispatch/combine kernels plog
  -- judges failures by too (ascope.ascend.moe_kernels: moe_?distribute_?dispatch and
  -- moe_?distribute_?combine, every spelling: MoeDistributeDispatchV2, moe_distribute_combine)
  -- filter = { "moe_?distribute_?dispatch", "moe_?distribute_?combine" },
  -- file kinds: name pattern -> node pattern (captures the node name, in file order); json =
  -- true: the file must be one valid JSON document (a graph cut short or damaged is an error
  -- naming the byte where it stops being JSON, not a card with fewer nodes); ends: a pattern
  -- the file's last bytes must match (a text graph cut short is an error)
  files = {
    { id = "atc_json", name = "^graph_.*%.json$", node = '"name"%s*:%s*"([^"]+)"', json = true },
    { id = "dynamo_py", name = "^dynamo_.*graph.*%.py$", node = "torch%.ops%.([%w_%.]+)" },
    { id = "dynamo_txt", name = "^dynamo_.*graph.*%.p?b?txt$", node = 'name:%s*"([^"]+)"' },
    { id = "ge_onnx", name = "^ge_onnx.*%.pbtxt$", node = 'name:%s*"([^"]+)"' },
    { id = "ge_proto", name = "^ge_proto.*%.txt$", node = 'name:%s*"([^"]+)"' },
  },
  -- where the card number comes from: the file name first, then the folders (Lua patterns)
  card = { "device_?(%d+)", "global_rank_?(%d+)", "rank_?(%d+)", "^(%d+)$" },
}
