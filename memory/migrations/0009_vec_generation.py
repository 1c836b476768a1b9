"""`vec_generation`: per vector kind, the highest rowid ever written and a count of writes at or
below it (re-embeddings, backfills, deletes). A process's in-memory copy of a sqlite-vec table
(memory.vectors.vec_mirror) compares the count to notice another process's rewrites."""

from django.db import migrations

VECTOR_KINDS = ("memory", "episode", "procedure", "prototype", "passage")


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS vec_generation ("
            "kind TEXT PRIMARY KEY, rewrites INTEGER NOT NULL, top INTEGER NOT NULL)"
        )
        for kind in VECTOR_KINDS:
            cursor.execute(f"SELECT coalesce(max(rowid), 0) FROM vec_{kind}")
            (top,) = cursor.fetchone()
            cursor.execute(
                "INSERT OR IGNORE INTO vec_generation(kind, rewrites, top) VALUES (%s, 0, %s)",
                [kind, top],
            )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute("DROP TABLE IF EXISTS vec_generation")


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_fts_scope_key")]
    operations = [migrations.RunPython(create, drop)]
