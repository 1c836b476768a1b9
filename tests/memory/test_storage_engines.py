"""The storage parity test: every engine of memory.engines (SQLite, PostgreSQL) does the same
steps alike: through the services that use it (the write and file probes, backups, holders,
doctor's health) and directly (the migration lock, the sequence reset, the checks).

One function, `storage_findings`, runs each step on the database in use and says what it found:
on SQLite in this process, on PostgreSQL (16 with pgvector, and the machine's without it;
tests/pg_support.py) in a child process on a fresh database. SAME is what every engine must
find; OWN is what differs by design (a file or none, the backends each engine holds).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from memory.engines import storage_engine

LOADED_ID = 9_200_000  # far above any real row: a load that kept its ids
# Per engine: the statements that make this session read-only, and undo it.
READ_ONLY = {
    "sqlite": ("PRAGMA query_only = ON", "PRAGMA query_only = OFF"),
    "postgresql": (
        "SET default_transaction_read_only = on",
        "SET default_transaction_read_only = off",
    ),
}


def _outcome(step: Callable[[], object]) -> str:
    try:
        step()
    except Exception as exc:
        return type(exc).__name__
    return "ok"


def _read_only_outcome(step: Callable[[], object]) -> str:
    on, off = READ_ONLY[storage_engine().name]
    with connection.cursor() as cursor:
        cursor.execute(on)
    try:
        return _outcome(step)
    finally:
        with connection.cursor() as cursor:
            cursor.execute(off)


def _next_id_after_a_load() -> int:
    """How far past the loaded row the next new row's id lands (1: right after it)."""
    from memory.models import WorkerRun

    now = timezone.now()
    loaded = WorkerRun(id=LOADED_ID, pass_name="parity", triggered_by="test", started_at=now)
    WorkerRun.objects.bulk_create([loaded])
    storage_engine().reset_sequences([WorkerRun])
    later = WorkerRun.objects.create(pass_name="parity", triggered_by="test", started_at=now)
    WorkerRun.objects.filter(pass_name="parity").delete()
    return later.id - LOADED_ID


def _migration_lock_turns() -> dict[str, bool]:
    """A second holder (another thread, so another connection) waits while the first holds
    the migration lock, and takes it once the first lets go."""
    held, trying, release, taken = (threading.Event() for _ in range(4))

    def first() -> None:
        try:
            with storage_engine().migration_lock():
                held.set()
                release.wait(30)
        finally:
            connections.close_all()

    def second() -> None:
        held.wait(30)
        trying.set()
        try:
            with storage_engine().migration_lock():
                taken.set()
        finally:
            connections.close_all()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    trying.wait(30)
    waited = not taken.wait(0.5)
    release.set()
    took = taken.wait(30)
    for thread in threads:
        thread.join(30)
    return {"the second waits while the first holds it": waited, "then takes it": took}


def _holders() -> list[str] | None:
    """The roles this process registered as while it holds the store (None: no registry)."""
    from memory.services.holders import store_hold, store_holders

    with store_hold(role="parity"):
        database = storage_engine().database_file()
        if database is None:
            return None
        found = store_holders(database=database)
    return [str(info["role"]) for info in found if info.get("pid") == os.getpid()]


def _rolled_back(step: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """What `step` found, its writes rolled back: events are append-only, and the SQLite
    test's database is flushed after it."""
    with transaction.atomic():
        found = step()
        transaction.set_rollback(True)
    return found


def _ranking_reads() -> dict[str, Any]:
    """The engine's reads of ranking over one session's three remembered memories: what they
    return, and in which Python types."""
    from memory.ids import memory_pk
    from memory.models import Memory, Session
    from tests.factories import fresh_scope, open_session, remember

    scope = fresh_scope("parity")
    session = open_session(scope)["session_id"]
    public = remember(scope, session, "The queue retries 3 times", "It backs off", "Then it stops")
    pks = [memory_pk(memory_id) for memory_id in public]
    engine, eligible = storage_engine(), (Memory.Status.ACTIVE, Memory.Status.STALE)
    rows = sorted(engine.memory_rows(pks, eligible))
    content = {row[0]: row[2] for row in rows}
    seqs = [row[-1] for row in rows]
    eligible_n, newest, imported, sessions = engine.scope_facts(
        scope=scope, session_cap=5, statuses=eligible, imported=Session.EndedBy.IMPORT
    )
    uncounted = engine.scope_facts(
        scope=scope, session_cap=0, statuses=eligible, imported=Session.EndedBy.IMPORT
    )[3]
    return {
        "memory rows": [[row[2], row[14] == session] for row in rows],
        "their types": sorted(
            {
                f"{name}: {type(row[at]).__name__}"
                for row in rows
                for name, at in (("created", 10), ("provenance", 11), ("embedding", 12))
            }
            | {f"aware: {rows[0][10].utcoffset() is not None}"}
        ),
        "memories at": sorted(content[pk] for pk, _, _ in engine.memories_at([session], seqs[1:])),
        "memory sessions": set(engine.memory_sessions(pks, eligible).values()) == {session},
        "session lengths": list(engine.session_lengths([session, "sess_none"]).values()),
        "scope facts": [eligible_n, newest, imported, sessions, uncounted],
        "pks": sorted(pks) == [row[0] for row in rows],
    }


def _bulk_writes() -> dict[str, Any]:
    """memory.engines.bulk against the ORM's bulk_create and bulk_update: the same rows (JSON,
    datetimes, foreign keys), keys given back, CASE updates of a float, a text and a JSON
    field."""
    from memory.engines import bulk
    from memory.ids import memory_pk
    from memory.models import Event, Memory, Session
    from tests.factories import fresh_scope, open_session, remember

    scope = fresh_scope("parity")
    opened = open_session(scope)["session_id"]
    session, now = Session.objects.get(pk=opened), timezone.now()

    def events(first: int) -> list[Event]:
        return [
            Event(
                session=session,
                seq=first + i,
                kind="remember",
                content=f"fact {i}",
                metadata={"n": i, "nested": ["a", None]},
                recorded_at=now,
                occurred_at=None if i else now,
            )
            for i in range(2)
        ]

    ours, theirs = bulk.insert(events(10)), Event.objects.bulk_create(events(20))
    fields = ("kind", "content", "metadata", "recorded_at", "occurred_at", "session_id")
    read = {e.pk: e for e in Event.objects.filter(pk__in=[e.pk for e in ours + theirs])}
    same = [[getattr(read[e.pk], f) for f in fields] for e in ours] == [
        [getattr(read[e.pk], f) for f in fields] for e in theirs
    ]
    pks = [memory_pk(m) for m in remember(scope, opened, "One fact", "Another fact")]
    memories = list(Memory.objects.filter(pk__in=pks).order_by("pk"))
    for n, memory in enumerate(memories):
        memory.salience, memory.stale_reason = 0.25 + n, f"reason {n}"
        memory.flags = {"stale_applied": bool(n)}
    bulk.update(memories, ["salience", "stale_reason", "flags"])
    return {
        "inserted as bulk_create inserts": same,
        "keys given back": all(isinstance(e.pk, int) for e in ours) and not ours[0]._state.adding,
        "updated": [
            list(row)
            for row in Memory.objects.filter(pk__in=pks)
            .order_by("pk")
            .values_list("salience", "stale_reason", "flags")
        ],
    }


def storage_findings() -> dict[str, Any]:
    """What each step finds on the database in use."""
    from memory import lexical, vectors
    from memory.services.backup import database_path
    from memory.services.doctor import database_health
    from memory.services.storage import storage_check_in_place, storage_check_writable

    engine = storage_engine()
    health = database_health(quick_check=True)
    return {
        "engine": engine.name,
        "lexical": lexical.get_engine().name,
        "vectors": vectors.backend_name(),
        "doctor's engine": health["engine"],
        "health of its own": sorted(set(health) - set(SHARED_HEALTH)),
        "file": engine.database_file() is not None,
        "backup": _outcome(database_path),
        "holders": _holders(),
        "in place": _outcome(storage_check_in_place),
        "writable": _outcome(storage_check_writable),
        "writable, read-only session": _read_only_outcome(storage_check_writable),
        "next id after a load": _next_id_after_a_load(),
        "migration lock": _migration_lock_turns(),
        "its checks": sorted({status for _, status, _ in engine.checks()}),
        "integrity": engine.integrity(),
        "ranking reads": _rolled_back(_ranking_reads),
        "bulk writes": _rolled_back(_bulk_writes),
    }


SHARED_HEALTH = ("engine", "path", "vector_backend", "embedder", "onnx_export", "schema")
SAME = {
    "in place": "ok",
    "writable": "ok",
    "writable, read-only session": "StorageReadOnly",
    "next id after a load": 1,
    "migration lock": {"the second waits while the first holds it": True, "then takes it": True},
    "its checks": ["ok"],
    "ranking reads": {
        "memory rows": [
            ["The queue retries 3 times", True],
            ["It backs off", True],
            ["Then it stops", True],
        ],
        "their types": [
            "aware: True",
            "created: datetime",
            "embedding: bytes",
            "provenance: dict",
        ],
        "memories at": ["It backs off", "Then it stops"],
        "memory sessions": True,
        "session lengths": [3],
        "scope facts": [3, "Then it stops", False, 1, 0],
        "pks": True,
    },
    "bulk writes": {
        "inserted as bulk_create inserts": True,
        "keys given back": True,
        "updated": [
            [0.25, "reason 0", {"stale_applied": False}],
            [1.25, "reason 1", {"stale_applied": True}],
        ],
    },
}
SQLITE_HEALTH = [
    "file_bytes",
    "journal_mode",
    "quick_check",
    "sqlite_vec_version",
    "sqlite_version",
    "wal_bytes",
]
OWN: dict[str, dict[str, Any]] = {
    "sqlite": {
        "engine": "sqlite",
        "lexical": "fts5",
        "vectors": "sqlite-vec",
        "doctor's engine": "sqlite",
        "health of its own": SQLITE_HEALTH,
        "file": True,
        "backup": "ok",
        "holders": ["parity"],
        "integrity": [],
    },
    "postgresql": {
        "engine": "postgresql",
        "lexical": "tsvector",
        "vectors": "pgvector",
        "doctor's engine": "postgresql",
        "health of its own": [],
        "file": False,
        "backup": "StorageError",  # pg_dump's job
        "holders": None,
        "integrity": None,
    },
}


@pytest.mark.django_db(transaction=True)  # the probes and locks run outside any transaction
def test_sqlite_does_what_the_parity_test_expects() -> None:
    assert storage_findings() == {**SAME, **OWN["sqlite"]}


@pytest.mark.django_db  # nothing here touches SQLite; the findings come from PostgreSQL
@pytest.mark.parametrize(("server", "vectors"), [("pgvector", "pgvector"), ("plain", "numpy")])
def test_postgresql_does_what_the_parity_test_expects(
    tmp_path: Path, server: Literal["pgvector", "plain"], vectors: str
) -> None:
    from tests.cli.runner import cli_env, run_python
    from tests.pg_support import fresh_postgres_database

    code = (
        "import json; from django.core.management import call_command; "
        "from tests.memory.test_storage_engines import storage_findings; "
        "call_command('migrate', verbosity=0); print(json.dumps(storage_findings()))"
    )
    with fresh_postgres_database(server) as url:
        env = cli_env(tmp_path, DATABASE_URL=url)
        seen = json.loads(run_python(tmp_path, code, env=env).strip().splitlines()[-1])
    assert seen == {**SAME, **OWN["postgresql"], "vectors": vectors}
