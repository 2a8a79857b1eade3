-- expect: row limit of 1,500 rows per run
local q = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 900) SELECT x FROM c"
for i = 1, 10 do pcall(aiq.query, q) end
