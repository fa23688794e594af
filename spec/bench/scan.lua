-- One measured step of `make bench`: json.scan of a trace with the memory job's cpu_op filter
-- and five projected fields.
local json = require("ascope_core").json
local r = assert(json.scan(arg[1], {
  where = { cat = "cpu_op", ["args.Call stack"] = true },
  fields = { name = "string", ts = "us", dur = "us", tid = "integer", ["args.Call stack"] = "string" },
}))
io.stderr:write(("scan: %d of %d events kept\n"):format(r.n, r.events))
