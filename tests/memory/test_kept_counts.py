"""PostgreSQL's kept counts against counting the rows: the document frequencies
(`lex_<kind>_df`, migration 0015) after rows are added, rewritten, moved between scopes and
removed, in batches and one at a time, past the fold, and two open transactions writing the same
lexeme neither wait on the other nor lose a count; the memories per scope and status
(`memory_scope_count`, migration 0016) after inserts, status and scope changes, deletes and a
TRUNCATE. Runs in a child process on a fresh database of the machine's PostgreSQL
(tests/pg_support.py)."""

from __future__ import annotations

import importlib
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


def scope_count_findings() -> dict[str, bool]:
    from django.db import connection
    from django.utils import timezone

    from memory.engines import storage_engine
    from memory.models import Memory, Session

    rng = random.Random(9)
    statuses = [s.value for s in Memory.Status]
    seen: dict[str, bool] = {}

    def check(step: str) -> None:
        for scope in SCOPES:
            kept = storage_engine().scope_facts(
                scope=scope,
                session_cap=0,
                statuses=(Memory.Status.ACTIVE, Memory.Status.STALE),
                imported=Session.EndedBy.IMPORT,
            )[0]
            counted = Memory.objects.filter(
                scope=scope, status__in=[Memory.Status.ACTIVE, Memory.Status.STALE]
            ).count()
            seen[f"{step} {scope}"] = kept == counted

    def memory(i: int) -> Memory:
        return Memory(
            type="fact",
            content=f"note {i}",
            normalized_hash=f"h{i}",
            scope=rng.choice(SCOPES),
            scope_kind="project",
            status=rng.choice(statuses),
            created_at=timezone.now(),
        )

    Memory.objects.bulk_create([memory(i) for i in range(300)])
    for i in range(300, 340):
        memory(i).save()
    check("inserts")
    pks = list(Memory.objects.values_list("pk", flat=True))
    for _ in range(80):  # one a statement, past the fold
        Memory.objects.filter(pk=rng.choice(pks)).update(status=rng.choice(statuses))
    Memory.objects.filter(pk__in=rng.sample(pks, 100)).update(status=Memory.Status.STALE)
    Memory.objects.filter(pk__in=rng.sample(pks, 50)).update(scope=SCOPES[1])
    Memory.objects.filter(pk__in=rng.sample(pks, 30)).update(salience=2.0)  # no count moves
    check("status and scope changes")
    Memory.objects.filter(pk__in=rng.sample(pks, 120)).delete()
    check("deletes")
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memory_memory CASCADE")
    check("truncated")
    return seen


@pytest.mark.django_db  # nothing here touches SQLite; the findings come from PostgreSQL
def test_kept_counts_are_the_counted_ones(tmp_path: Path):
    from tests.pg_support import findings_on_postgres

    seen, concurrent, counts = findings_on_postgres(
        tmp_path,
        "[t.frequency_findings(), t.concurrent_findings(), t.scope_count_findings()]",
        "from tests.memory import test_kept_counts as t",
        "plain",
    )
    fold_at = importlib.import_module("memory.migrations.0015_postgres_lexical_frequencies").FOLD_AT
    assert 0 < seen.pop("rows a lexeme holds in a scope, at most") < fold_at
    assert seen == {f"{step} {n}": True for step in STEPS for n in (1, 2)}
    assert concurrent == {"writers": ["ok", "ok"], "billing": {"billing": 80}}
    count_steps = ("inserts", "status and scope changes", "deletes", "truncated")
    assert counts == {f"{step} {scope}": True for step in count_steps for scope in SCOPES}
