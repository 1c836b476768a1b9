"""FTS5 rows carry their scope as one indexed token (memory.lexical.scope_key), so lexical
search and document frequencies narrow to a scope inside the index. FTS5 tables cannot gain a
column: each is rebuilt under a new name from the old one's rows, then takes its name."""

from django.db import migrations

from memory.lexical import FTS_KINDS, scope_key

SCHEMA = "content, scope UNINDEXED, scope_key, tokenize='porter unicode61 remove_diacritics 2'"


def rebuild(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        for kind in FTS_KINDS:
            cursor.execute(f"DROP TABLE IF EXISTS fts_{kind}_keyed")
            cursor.execute(f"CREATE VIRTUAL TABLE fts_{kind}_keyed USING fts5({SCHEMA})")
            cursor.execute(f"SELECT rowid, content, scope FROM fts_{kind}")
            rows = [(r, content, scope, scope_key(scope)) for r, content, scope in cursor]
            cursor.executemany(
                f"INSERT INTO fts_{kind}_keyed(rowid, content, scope, scope_key) "
                "VALUES (%s, %s, %s, %s)",
                rows,
            )
            cursor.execute(f"DROP TABLE fts_{kind}")
            cursor.execute(f"ALTER TABLE fts_{kind}_keyed RENAME TO fts_{kind}")


class Migration(migrations.Migration):
    dependencies = [("memory", "0007_memory_passages")]

    operations = [migrations.RunPython(rebuild, migrations.RunPython.noop)]
