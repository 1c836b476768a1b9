"""Exact nearest-neighbour search behind a small interface (spec §4).

Kinds: memory, episode, procedure, prototype, and passage (a sentence of a memory, keyed by
memory.passages.key). Rows are keyed by the owning row's integer key (procedures by a stable
integer derived in the service). Callers filter status.
Backends: `sqlite-vec` (the SQLite default) and `numpy` (an in-memory float32 matrix kept in
sync from the database; the PostgreSQL default). Both are exact and give the same answers.
"""

from __future__ import annotations

import threading
from typing import Protocol

import numpy as np
from django.conf import settings
from django.db import connection

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
    """The configured backend, with `auto` resolved for the current database (settings refuse
    the combinations that cannot work)."""
    chosen = settings.SLOWAVE_VECTOR_BACKEND
    if chosen == "auto":
        return "sqlite-vec" if connection.vendor == "sqlite" else "numpy"
    return chosen


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
                else:
                    from memory.vectors.sqlite_vec import SqliteVecIndex

                    _index = SqliteVecIndex()
    return _index
