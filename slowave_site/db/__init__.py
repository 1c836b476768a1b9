"""SQLite backend on pysqlite3 with sqlite-vec loaded on every connection."""
