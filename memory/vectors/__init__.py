"""Exact nearest-neighbour search behind a small interface (spec §4).

Kinds: memory, episode, procedure, prototype, and passage (a sentence of a memory, keyed by
memory.passages.key). Rows are keyed by the owning row's integer key (procedures by a stable
integer derived in the service). Callers filter status.
Backends: `sqlite-vec` (the SQLite default), `pgvector` (vectors in PostgreSQL, HNSW above a
size; the PostgreSQL default where the extension is installed) and `numpy` (an in-memory
float32 matrix kept in sync from the database; PostgreSQL without pgvector). sqlite-vec and
numpy are exact; pgvector is exact on small scopes and gives their answers on the parity test.
Backends see keys, scopes and vectors only: rows are indexed by memory.indexing, which also
installs the seed a backend starting empty over a filled store reads (`seeder_install`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Protocol

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memory.engines import storage_engine

KINDS = ("memory", "episode", "procedure", "prototype", "passage")


class VectorIndex(Protocol):
    name: str

    def upsert(self, kind: str, row_id: int, scope: str, vector: np.ndarray) -> None: ...

    def delete(self, kind: str, row_id: int) -> None: ...

    def knn(
        self, kind: str, vector: np.ndarray, k: int, scopes: list[str]
    ) -> list[tuple[int, float]]: ...

    def knn_all_scopes(
        self, kind: str, vector: np.ndarray, k: int
    ) -> list[tuple[int, float, str]]: ...

    def knn_all_scopes_many(
        self, kind: str, vectors: np.ndarray, k: int
    ) -> list[list[tuple[int, float, str]]]: ...


def check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown vector kind {kind!r}")


def backend_name() -> str:
    """The configured backend, with `auto` resolved by the database's engine (settings refuse
    the combinations that cannot work)."""
    chosen = settings.SLOWAVE_VECTOR_BACKEND
    return storage_engine().vector_default() if chosen == "auto" else chosen


def pgvector_tables() -> bool:
    """The pgvector tables exist: migration 0012 found the extension (or could create it)."""
    return storage_engine().pgvector_tables()


SeedRows = Iterable[tuple[int, str, bytes]]  # (key, scope, float32 vector bytes)
Seeder = Callable[[str], "SeedRows | None"]
_seeder: Seeder | None = None


def seeder_install(seeder: Seeder) -> None:
    """Where a backend that keeps its own copy (numpy) finds the vectors a store's rows already
    hold (a store written by sqlite-vec before): a kind's rows, or None when it has none."""
    global _seeder
    _seeder = seeder


def seed_rows(kind: str) -> SeedRows | None:
    return None if _seeder is None else _seeder(kind)


_index: VectorIndex | None = None
_lock = threading.Lock()


def get_index() -> VectorIndex:
    global _index
    if _index is None:
        with _lock:
            if _index is None:
                name = backend_name()
                if name == "numpy":
                    from memory.vectors.numpy_index import NumpyIndex

                    _index = NumpyIndex()
                elif name == "pgvector":
                    if not pgvector_tables():
                        raise ImproperlyConfigured(
                            "SLOWAVE_VECTOR_BACKEND=pgvector needs the pgvector extension: "
                            "install it on the server, run `CREATE EXTENSION vector;`, then "
                            "`slowave migrate memory 0011 && slowave migrate` (or use numpy)"
                        )
                    from memory.vectors.pgvector_index import PgvectorIndex

                    _index = PgvectorIndex()
                else:
                    from memory.vectors.sqlite_vec import SqliteVecIndex

                    _index = SqliteVecIndex()
    return _index
