"""PostgreSQL's kept document frequencies (`lex_<kind>_df`, migration 0015) against counting the
rows: after rows are added, rewritten, moved between scopes and removed, in batches and one at
a time, past the fold; and two open transactions writing the same lexeme neither wait on the
other nor lose a count. Runs in a child process on a fresh database of the machine's
PostgreSQL (tests/pg_support.py)."""

from __future__ import annotations

import importlib
import json
import random
import threading
from pathlib import Path

import pytest

BASE = 9_300_000
SCOPES = ["project:a", "project:b"]
STEPS = ("batches", "rewrites and moves", "removals", "emptied")
WORDS = ["billing", "queue", "keys", "vault", "redis", "deploys", "fridays", "the", "runs"]


def _counted(terms: list[str], scopes: list[str]) -> dict[str, int]:
    """The frequencies as the rows say, one count each."""
    from django.db import connection

    out = {}
    with connection.cursor() as cursor:
        for term in terms:
            cursor.execute(
                "SELECT count(*) FROM lex_procedure WHERE tsv @@ to_tsquery('english', %s) "
                "AND scope = ANY(%s)",
                [term, scopes],
            )
            out[term] = int(cursor.fetchone()[0])
    return out


def _most_rows() -> int:
    """The most rows any lexeme holds in a scope."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(max(c), 0) FROM "
            "(SELECT count(*) AS c FROM lex_procedure_df GROUP BY scope, lexeme) AS r"
        )
        return int(cursor.fetchone()[0])


def frequency_findings() -> dict[str, object]:
    from memory import lexical

    rng = random.Random(5)
    terms = [*WORDS, "nothing", "42"]
    seen: dict[str, object] = {}

    def check(step: str) -> None:
        for scopes in ([SCOPES[0]], SCOPES):
            kept = lexical.document_frequencies("procedure", terms, scopes)
            seen[f"{step} {len(scopes)}"] = kept == _counted(terms, scopes)

    def text() -> str:
        return " ".join(rng.choices(WORDS, k=rng.randint(1, 6))) + f" {rng.randint(40, 44)}"

    # Batches with a key twice (its last text counts), then one row a statement, past the fold.
    for _ in range(5):
        rows = [(BASE + rng.randint(0, 60), rng.choice(SCOPES), text()) for _ in range(30)]
        lexical.index_many("procedure", rows)
    check("batches")
    for _ in range(120):
        lexical.index("procedure", BASE + rng.randint(0, 80), rng.choice(SCOPES), text())
    check("rewrites and moves")
    for key in rng.sample(range(81), 40):
        lexical.remove("procedure", BASE + key)
    check("removals")
    seen["rows a lexeme holds in a scope, at most"] = _most_rows()
    for key in range(81):
        lexical.remove("procedure", BASE + key)
    check("emptied")
    return seen


def _writer(scope: str, start: int, opened: threading.Barrier, result: dict[str, str]) -> None:
    """40 rows holding "billing", one a statement, in one transaction left open until the
    other writer has written too; a lock wait longer than 2 s fails it."""
    from django.db import connection, transaction

    from memory import lexical

    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            for i in range(40):
                lexical.index("procedure", start + i, scope, f"billing note {start + i}")
            opened.wait(30)
        result[scope + str(start)] = "ok"
    except Exception as exc:
        result[scope + str(start)] = type(exc).__name__
        opened.abort()
    finally:
        connection.close()


def concurrent_findings() -> dict[str, object]:
    from memory import lexical

    opened, result = threading.Barrier(2), {}
    threads = [
        threading.Thread(target=_writer, args=("project:a", BASE + start, opened, result))
        for start in (1000, 2000)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    found = {
        "writers": sorted(result.values()),
        "billing": lexical.document_frequencies("procedure", ["billing"], ["project:a"]),
    }
    for start in (1000, 2000):
        for i in range(40):
            lexical.remove("procedure", BASE + start + i)
    return found


@pytest.mark.django_db  # nothing here touches SQLite; the findings come from PostgreSQL
def test_kept_frequencies_are_the_counted_ones(tmp_path: Path):
    from tests.cli.runner import cli_env, run_python
    from tests.pg_support import fresh_postgres_database

    code = (
        "import json; from django.core.management import call_command; "
        "from tests.memory import test_lexical_frequencies as t; "
        "call_command('migrate', verbosity=0); "
        "print(json.dumps([t.frequency_findings(), t.concurrent_findings()]))"
    )
    with fresh_postgres_database("plain") as url:
        env = cli_env(tmp_path, DATABASE_URL=url)
        out = run_python(tmp_path, code, env=env).strip().splitlines()[-1]
    seen, concurrent = json.loads(out)
    fold_at = importlib.import_module("memory.migrations.0015_postgres_lexical_frequencies").FOLD_AT
    assert 0 < seen.pop("rows a lexeme holds in a scope, at most") < fold_at
    assert seen == {f"{step} {n}": True for step in STEPS for n in (1, 2)}
    assert concurrent == {"writers": ["ok", "ok"], "billing": {"billing": 80}}
