-- Data quality over every table: NULLs in each column, duplicate primary
-- keys, and foreign keys that point to no row. One line per check, with
-- "ok" or "check" — a starting point for a nightly job:
--
--   aiq demo/shop.db --lua examples/lua/data_quality.lua -f csv > quality.csv
--
-- It reads the schema through aiq.tables()/aiq.schema(), so it works on any
-- source without changes.

local checks = {}

local function quote(name)
  return '"' .. name:gsub('"', '""') .. '"'
end

local function add(tbl, column, check, problems, rows)
  checks[#checks + 1] = {
    ["table"] = tbl,
    column = column,
    check = check,
    problems = problems,
    rows = rows,
    status = problems == 0 and "ok" or "check",
  }
end

for _, name in ipairs(aiq.tables()) do
  local t = aiq.schema(name)
  -- One query per table counts the non-NULL values of every column.
  local counts = { "count(*) AS total" }
  for i, c in ipairs(t.columns) do
    counts[#counts + 1] = string.format("count(%s) AS c%d", quote(c.name), i)
  end
  local row = aiq.query("SELECT " .. table.concat(counts, ", ") .. " FROM " .. quote(name))[1]
  local total = row.total
  for i, c in ipairs(t.columns) do
    add(name, c.name, "nulls", total - row["c" .. i], total)
  end

  for _, c in ipairs(t.columns) do
    if c.primary_key then
      local dup = aiq.query(string.format(
        "SELECT count(*) - count(DISTINCT %s) AS n FROM %s", quote(c.name), quote(name)))[1].n
      add(name, c.name, "duplicate key", dup, total)
    end
  end

  local keys = t.foreign_keys
  table.sort(keys, function(a, b) return a.columns[1] < b.columns[1] end)
  for _, fk in ipairs(keys) do
    if #fk.columns == 1 and #fk.ref_columns == 1 then
      local col, ref, refcol = quote(fk.columns[1]), quote(fk.ref_table), quote(fk.ref_columns[1])
      local dangling = aiq.query(string.format(
        "SELECT count(*) AS n FROM %s c WHERE c.%s IS NOT NULL AND NOT EXISTS (SELECT 1 FROM %s p WHERE p.%s = c.%s)",
        quote(name), col, ref, refcol, col))[1].n
      add(name, fk.columns[1], "points to " .. fk.ref_table, dangling, total)
    end
  end
end

aiq.table(checks, { "table", "column", "check", "problems", "rows", "status" })
