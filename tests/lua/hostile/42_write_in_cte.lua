-- expect: refused
aiq.query("WITH gone AS (DELETE FROM orders RETURNING id) SELECT * FROM gone")
