-- expect: x'); DELETE FROM orders; --
-- A parameter is a value, never SQL: it comes back as the text it was.
local rows = aiq.query("SELECT ? AS v", { "x'); DELETE FROM orders; --" })
error(rows[1].v)
