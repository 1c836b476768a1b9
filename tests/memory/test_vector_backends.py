"""The numpy vector backend gives sqlite-vec's answers and stays in step with the database."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection, transaction
from django.utils import timezone

from memory.embeddings import from_blob
from memory.engines import storage_engine
from memory.models import Memory, VectorRow
from memory.schemas import ActivateIn, RememberIn
from memory.services.activate import session_activate
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo
from memory.vectors.numpy_index import NumpyIndex
from memory.vectors.sqlite_vec import SqliteVecIndex

# Commit and rollback are under test, so most tests run outside the test-wide transaction.
committing = pytest.mark.django_db(transaction=True)
SCOPES = ["project:a", "project:b", "project:c"]
BASE = 9_000_000  # keys far above any real row: the sqlite-vec tables outlive a test's flush


@pytest.fixture(autouse=True)
def _clean_vec_tables():
    yield
    with connection.cursor() as cursor:
        for kind in ("memory", "episode"):
            cursor.execute(f"DELETE FROM vec_{kind} WHERE rowid >= %s", [BASE])


def _vectors(n: int, seed: int = 7) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _ids(hits) -> list[int]:
    return [hit[0] for hit in hits]


def fill_for_parity(indexes, kind: str = "memory") -> None:
    for key, vector in enumerate(_vectors(300), start=BASE):
        for index in indexes:
            index.upsert(kind, key, SCOPES[key % 3], vector)


def check_same_neighbours(reference, candidate, kind: str = "memory") -> None:
    """The parity test: over the rows `fill_for_parity` wrote to both, `candidate` gives the
    exact `reference`'s answers, ids in order and cosines, per scope set, over every scope,
    and batched. Run on other engines too (tests/memory/test_pgvector_index.py)."""
    for query in _vectors(12, seed=99):
        for scopes in (SCOPES[:1], SCOPES[1:], SCOPES):
            expected = reference.knn(kind, query, 20, scopes)
            got = candidate.knn(kind, query, 20, scopes)
            assert _ids(got) == _ids(expected)
            assert np.allclose([s for _, s in got], [s for _, s in expected], atol=1e-5)
        everywhere = candidate.knn_all_scopes(kind, query, 15)
        assert _ids(everywhere) == _ids(reference.knn_all_scopes(kind, query, 15))
        assert all(scope == SCOPES[key % 3] for key, _, scope in everywhere)
    queries = _vectors(5, seed=3)
    for index in (reference, candidate):
        batched = index.knn_all_scopes_many(kind, queries, 10)
        assert [_ids(h) for h in batched] == [
            _ids(reference.knn_all_scopes(kind, q, 10)) for q in queries
        ]


@committing
def test_numpy_and_sqlite_vec_return_the_same_neighbours():
    reference, candidate = SqliteVecIndex(), NumpyIndex()
    fill_for_parity([reference, candidate])
    check_same_neighbours(reference, candidate)


@committing
def test_a_second_process_sees_writes_updates_and_deletes():
    vectors = _vectors(4)
    writer, reader = NumpyIndex(), NumpyIndex()  # two processes sharing one database
    writer.upsert("episode", 1, "project:a", vectors[0])
    writer.upsert("episode", 2, "project:a", vectors[1])
    assert _ids(reader.knn("episode", vectors[1], 1, ["project:a"])) == [2]

    writer.upsert("episode", 2, "project:b", vectors[2])  # re-embedded and moved
    assert _ids(reader.knn("episode", vectors[1], 5, ["project:a"])) == [1]
    assert _ids(reader.knn("episode", vectors[2], 1, ["project:b"])) == [2]

    writer.delete("episode", 1)
    assert reader.knn("episode", vectors[0], 5, ["project:a"]) == []
    assert VectorRow.objects.filter(kind="episode", row_id=1, embedding=None).count() == 1


@committing
def test_rows_of_a_rolled_back_transaction_are_never_returned():
    vectors = _vectors(3)
    index = NumpyIndex()
    index.upsert("memory", 1, "project:a", vectors[0])
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            index.upsert("memory", 2, "project:a", vectors[1])
            index.delete("memory", 1)
            # inside the transaction its own writes are visible ...
            assert _ids(index.knn("memory", vectors[1], 5, ["project:a"])) == [2]
            raise RuntimeError("roll back")
    # ... and after the rollback they are gone, while the committed row is back.
    assert _ids(index.knn("memory", vectors[1], 5, ["project:a"])) == [1]
    index.upsert("memory", 3, "project:a", vectors[2])
    assert sorted(_ids(index.knn("memory", vectors[2], 5, ["project:a"]))) == [1, 3]


@committing
def test_a_search_costs_one_query_when_nothing_changed(django_assert_num_queries):
    vectors = _vectors(3)
    index = NumpyIndex()
    index.upsert("memory", 1, "project:a", vectors[0])
    index.knn("memory", vectors[0], 5, ["project:a"])  # first use: seeds and loads
    for kind in ("memory", "episode", "procedure"):  # episode and procedure hold no rows
        with django_assert_num_queries(1):
            index.knn(kind, vectors[1], 5, ["project:a"])
    with django_assert_num_queries(1):
        index.knn_all_scopes_many("memory", vectors, 5)


@committing
def test_an_open_transaction_sees_its_rows_and_what_others_committed_before_it():
    vectors = _vectors(4)
    mine, theirs = NumpyIndex(), NumpyIndex()
    mine.upsert("memory", 1, "project:a", vectors[0])
    assert _ids(mine.knn("memory", vectors[0], 5, ["project:a"])) == [1]
    theirs.upsert("memory", 2, "project:a", vectors[1])  # committed, not yet seen by `mine`
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            mine.upsert("memory", 3, "project:b", vectors[2])
            mine.delete("memory", 1)
            assert _ids(mine.knn("memory", vectors[1], 5, ["project:a"])) == [2]
            assert _ids(mine.knn("memory", vectors[2], 5, ["project:b"])) == [3]
            assert [
                (key, scope) for key, _, scope in mine.knn_all_scopes("memory", vectors[2], 1)
            ] == [(3, "project:b")]
            raise RuntimeError("roll back")
    assert sorted(_ids(mine.knn("memory", vectors[1], 5, ["project:a"]))) == [1, 2]
    assert mine.knn("memory", vectors[2], 5, ["project:b"]) == []


@committing
def test_another_connection_sees_a_transactions_rows_only_once_it_commits():
    import threading

    from django.db import connections

    vectors = _vectors(2)
    writer, reader = NumpyIndex(), NumpyIndex()
    writer.upsert("memory", 1, "project:a", vectors[0])
    seen: list[list[int]] = []

    def search_from_another_connection() -> None:
        try:
            seen.append(_ids(reader.knn("memory", vectors[1], 5, ["project:a"])))
        finally:
            connections.close_all()

    with transaction.atomic():
        writer.upsert("memory", 2, "project:a", vectors[1])
        thread = threading.Thread(target=search_from_another_connection)
        thread.start()
        thread.join()
    thread = threading.Thread(target=search_from_another_connection)
    thread.start()
    thread.join()
    assert seen == [[1], [2, 1]]


def ties_at_the_cut(index) -> list[list[int]]:
    vector = np.zeros(384, dtype=np.float32)
    vector[0] = 1.0  # every cosine is exactly 1.0, whatever order the sums run in
    for key in (5, 3, 9, 1, 7):
        index.upsert("memory", key, "project:a", vector)
    index.upsert("memory", 4, "project:b", vector)
    return [
        _ids(index.knn("memory", vector, 2, ["project:a"])),
        _ids(index.knn("memory", vector, 3, ["project:a", "project:b"])),
    ]


TIES = [[1, 3], [1, 3, 4]]


@committing
def test_ties_at_the_cut_keep_the_smaller_keys():
    assert ties_at_the_cut(NumpyIndex()) == TIES


def remember_one(scope: str, content: str) -> int:
    """The pk of one fact remembered through the services in a new session of `scope`."""
    opened = session_activate(
        data=ActivateIn(task="seed", initial_goal="g", scope=scope),
        client=ClientInfo(),
        now=timezone.now(),
    )
    reply = memory_remember(
        data=RememberIn(
            scope=scope,
            session_id=opened["session_id"],
            memories=[{"content": content, "type": "fact"}],
        ),
        now=timezone.now(),
    )
    return int(reply["results"][0]["data"]["memory_id"][4:])


@pytest.mark.django_db
def test_it_starts_from_the_embeddings_a_store_already_holds():
    scope = "project:seeded"
    pk = remember_one(scope, "The billing queue runs on Redis")
    VectorRow.objects.filter(kind="memory").delete()  # a store written by sqlite-vec
    vector = from_blob(Memory.objects.get(pk=pk).embedding)
    assert _ids(NumpyIndex().knn("memory", vector, 3, [scope])) == [pk]


def opposite_order_writes() -> dict[str, object]:
    """Run in a process on PostgreSQL: two transactions write the memory and episode kinds in
    opposite orders, each holding its first kind while the other takes its own."""
    import threading

    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)
    index, vectors = NumpyIndex(), _vectors(2)
    first_written, second_written = threading.Event(), threading.Event()
    errors: dict[str, str] = {}

    def memory_then_episode() -> None:
        with transaction.atomic():
            index.upsert("memory", 1, "project:a", vectors[0])
            first_written.set()
            second_written.wait(timeout=2)  # times out once the other waits for our locks
            index.upsert("episode", 1, "project:a", vectors[0])

    def episode_then_memory() -> None:
        first_written.wait(timeout=30)
        with transaction.atomic():
            index.upsert("episode", 2, "project:a", vectors[1])
            second_written.set()
            index.upsert("memory", 2, "project:a", vectors[1])

    def run(name: str, body) -> None:
        try:
            body()
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {exc}".splitlines()[0]
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=run, args=("memory_then_episode", memory_then_episode)),
        threading.Thread(target=run, args=("episode_then_memory", episode_then_memory)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    rows = sorted(VectorRow.objects.values_list("kind", "row_id"))
    engine = storage_engine().name
    return {"errors": errors, "rows": [list(row) for row in rows], "engine": engine}


@pytest.mark.django_db  # only for the module's vec-table cleanup; the test runs on PostgreSQL
def test_two_transactions_writing_kinds_in_opposite_orders_do_not_deadlock_on_postgres(
    tmp_path,
) -> None:
    import json

    from tests.cli.runner import cli_env, run_python
    from tests.pg_support import fresh_postgres_database

    code = (
        "import json; from tests.memory.test_vector_backends import opposite_order_writes; "
        "print(json.dumps(opposite_order_writes()))"
    )
    with fresh_postgres_database("plain") as url:  # numpy: PostgreSQL without pgvector
        env = cli_env(tmp_path, DATABASE_URL=url, SLOWAVE_VECTOR_BACKEND="numpy")
        outcome = json.loads(run_python(tmp_path, code, env=env).strip().splitlines()[-1])
    assert outcome["engine"] == "postgresql"
    assert outcome["errors"] == {}
    expected = [["episode", 1], ["episode", 2], ["memory", 1], ["memory", 2]]
    assert outcome["rows"] == expected


def visibility_checks(make=NumpyIndex) -> dict[str, list[int]]:
    """What a reader on another connection (another process) and the writer itself find at
    each step of committed, moved, deleted, rolled-back and re-committed writes."""
    import threading

    from django.db import connections

    vectors = _vectors(4)
    writer, reader = make(), make()
    seen: dict[str, list[int]] = {}

    def read(label: str, query: int) -> None:
        def body() -> None:
            try:
                seen[label] = _ids(reader.knn("memory", vectors[query], 5, ["project:a"]))
            finally:
                connections.close_all()

        thread = threading.Thread(target=body)
        thread.start()
        thread.join(timeout=30)

    writer.upsert("memory", 1, "project:a", vectors[0])
    writer.upsert("memory", 2, "project:a", vectors[1])
    read("committed", 1)
    writer.upsert("memory", 2, "project:b", vectors[2])
    read("moved", 1)
    writer.delete("memory", 1)
    read("deleted", 0)
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            writer.upsert("memory", 3, "project:a", vectors[3])
            read("open", 3)
            seen["open_own"] = _ids(writer.knn("memory", vectors[3], 5, ["project:a"]))
            raise RuntimeError("roll back")
    read("rolled_back", 3)
    seen["rolled_back_own"] = _ids(writer.knn("memory", vectors[3], 5, ["project:a"]))
    writer.upsert("memory", 4, "project:a", vectors[3])
    read("recommitted", 3)
    seen["recommitted_own"] = _ids(writer.knn("memory", vectors[3], 5, ["project:a"]))
    return seen


VISIBLE = {
    "committed": [2, 1],
    "moved": [1],
    "deleted": [],
    "open": [],
    "open_own": [3],
    "rolled_back": [],
    "rolled_back_own": [],
    "recommitted": [4],
    "recommitted_own": [4],
}


@committing
def test_each_connection_sees_exactly_the_committed_rows_and_its_own():
    assert visibility_checks() == VISIBLE


@pytest.mark.django_db  # only for the module's vec-table cleanup; the test runs on PostgreSQL
def test_each_connection_sees_exactly_the_committed_rows_and_its_own_on_postgres(tmp_path):
    import json

    from tests.cli.runner import cli_env, run_python
    from tests.pg_support import fresh_postgres_database

    code = (
        "import json; from django.core.management import call_command; "
        "from memory.engines import storage_engine; "
        "from tests.memory.test_vector_backends import visibility_checks; "
        "call_command('migrate', verbosity=0); "
        "print(json.dumps([storage_engine().name, visibility_checks()]))"
    )
    with fresh_postgres_database("plain") as url:  # numpy: PostgreSQL without pgvector
        env = cli_env(tmp_path, DATABASE_URL=url, SLOWAVE_VECTOR_BACKEND="numpy")
        engine, seen = json.loads(run_python(tmp_path, code, env=env).strip().splitlines()[-1])
    assert engine == "postgresql"
    assert seen == VISIBLE
