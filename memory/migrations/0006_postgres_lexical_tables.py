"""PostgreSQL's lexical tables (spec §4): a stored English tsvector per row, GIN-indexed.

SQLite keeps its FTS5 tables from 0002; this migration does nothing there.
"""

from django.db import migrations

FTS_KINDS = ("memory", "episode", "procedure")


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for kind in FTS_KINDS:
        schema_editor.execute(
            f"CREATE TABLE IF NOT EXISTS lex_{kind} ("
            "row_id bigint PRIMARY KEY, scope varchar(200) NOT NULL, content text NOT NULL, "
            "tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED)"
        )
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS lex_{kind}_tsv ON lex_{kind} USING gin (tsv)"
        )
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS lex_{kind}_scope ON lex_{kind} (scope)")


class Migration(migrations.Migration):
    dependencies = [("memory", "0005_vector_rows")]
    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
