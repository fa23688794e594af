--- Opening a profiler database (ascend_pytorch_profiler_*.db, analysis.db) for a reader: the
-- file must be SQLite, whole (not shorter than its header gives) and hold the tables the reader
-- needs. Each failure is its own message naming the file, so a damaged copy is never reported
-- as a database that lacks a table.
local core = require "ascope_core"
local i18n = require "ascope.i18n"

local M = {}

--- The first of tables the open database h lacks (nil when it has them all), or false and a
-- message when its schema cannot be read.
function M.first_missing(h, tables)
  for _, t in ipairs(tables) do
    local has, err = h:has_table(t)
    if has == nil then return false, err end
    if not has then return t end
  end
  return nil
end

--- The handle of path's database, checked to hold every table of tables, or nil and a message:
-- the primitive's (not SQLite, cut short, a schema it cannot read) or, for the first table
-- missing, missing(path, table) (default: "<path>: no <table> table (is this ...?)").
function M.open(path, tables, missing)
  local h, err = core.db.open(path)
  if not h then return nil, err end
  local t, serr = M.first_missing(h, tables)
  if t == nil then return h end
  h:close()
  if t == false then return nil, serr end
  return nil, missing and missing(path, t) or i18n.t("input.db_no_table", path, t)
end

--- Run sql on path's database once it holds tables (M.open): the result, or nil and a message.
function M.query(path, tables, sql)
  local h, err = M.open(path, tables)
  if not h then return nil, err end
  local r, qerr = h:query(sql)
  h:close()
  if not r then return nil, qerr end
  return r
end

return M
