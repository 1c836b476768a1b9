"""PostgreSQL's memories per scope and status kept as rows are written: `memory_scope_count`
(scope, status, n), so ranking's corpus size (retrieval.scope_facts: a scope's active and stale
memories) is the sum of a few rows, where counting read every memory of the scope (an index
entry each: 1.3 ms at 5k memories a scope, linear in it).

As with the lexical frequencies (0015): rows are only added, +n for memories inserted, -n for
those deleted (statement triggers), -1 and +1 for a memory whose scope or status changes (a row
trigger that fires only then), and a (scope, status) that holds `FOLD_AT` rows is folded into
one, skipping rows another transaction holds; a TRUNCATE of the memories empties it. The table
starts filled from the memories there are. SQLite counts in its own index: nothing to do there.
"""

from django.db import migrations

FOLD_AT = 32

TABLE = (
    "CREATE TABLE IF NOT EXISTS memory_scope_count "
    "(scope varchar(200) NOT NULL, status varchar(10) NOT NULL, n bigint NOT NULL)"
)
INDEX = (
    "CREATE INDEX IF NOT EXISTS memory_scope_count_key ON memory_scope_count (scope, status) "
    "INCLUDE (n)"
)
FOLD = f"""
CREATE OR REPLACE FUNCTION memory_count_fold(scopes text[], statuses text[]) RETURNS void
LANGUAGE sql AS $fn$
WITH full_ AS (
    SELECT DISTINCT t.scope, t.status FROM unnest(scopes, statuses) AS t(scope, status)
    WHERE (SELECT count(*) FROM (SELECT 1 FROM memory_scope_count AS c
        WHERE c.scope = t.scope AND c.status = t.status LIMIT {FOLD_AT}) AS r) >= {FOLD_AT}),
free AS (
    SELECT c.ctid AS at FROM memory_scope_count AS c JOIN full_ AS k
    ON c.scope = k.scope AND c.status = k.status FOR UPDATE OF c SKIP LOCKED),
taken AS (
    DELETE FROM memory_scope_count WHERE ctid = ANY(ARRAY(SELECT at FROM free))
    RETURNING scope, status, n)
INSERT INTO memory_scope_count (scope, status, n)
SELECT scope, status, sum(n) FROM taken GROUP BY 1, 2 HAVING sum(n) <> 0
$fn$
"""
# `added` and `removed` are the statement's transition tables.
COUNT = """
CREATE OR REPLACE FUNCTION memory_count_rows() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    scopes text[];
    statuses text[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH delta AS (SELECT scope, status, count(*) AS n FROM added GROUP BY 1, 2),
        kept AS (INSERT INTO memory_scope_count (scope, status, n) SELECT * FROM delta)
        SELECT array_agg(scope), array_agg(status) FROM delta INTO scopes, statuses;
    ELSE
        WITH delta AS (SELECT scope, status, -count(*) AS n FROM removed GROUP BY 1, 2),
        kept AS (INSERT INTO memory_scope_count (scope, status, n) SELECT * FROM delta)
        SELECT array_agg(scope), array_agg(status) FROM delta INTO scopes, statuses;
    END IF;
    IF scopes IS NOT NULL THEN
        PERFORM memory_count_fold(scopes, statuses);
    END IF;
    RETURN NULL;
END
$fn$
"""
MOVE = """
CREATE OR REPLACE FUNCTION memory_count_move() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO memory_scope_count (scope, status, n)
    VALUES (OLD.scope, OLD.status, -1), (NEW.scope, NEW.status, 1);
    PERFORM memory_count_fold(ARRAY[OLD.scope, NEW.scope], ARRAY[OLD.status, NEW.status]);
    RETURN NULL;
END
$fn$
"""
CLEAR = """
CREATE OR REPLACE FUNCTION memory_count_clear() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    TRUNCATE memory_scope_count;
    RETURN NULL;
END
$fn$
"""
TRIGGERS = (
    "CREATE TRIGGER memory_count_insert AFTER INSERT ON memory_memory REFERENCING NEW TABLE "
    "AS added FOR EACH STATEMENT EXECUTE FUNCTION memory_count_rows()",
    "CREATE TRIGGER memory_count_delete AFTER DELETE ON memory_memory REFERENCING OLD TABLE "
    "AS removed FOR EACH STATEMENT EXECUTE FUNCTION memory_count_rows()",
    "CREATE TRIGGER memory_count_move AFTER UPDATE OF scope, status ON memory_memory "
    "FOR EACH ROW WHEN (OLD.scope IS DISTINCT FROM NEW.scope "
    "OR OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION memory_count_move()",
    "CREATE TRIGGER memory_count_truncate AFTER TRUNCATE ON memory_memory "
    "FOR EACH STATEMENT EXECUTE FUNCTION memory_count_clear()",
)


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    # Writers wait for the count to start (reads go on): no memory is counted twice or not.
    schema_editor.execute("LOCK TABLE memory_memory IN SHARE ROW EXCLUSIVE MODE")
    schema_editor.execute(TABLE)
    schema_editor.execute(INDEX)
    for function in (FOLD, COUNT, MOVE, CLEAR):
        schema_editor.execute(function, None)
    schema_editor.execute(
        "INSERT INTO memory_scope_count (scope, status, n) "
        "SELECT scope, status, count(*) FROM memory_memory GROUP BY 1, 2"
    )
    for trigger in TRIGGERS:
        schema_editor.execute(trigger)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in ("insert", "delete", "move", "truncate"):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS memory_count_{name} ON memory_memory")
    schema_editor.execute("DROP TABLE IF EXISTS memory_scope_count")
    for function in ("rows()", "move()", "clear()", "fold(text[], text[])"):
        schema_editor.execute(f"DROP FUNCTION IF EXISTS memory_count_{function}")


class Migration(migrations.Migration):
    dependencies = [("memory", "0015_postgres_lexical_frequencies")]
    operations = [migrations.RunPython(create, drop)]
