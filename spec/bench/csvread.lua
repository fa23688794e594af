-- One measured step of `make bench`: typed read of operator_memory.csv (all its columns).
local memory_csv = require "ascope.ascend.memory_csv"
local m = assert(memory_csv.read(arg[1]))
io.stderr:write(("csv: %d rows\n"):format(m.n))
