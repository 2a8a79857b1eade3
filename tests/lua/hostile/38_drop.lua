-- expect: refused: DROP
aiq.query("DROP TABLE customers")
