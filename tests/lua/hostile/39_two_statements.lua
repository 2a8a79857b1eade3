-- expect: 2 statements given
aiq.query("SELECT 1; DELETE FROM orders")
