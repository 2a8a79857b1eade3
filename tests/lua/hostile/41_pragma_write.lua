-- expect: refused: PRAGMA journal_mode
aiq.query("PRAGMA journal_mode = delete")
