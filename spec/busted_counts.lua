-- Reads busted's JSON output, prints each failure and error, then "PASSED FAILED" on the last
-- line (errors count as failures).
local path = arg[1]
local f = assert(io.open(path, "rb"))
local text = f:read("a")
f:close()
-- busted may print other lines before its JSON document
local start = text:find("{\"", 1, true) or text:find("{", 1, true)
if not start then
  io.stderr:write(text)
  os.exit(1)
end
package.cpath = package.cpath
local ok, core = pcall(require, "ascope_core")
local doc
if ok then
  doc = core.json.decode(text:sub(start))
end
if not doc then
  io.stderr:write("cannot decode busted output\n", text:sub(1, 2000), "\n")
  os.exit(1)
end
local function list(x) return type(x) == "table" and x or {} end
for _, kind in ipairs({ "failures", "errors" }) do
  for _, e in ipairs(list(doc[kind])) do
    local name = e.name or (e.element and e.element.name) or "?"
    local where = e.trace and e.trace.short_src and (e.trace.short_src .. ":" .. tostring(e.trace.currentline)) or ""
    print(("%s: %s %s\n  %s"):format(kind == "failures" and "FAIL" or "ERROR", name, where,
      tostring(e.message):gsub("\n", "\n  ")))
  end
end
print(#list(doc.successes) .. " " .. (#list(doc.failures) + #list(doc.errors)))
