local core = require "ascope_core"
local h = require "helper"

local DB = h.real .. "/msinsight_pytorch_db_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"

describe("db (SQLite, read-only)", function()
  it("returns typed columns from a real ascend_pytorch_profiler_0.db (values from sqlite3)", function()
    local db = assert(core.db.open(DB))
    assert.is_true(db:has_table("TASK"))
    assert.is_false(db:has_table("NO_SUCH"))
    local t = assert(db:query("SELECT startNs, endNs, streamId FROM TASK ORDER BY startNs"))
    assert.equal(550, t.n)
    assert.same({ "startNs", "endNs", "streamId" }, t.names)
    assert.equal("integer", t.columns.startNs:kind())
    assert.equal(1736407067946125104, t.columns.startNs[1])
    assert.equal(1736407067946966160, t.columns.endNs[1])
    assert.equal(2, t.columns.streamId[1])
    local _, _, _, max_end = t.columns.endNs:stats()
    assert.equal(1736407068070967738, max_end)
    local names = assert(db:query([[SELECT s.value AS name, count(*) AS n FROM COMPUTE_TASK_INFO c
      JOIN STRING_IDS s ON s.id = c.name GROUP BY s.value ORDER BY n DESC, name LIMIT 2]]))
    assert.equal("aclnnMuls_MulAiCore_Mul", names.columns.name[1])
    assert.equal(18, names.columns.n[1])
    local one = assert(db:query("SELECT value FROM STRING_IDS WHERE id = ?", 0))
    assert.equal("MEMCPY_ASYNC", one.columns.value[1])
    db:close()
  end)

  it("explains a file that is not a database and a bad query", function()
    local db, err = core.db.open(h.real .. "/rl-insight/memory_data/20260526_085155_ascend_pt/profiler_info_0.json")
    assert.is_nil(db)
    assert.truthy(err:find("not an SQLite database", 1, true))
    local ok = assert(core.db.open(DB))
    local r, qerr = ok:query("SELECT nope FROM TASK")
    assert.is_nil(r)
    assert.truthy(qerr:find("no such column", 1, true))
  end)
end)
