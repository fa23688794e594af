--- What the CSV reader could not take as it was, said as warnings: cells that were not numbers
-- (left empty) and rows with another number of fields than the header (their numbers left
-- empty: a row one field short puts its values under the wrong columns). Either way the row
-- is used, so it is a warning, but never a silent one.
local t = require("ascope.i18n").t

--- r: what a reader returned ({bad_cells, first_bad, ragged_rows, first_ragged}); the
-- warnings are appended to list.
return function(path, r, list)
  if (r.bad_cells or 0) > 0 then list[#list + 1] = t("input.bad_cells", path, r.bad_cells, r.first_bad) end
  if (r.ragged_rows or 0) > 0 then list[#list + 1] = t("input.ragged_rows", path, r.ragged_rows, r.first_ragged) end
end
