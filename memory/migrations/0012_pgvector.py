"""pgvector's tables on PostgreSQL (spec §4): one `vector(384)` table per kind, HNSW on cosine.

Creates the `vector` extension when the server has it and this user may; otherwise it says in
one line what to do and leaves the tables out, and the vectors stay with the numpy backend
(memory.vectors picks pgvector only where these tables exist). SQLite: nothing to do.
"""

import sys

from django.db import DatabaseError, migrations, transaction

VECTOR_KINDS = ("memory", "episode", "procedure", "prototype", "passage")
HELP = (
    "slowave: pgvector is not available on this PostgreSQL server (or this user may not "
    "create it), so vectors use the numpy backend (a copy in every process); to keep them in "
    "PostgreSQL install pgvector 0.8+ on the server, run `CREATE EXTENSION vector;` as a "
    "superuser, then `slowave migrate memory 0011 && slowave migrate`."
)


def _extension(connection) -> bool:
    """The extension is installed in this database once this returns True."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        if cursor.fetchone():
            return True
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if not cursor.fetchone():
            return False
        try:
            with transaction.atomic(using=connection.alias):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except DatabaseError:  # not a superuser, nor trusted: the help says what to do
            return False
    return True


def create(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    if not _extension(connection):
        print(HELP, file=sys.stderr)
        return
    for kind in VECTOR_KINDS:
        schema_editor.execute(
            f"CREATE TABLE IF NOT EXISTS pgv_{kind} (key bigint PRIMARY KEY, "
            "scope varchar(200) NOT NULL, embedding vector(384) NOT NULL)"
        )
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS pgv_{kind}_hnsw ON pgv_{kind} "
            "USING hnsw (embedding vector_cosine_ops)"
        )
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS pgv_{kind}_scope ON pgv_{kind} (scope)")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for kind in VECTOR_KINDS:
        schema_editor.execute(f"DROP TABLE IF EXISTS pgv_{kind}")


class Migration(migrations.Migration):
    dependencies = [("memory", "0011_redactions")]
    operations = [migrations.RunPython(create, drop)]
