-- expect: is never allowed
aiq.query("ATTACH DATABASE 'other.db' AS other")
