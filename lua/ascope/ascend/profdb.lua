--- Opening a profiler database (ascend_pytorch_profiler_*.db, analysis.db) for a reader: the
-- file must be SQLite, whole (not shorter than its header gives) and hold the tables the reader
-- needs. Each failure is its own message naming the file, so a damaged copy is never reported
-- as a database that lacks a table.
local core = require "ascope_core"
local i18n = require "ascope.i18n"

local M = {}

--- SQL for expression x as a whole number, else NULL: an INTEGER, a REAL without a fraction, or
-- TEXT of digits (msprof declares some time columns TEXT: PYTORCH_API.startNs). Anything else
-- ('abc', 2.5, a blob) is no number, where SQLite's own CAST would make it 0 or 2 in silence.
function M.whole(x)
  return (([[(CASE WHEN typeof(@) = 'integer' THEN @
  WHEN typeof(@) = 'real' AND @ = CAST(@ AS INTEGER) THEN CAST(@ AS INTEGER)
  WHEN typeof(@) = 'text' AND @ <> '' AND @ NOT GLOB '*[^0-9]*'
   AND (length(@) < 19 OR length(@) = 19 AND @ <= '9223372036854775807') THEN CAST(@ AS INTEGER) END)]])
    :gsub("@", x))
end

--- Is path a database (by its name, as discovery found it)?
function M.is_db(path) return path ~= nil and path:match("%.db$") ~= nil end

--- The names, one a key: a STRING_IDS without a primary key may name an id twice, and a join
-- on it would count each row twice. Put before a query as its WITH clause; join on S.
M.STRINGS = "WITH S AS (SELECT id, MIN(value) AS value FROM STRING_IDS GROUP BY id)\n"

--- The cells of tbl's columns (a list of names) that hold a value but no whole number (M.whole),
-- or with nulls, no value either: how many, and the first as "table T, row N, column C: value"
-- (nil when none); or nil, message.
function M.not_whole(h, tbl, columns, nulls)
  local count, first = {}, {}
  for i, c in ipairs(columns) do
    local v = M.whole('"' .. c .. '"')
    local bad = nulls and v .. " IS NULL" or ('"%s" IS NOT NULL AND %s IS NULL'):format(c, v)
    count[i] = ("SUM(%s)"):format(bad)
    first[i] = ([[SELECT rowid AS r, '%s' AS c, quote(CASE WHEN typeof("%s") IN ('text', 'blob') THEN substr("%s", 1, 40) ELSE "%s" END) AS v
  FROM "%s" WHERE %s]]):format(c, c, c, c, tbl, bad)
  end
  local r, err = h:query(("SELECT %s AS n FROM \"%s\""):format(table.concat(count, " + "), tbl))
  if not r then return nil, err end
  local n = r.columns.n[1] or 0
  if n == 0 then return 0 end
  local f, ferr = h:query(table.concat(first, "\nUNION ALL\n") .. "\nORDER BY r LIMIT 1")
  if not f then return nil, ferr end
  return n, ("table %s, row %d, column %s: %s"):format(tbl, f.columns.r[1], f.columns.c[1], f.columns.v[1])
end

--- The startNs and endNs cells of the tables (a list; a false entry is skipped) that are no whole
-- number (with nulls, or none), over all of them: how many and the first (see M.not_whole); or
-- nil, message. h stays open either way.
function M.times_not_whole(h, tables, nulls)
  local bad, first = 0, nil
  for _, t in ipairs(tables) do
    if t then
      local n, f = M.not_whole(h, t, { "startNs", "endNs" }, nulls)
      if not n then return nil, f end
      bad, first = bad + n, first or f
    end
  end
  return bad, first
end

--- How many rows of tbl name, in column, a string id STRING_IDS does not hold (their names
-- come out empty or as the number); nil, message when the query fails.
function M.unnamed(h, tbl, column)
  local r, err = h:query(('SELECT COUNT(*) AS n FROM "%s" WHERE "%s" IS NOT NULL AND "%s" NOT IN (SELECT id FROM STRING_IDS)')
    :format(tbl, column, column))
  if not r then return nil, err end
  return r.columns.n[1] or 0
end

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

return M
