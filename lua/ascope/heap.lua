--- Prompt release of columns that were just dropped. A column's values live in C memory that
-- Lua's collector does not count, so dropped columns would wait long after the Lua objects
-- holding them became garbage: a stage that drops big ones collects then. But a full collection
-- walks the whole Lua heap, and a process holding many ranks' results has a large one: one after
-- every stage of every rank made 1024 small ranks of `ascope timeline` quadratic (10.5 s, 1.1 s
-- without). So the collection runs only when the rows dropped outweigh the heap it walks, which
-- keeps its cost in proportion to the work done.
-- @module ascope.heap
local M = {}

--- The bytes a dropped row is taken to free: a few columns of 4 or 8 bytes.
M.ROW_BYTES = 64

--- A full collection when `rows` rows of columns were just dropped and they outweigh the Lua
-- heap (collectgarbage("count")); nothing otherwise. Returns whether it collected.
function M.release(rows)
  if rows * M.ROW_BYTES < collectgarbage("count") * 1024 then return false end
  collectgarbage()
  return true
end

return M
