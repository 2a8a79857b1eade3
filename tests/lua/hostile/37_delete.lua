-- expect: refused: DELETE changes data
aiq.query("DELETE FROM orders")
