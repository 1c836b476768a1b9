"""sqlite-vec's searches answer from an in-process copy of the table: it must give what
sqlite-vec's own brute-force scan of the table (or of a scope's partition) gives, through new
rows, rewrites, deletes and rollbacks, whether it reads the shadow tables or the table itself."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memory.embeddings import to_blob
from memory.vectors import KINDS, vec_rows
from memory.vectors.reading import one_reading
from memory.vectors.sqlite_vec import SqliteVecIndex
from tests.vec_rows_support import forget_vec_rows

committing = pytest.mark.django_db(transaction=True)
BASE = 8_000_000  # keys far above any real row: the sqlite-vec tables outlive a test's flush


@pytest.fixture(autouse=True)
def _clean_vec_table():
    yield
    forget_vec_rows(BASE)


def _vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _table_scan(query: np.ndarray, k: int) -> list[tuple[int, str]]:
    """sqlite-vec's own brute-force answer over every partition."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rowid, scope FROM vec_memory WHERE embedding MATCH %s AND k = %s",
            [to_blob(query), k],
        )
        return [(int(rowid), scope) for rowid, scope in cursor]


def _partition_scan(query: np.ndarray, k: int, scopes: list[str]) -> list[int]:
    """sqlite-vec's own answer in each scope's partition, merged as the copy merges them."""
    hits: list[tuple[float, int]] = []
    with connection.cursor() as cursor:
        for scope in scopes:
            cursor.execute(
                "SELECT rowid, distance FROM vec_memory "
                "WHERE embedding MATCH %s AND k = %s AND scope = %s",
                [to_blob(query), k, scope],
            )
            hits += [(distance, int(rowid)) for rowid, distance in cursor]
    return [rowid for _, rowid in sorted(hits)[:k]]


def _found(hits) -> list[tuple[int, str]]:
    return [(key, scope) for key, _, scope in hits]


@committing
def test_the_copy_answers_as_the_table_does_through_new_rows_rewrites_and_deletes():
    index, vectors, queries = SqliteVecIndex(), _vectors(240, seed=5), _vectors(8, seed=6)

    def agrees() -> None:
        batched = index.knn_all_scopes_many("memory", queries, 12)
        assert [_found(hits) for hits in batched] == [_table_scan(q, 12) for q in queries]
        for scopes in (["project:0"], ["project:1", "project:3", "project:moved"]):
            for query in queries:
                found = index.knn("memory", query, 7, scopes)
                assert [key for key, _ in found] == _partition_scan(query, 7, scopes)

    for key, vector in enumerate(vectors[:120], start=BASE):
        index.upsert("memory", key, f"project:{key % 4}", vector)
    agrees()
    for key, vector in enumerate(vectors[120:], start=BASE + 120):  # rows above the copy
        index.upsert("memory", key, f"project:{key % 4}", vector)
    agrees()
    index.upsert("memory", BASE + 5, "project:moved", queries[0])  # re-embedded in place
    index.delete("memory", BASE + 7)
    agrees()
    assert _found(index.knn_all_scopes("memory", queries[0], 1)) == [(BASE + 5, "project:moved")]
    assert BASE + 7 not in [key for key, _, _ in index.knn_all_scopes("memory", vectors[7], 5)]


@committing
def test_rows_of_a_rolled_back_transaction_leave_the_copy():
    index, vectors = SqliteVecIndex(), _vectors(3, seed=8)
    index.upsert("memory", BASE + 1, "project:a", vectors[0])
    assert _found(index.knn_all_scopes("memory", vectors[0], 1)) == [(BASE + 1, "project:a")]
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            index.upsert("memory", BASE + 2, "project:a", vectors[1])
            # inside the transaction its own row is found ...
            assert _found(index.knn_all_scopes("memory", vectors[1], 1)) == [
                (BASE + 2, "project:a")
            ]
            raise RuntimeError("roll back")
    # ... and after the rollback it is gone; the same rowid written again is the new vector.
    assert BASE + 2 not in [key for key, _, _ in index.knn_all_scopes("memory", vectors[1], 50)]
    index.upsert("memory", BASE + 2, "project:b", vectors[2])
    assert _found(index.knn_all_scopes("memory", vectors[2], 1)) == [(BASE + 2, "project:b")]


@committing
def test_another_process_rewrites_and_backfills_reach_the_copy():
    # Each index keeps its own copy, as two processes do; they share only the database.
    ours, theirs = SqliteVecIndex(), SqliteVecIndex()
    vectors, queries = _vectors(40, seed=11), _vectors(6, seed=12)

    def agrees() -> None:
        batched = ours.knn_all_scopes_many("memory", queries, 10)
        assert [_found(hits) for hits in batched] == [_table_scan(q, 10) for q in queries]

    for key, vector in enumerate(vectors[:30], start=BASE):
        if key != BASE + 10:  # stored without a vector, backfilled later
            ours.upsert("memory", key, "project:a", vector)
    agrees()
    theirs.upsert("memory", BASE + 10, "project:a", queries[0])  # backfill below the newest row
    assert _found(ours.knn_all_scopes("memory", queries[0], 1)) == [(BASE + 10, "project:a")]
    theirs.upsert("memory", BASE + 3, "project:b", queries[1])  # re-embedded in place
    assert _found(ours.knn_all_scopes("memory", queries[1], 1)) == [(BASE + 3, "project:b")]
    theirs.delete("memory", BASE + 20)
    assert BASE + 20 not in [key for key, _, _ in ours.knn_all_scopes("memory", vectors[20], 5)]
    agrees()


@pytest.mark.django_db
def test_every_vector_kind_has_a_rewrite_count():
    with connection.cursor() as cursor:
        cursor.execute("SELECT kind FROM vec_generation")
        assert {kind for (kind,) in cursor} == set(KINDS)


@committing
@pytest.mark.parametrize("from_chunks", [True, False])
# More than one chunk of 1024 (their vectors read chunk by chunk), or chunks holding fewer
# rows than vec_rows.FEW_ROWS (read by rowid).
@pytest.mark.parametrize("rows", [1100, 60], ids=["full-chunks", "sparse-chunks"])
def test_both_ways_of_reading_the_table_give_its_rows(from_chunks, rows):
    index, vectors = SqliteVecIndex(), _vectors(rows, seed=21)
    for key, vector in enumerate(vectors, start=BASE):
        index.upsert("memory", key, f"project:{key % 3}", vector)
    index.upsert("memory", BASE + 4, "project:2", vectors[0])  # moved to another partition
    index.delete("memory", BASE + 9)
    found = vec_rows.rows_above("memory", BASE + 2, from_chunks=from_chunks)
    expected = {(key, f"project:{key % 3}") for key in range(BASE + 3, BASE + rows)}
    expected -= {(BASE + 9, f"project:{(BASE + 9) % 3}"), (BASE + 4, f"project:{(BASE + 4) % 3}")}
    expected.add((BASE + 4, "project:2"))
    assert {(int(key), scope) for scope, (keys, _) in found.items() for key in keys} == expected
    for keys, matrix in found.values():
        assert list(keys) == sorted(keys)
        wanted = [vectors[0] if key == BASE + 4 else vectors[key - BASE] for key in keys]
        assert np.array_equal(matrix, np.stack(wanted))


@pytest.mark.django_db
def test_the_tables_have_the_layout_read_from_their_shadow_tables():
    assert all(vec_rows.chunked(kind) for kind in KINDS)


@committing
def test_a_store_that_lost_its_newest_rows_is_read_again():
    # As a restored (older) store file looks to a running process: rows above the copy's
    # last key are gone and `top` fell, without a rewrite. New rows below the old top must
    # still be found.
    index, vectors = SqliteVecIndex(), _vectors(3, seed=9)
    index.upsert("memory", BASE + 10, "project:a", vectors[0])
    assert _found(index.knn_all_scopes("memory", vectors[0], 1)) == [(BASE + 10, "project:a")]
    forget_vec_rows(BASE)
    index.upsert("memory", BASE + 3, "project:b", vectors[1])
    assert _found(index.knn_all_scopes("memory", vectors[1], 1)) == [(BASE + 3, "project:b")]
    assert BASE + 10 not in [key for key, _, _ in index.knn_all_scopes("memory", vectors[0], 5)]


@committing
def test_a_reading_checks_the_table_once_and_the_next_reading_sees_new_rows():
    index, vectors = SqliteVecIndex(), _vectors(2, seed=31)
    index.upsert("memory", BASE + 1, "project:a", vectors[0])
    index.knn("memory", vectors[0], 1, ["project:a"])  # the copy's first read: the whole table
    with one_reading():
        with CaptureQueriesContext(connection) as first:
            assert index.knn("memory", vectors[0], 1, ["project:a"])[0][0] == BASE + 1
        with CaptureQueriesContext(connection) as again:
            assert index.knn("memory", vectors[1], 1, ["project:a"])[0][0] == BASE + 1
    assert (len(first), len(again)) == (1, 0)
    index.upsert("memory", BASE + 2, "project:a", vectors[1])
    with one_reading():
        assert index.knn("memory", vectors[1], 1, ["project:a"])[0][0] == BASE + 2


@committing
def test_a_reading_checks_again_while_the_copy_holds_provisional_rows():
    index, vectors = SqliteVecIndex(), _vectors(2, seed=32)
    index.upsert("memory", BASE + 1, "project:a", vectors[0])
    index.knn("memory", vectors[0], 1, ["project:a"])  # the copy's first read: the whole table
    with transaction.atomic(), one_reading():
        index.upsert("memory", BASE + 2, "project:a", vectors[1])
        for _ in range(2):
            with CaptureQueriesContext(connection) as checked:
                assert index.knn("memory", vectors[1], 1, ["project:a"])[0][0] == BASE + 2
            assert len(checked) == 1
