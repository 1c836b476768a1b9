"""PostgreSQL's document frequencies kept as rows are indexed: `lex_<kind>_df` (scope, lexeme,
n), so a lexeme's frequency in a scope is the sum of its few rows, read off one index, where
counting the rows that hold it read each of them (23 ms of a recall at 211k memories).

Statement-level triggers on `lex_<kind>` add one row per lexeme and scope a statement changed
(+n for rows added, -n for rows removed; a rewrite is both), so concurrent writers never wait
on one another. Once a lexeme holds `FOLD_AT` rows in a scope, the statement that wrote it
folds those rows into one, skipping rows another transaction holds (SKIP LOCKED): nothing
waits and no sum changes; a TRUNCATE empties it too. The table starts filled from the rows
already indexed.
SQLite's FTS5 counts in its own index: nothing to do there.
A data-only load into `lex_<kind>` with triggers enabled counts its rows again on top of a
loaded `lex_<kind>_df`: restore whole dumps (pg_dump creates triggers after the data).
"""

from django.db import migrations

FTS_KINDS = ("memory", "episode", "procedure")
FOLD_AT = 32

# The trigger's rows: `added` and `removed` are the statement's transition tables.
FUNCTION = f"""
CREATE OR REPLACE FUNCTION lex_df_count() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    df text := quote_ident(TG_TABLE_NAME || '_df');
    changed text := CASE TG_OP
        WHEN 'INSERT' THEN 'SELECT scope, tsv, 1 AS n FROM added'
        WHEN 'DELETE' THEN 'SELECT scope, tsv, -1 AS n FROM removed'
        ELSE 'SELECT scope, tsv, 1 AS n FROM added '
            || 'UNION ALL SELECT scope, tsv, -1 AS n FROM removed'
    END;
    scopes text[];
    lexemes text[];
BEGIN
    EXECUTE format(
        'WITH delta AS (SELECT c.scope, lexeme, sum(c.n) AS n FROM (%s) AS c, '
        'unnest(tsvector_to_array(c.tsv)) AS lexeme GROUP BY 1, 2 HAVING sum(c.n) <> 0), '
        'kept AS (INSERT INTO %s (scope, lexeme, n) SELECT scope, lexeme, n FROM delta) '
        'SELECT array_agg(scope), array_agg(lexeme) FROM delta',
        changed, df
    ) INTO scopes, lexemes;
    IF scopes IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE format(
        'WITH full_ AS (SELECT t.scope, t.lexeme FROM unnest($1, $2) AS t(scope, lexeme) '
        'WHERE (SELECT count(*) FROM (SELECT 1 FROM %1$s AS f WHERE f.lexeme = t.lexeme '
        'AND f.scope = t.scope LIMIT {FOLD_AT}) AS r) >= {FOLD_AT}), '
        'free AS (SELECT f.ctid AS at FROM %1$s AS f JOIN full_ AS k '
        'ON f.lexeme = k.lexeme AND f.scope = k.scope FOR UPDATE OF f SKIP LOCKED), '
        'taken AS (DELETE FROM %1$s WHERE ctid = ANY(ARRAY(SELECT at FROM free)) '
        'RETURNING scope, lexeme, n) '
        'INSERT INTO %1$s (scope, lexeme, n) SELECT scope, lexeme, sum(n) FROM taken '
        'GROUP BY 1, 2 HAVING sum(n) <> 0',
        df
    ) USING scopes, lexemes;
    RETURN NULL;
END
$fn$
"""


CLEAR = """
CREATE OR REPLACE FUNCTION lex_df_clear() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    EXECUTE format('TRUNCATE %s', quote_ident(TG_TABLE_NAME || '_df'));
    RETURN NULL;
END
$fn$
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FUNCTION, None)  # no parameters: its % are format()'s
    schema_editor.execute(CLEAR, None)
    for kind in FTS_KINDS:
        table = f"lex_{kind}"
        # Writers wait for the count to start (and reads go on): no row is counted twice or not.
        schema_editor.execute(f"LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")
        schema_editor.execute(
            f"CREATE TABLE IF NOT EXISTS {table}_df "
            "(scope varchar(200) NOT NULL, lexeme text NOT NULL, n bigint NOT NULL)"
        )
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {table}_df_lexeme ON {table}_df (lexeme, scope) "
            "INCLUDE (n)"
        )
        schema_editor.execute(
            f"INSERT INTO {table}_df (scope, lexeme, n) SELECT scope, lexeme, count(*) "
            f"FROM {table}, unnest(tsvector_to_array(tsv)) AS lexeme GROUP BY 1, 2"
        )
        for event, referencing in (
            ("INSERT", "NEW TABLE AS added"),
            ("UPDATE", "OLD TABLE AS removed NEW TABLE AS added"),
            ("DELETE", "OLD TABLE AS removed"),
        ):
            schema_editor.execute(
                f"CREATE TRIGGER {table}_df_{event.lower()} AFTER {event} ON {table} "
                f"REFERENCING {referencing} FOR EACH STATEMENT EXECUTE FUNCTION lex_df_count()"
            )
        schema_editor.execute(
            f"CREATE TRIGGER {table}_df_truncate AFTER TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION lex_df_clear()"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for kind in FTS_KINDS:
        for event in ("insert", "update", "delete", "truncate"):
            schema_editor.execute(f"DROP TRIGGER IF EXISTS lex_{kind}_df_{event} ON lex_{kind}")
        schema_editor.execute(f"DROP TABLE IF EXISTS lex_{kind}_df")
    schema_editor.execute("DROP FUNCTION IF EXISTS lex_df_count()")
    schema_editor.execute("DROP FUNCTION IF EXISTS lex_df_clear()")


class Migration(migrations.Migration):
    dependencies = [("memory", "0014_store_embedder")]
    operations = [migrations.RunPython(create, drop)]
