"""A serving process warmed before its first call (memory.services.warming): the vector copy
is caught up outside any request, so the first all-scope search (a remember's corroboration)
reads only the rows written after the warm-up, not the whole table inside its transaction."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import vectors
from memory.services.warming import serving_warm_up
from memory.vectors import get_index
from tests.vec_rows_support import forget_vec_rows

# Committed rows, so the warm-up's own connection sees them; only vector rows (the events
# table is append-only, so sessions and memories cannot be committed in a test).
committing = pytest.mark.django_db(transaction=True)
BASE = 9_000_000  # keys far above any real row: the sqlite-vec tables outlive a test's flush
# A read of rows above a rowid (through the table or its rowid shadow table), or of every chunk.
CATCH_UP = re.compile(r"FROM vec_memory(?:_rowids)? WHERE rowid > (\d+)")
WHOLE = re.compile(r"FROM vec_memory_chunks\s*(?:$|ORDER)")


@pytest.fixture(autouse=True)
def _clean_vec_table():
    yield
    forget_vec_rows(BASE)


def _first_search_reads_above() -> list[int]:
    """Where the process's first all-scope search started reading the vector table."""
    query = np.ones((1, 384), dtype=np.float32)
    with CaptureQueriesContext(connection) as queries:
        get_index().knn_all_scopes_many("memory", query, 5)
    reads = [0 for q in queries if WHOLE.search(q["sql"])]
    return reads + [int(m.group(1)) for q in queries for m in [CATCH_UP.search(q["sql"])] if m]


def _warm_in_a_thread() -> None:
    # As mcp_serve runs it: a thread of its own, with its own database connection.
    warm = threading.Thread(target=serving_warm_up)
    warm.start()
    warm.join(timeout=120)
    assert not warm.is_alive()


@committing
def test_a_warmed_process_reads_only_the_rows_written_after_its_warm_up(monkeypatch):
    rows = np.random.default_rng(3).normal(size=(6, 384)).astype(np.float32)
    for key, vector in enumerate(rows, start=BASE):
        get_index().upsert("memory", key, f"project:warm-{key % 2}", vector)

    monkeypatch.setattr(vectors, "_index", None)  # a new process: its copy holds nothing
    assert 0 in _first_search_reads_above()

    monkeypatch.setattr(vectors, "_index", None)
    _warm_in_a_thread()
    reads = _first_search_reads_above()
    # Only rows above what it warmed (other tests' rows may sit higher still), never all.
    assert 0 not in reads and all(above >= BASE + len(rows) - 1 for above in reads)
