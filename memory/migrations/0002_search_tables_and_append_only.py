"""Vector (sqlite-vec) and lexical (FTS5) tables, and append-only triggers.

Vector and FTS tables exist only on SQLite; PostgreSQL uses other backends.
"""

from django.db import migrations

VECTOR_KINDS = ("memory", "episode", "procedure", "prototype")
FTS_KINDS = ("memory", "episode", "procedure")
APPEND_ONLY = ("memory_event", "memory_feedbackevent")


def _sqlite_statements():
    for kind in VECTOR_KINDS:
        yield (
            f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_{kind} USING vec0("
            "scope text partition key, embedding float[384] distance_metric=cosine)"
        )
    for kind in FTS_KINDS:
        yield (
            f"CREATE VIRTUAL TABLE IF NOT EXISTS fts_{kind} USING fts5("
            "content, scope UNINDEXED, tokenize='porter unicode61 remove_diacritics 2')"
        )
    for table in APPEND_ONLY:
        for action in ("UPDATE", "DELETE"):
            yield (
                f"CREATE TRIGGER IF NOT EXISTS {table}_no_{action.lower()} BEFORE {action} "
                f"ON {table} BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
            )


def _postgres_statements():
    yield """
        CREATE OR REPLACE FUNCTION slowave_append_only() RETURNS trigger AS $$
        BEGIN RAISE EXCEPTION '%% is append-only', TG_TABLE_NAME; END; $$ LANGUAGE plpgsql
    """
    for table in APPEND_ONLY:
        yield (
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION slowave_append_only()"
        )


def create(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = _sqlite_statements() if vendor == "sqlite" else _postgres_statements()
    for statement in statements:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]
    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
