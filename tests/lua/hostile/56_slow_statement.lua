-- expect: time limit of 1 s
-- The clock stops a statement that is still running.
aiq.query("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c")
