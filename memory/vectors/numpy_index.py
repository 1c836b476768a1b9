"""The numpy backend: exact cosine search over in-memory float32 matrices (spec §4).

The database is the store (`VectorRow`, any vendor); every process keeps one matrix per
(kind, scope) and applies only the rows with ids above the last one it has seen, so a search
costs one cheap query plus a matrix product. Writers lock `VectorStamp` before inserting: on
PostgreSQL that row lock makes a kind's row ids become visible in id order, so "ids above the
last applied" never skips a row. Every write locks the stamps of all kinds, in kind order, in
one statement: a transaction writing episodes then memories and another writing memories then
episodes would otherwise each hold the stamp the other waits for (a deadlock, one aborted).

Rows written by the current, still open transaction are never cached (it may roll back): while
a transaction has written vectors, searches score the not-yet-cached rows on the side.
"""

from __future__ import annotations

import threading

import numpy as np
from django.db import connection, transaction
from django.db.models import F

from memory.embeddings import from_blob, to_blob
from memory.models import Episode, Memory, Procedure, Prototype, VectorRow, VectorStamp
from memory.vectors import check_kind

_DIRTY = "_slowave_vectors_dirty"
Row = tuple[int, int, str, "np.ndarray | None"]  # (VectorRow id, key, scope, vector or tombstone)


def _unit(vector: np.ndarray) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _best(ids: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k highest scores, ties broken by the smaller id (the sqlite-vec order)."""
    if len(scores) > k:
        keep = np.argpartition(-scores, k - 1)[:k]
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))
    return [(int(ids[i]), float(scores[i])) for i in order]


class _Matrix:
    """One scope's vectors: a growable matrix, the key of each slot and which slots are live."""

    def __init__(self, dim: int) -> None:
        self.vectors = np.zeros((64, dim), dtype=np.float32)
        self.keys = np.zeros(64, dtype=np.int64)
        self.live = np.zeros(64, dtype=bool)
        self.size = 0
        self.dead = 0

    def append(self, key: int, vector: np.ndarray) -> int:
        if self.size == len(self.keys):
            grow = max(64, self.size)
            self.vectors = np.vstack([self.vectors, np.zeros_like(self.vectors[:grow])])
            self.keys = np.concatenate([self.keys, np.zeros(grow, dtype=np.int64)])
            self.live = np.concatenate([self.live, np.zeros(grow, dtype=bool)])
        slot = self.size
        self.vectors[slot], self.keys[slot], self.live[slot] = vector, key, True
        self.size += 1
        return slot

    def kill(self, slot: int) -> None:
        self.live[slot] = False
        self.dead += 1

    def search(self, queries: np.ndarray, k: int, skip: set[int]) -> list[list[tuple[int, float]]]:
        """Best k (key, cosine) of this scope for each row of `queries`."""
        if self.size == self.dead:
            return [[] for _ in queries]
        scores = queries @ self.vectors[: self.size].T
        live = self.live[: self.size].copy()
        if skip:
            live &= ~np.isin(self.keys[: self.size], list(skip))
        keys = self.keys[: self.size][live]
        return [_best(keys, row[live], k) for row in scores]


class _KindCache:
    """Everything one process has applied for one kind."""

    def __init__(self) -> None:
        self.scopes: dict[str, _Matrix] = {}
        self.slots: dict[int, tuple[str, int]] = {}
        self.last_id = 0
        self.seeded = False

    def apply(self, rows: list[Row]) -> None:
        for row_pk, key, scope, vector in rows:
            old = self.slots.pop(key, None)
            if old is not None:
                self.scopes[old[0]].kill(old[1])
            if vector is not None:
                matrix = self.scopes.get(scope)
                if matrix is None:
                    matrix = self.scopes[scope] = _Matrix(len(vector))
                self.slots[key] = (scope, matrix.append(key, vector))
            self.last_id = max(self.last_id, row_pk)
        for scope, matrix in list(self.scopes.items()):
            if matrix.dead > 1024 and matrix.dead * 4 > matrix.size:
                self._compact(scope, matrix)

    def _compact(self, scope: str, matrix: _Matrix) -> None:
        fresh = _Matrix(matrix.vectors.shape[1])
        for slot in np.flatnonzero(matrix.live[: matrix.size]):
            key = int(matrix.keys[slot])
            self.slots[key] = (scope, fresh.append(key, matrix.vectors[slot]))
        self.scopes[scope] = fresh


class NumpyIndex:
    name = "numpy"

    def __init__(self) -> None:
        self._kinds = {}
        self._lock = threading.Lock()

    # Writes -----------------------------------------------------------------------------

    def upsert(self, kind: str, row_id: int, scope: str, vector: np.ndarray) -> None:
        self._write(kind, row_id, scope, to_blob(vector))

    def delete(self, kind: str, row_id: int) -> None:
        self._write(kind, row_id, "", None)

    def _write(self, kind: str, row_id: int, scope: str, blob: bytes | None) -> None:
        check_kind(kind)
        with transaction.atomic():
            _stamp(kind)
            VectorRow.objects.filter(kind=kind, row_id=row_id).delete()
            VectorRow.objects.create(kind=kind, row_id=row_id, scope=scope, embedding=blob)
            if not getattr(connection, _DIRTY, False):
                setattr(connection, _DIRTY, True)
                transaction.on_commit(self._after_commit)

    def _after_commit(self) -> None:
        setattr(connection, _DIRTY, False)
        for kind in list(self._kinds):
            self._refresh(kind)

    # Reads ------------------------------------------------------------------------------

    def knn(
        self, kind: str, vector: np.ndarray, k: int, scopes: list[str]
    ) -> list[tuple[int, float]]:
        (hits,) = self._search(kind, np.asarray(vector)[None, :], k, set(scopes))
        return [(key, score) for key, score, _ in hits]

    def knn_all_scopes(self, kind: str, vector: np.ndarray, k: int) -> list[tuple[int, float, str]]:
        return self._search(kind, np.asarray(vector)[None, :], k, None)[0]

    def knn_all_scopes_many(
        self, kind: str, vectors: np.ndarray, k: int
    ) -> list[list[tuple[int, float, str]]]:
        return self._search(kind, np.asarray(vectors), k, None)

    def _search(
        self, kind: str, vectors: np.ndarray, k: int, scopes: set[str] | None
    ) -> list[list[tuple[int, float, str]]]:
        check_kind(kind)
        if k <= 0 or scopes == set() or not len(vectors):
            return [[] for _ in vectors]
        queries = np.stack([_unit(v) for v in vectors])
        unsettled: list[Row] = []
        if connection.in_atomic_block and getattr(connection, _DIRTY, False):
            cache = self._cache(kind)
            unsettled = self._fetch(kind, cache.last_id)
        else:
            setattr(connection, _DIRTY, False)
            cache = self._refresh(kind)
        superseded = {key for _, key, _, _ in unsettled}
        pending = [row for row in unsettled if row[3] is not None]
        pending = [row for row in pending if scopes is None or row[2] in scopes]
        found: list[list[tuple[int, float, str]]] = [[] for _ in queries]
        with self._lock:
            for scope, matrix in cache.scopes.items():
                if scopes is None or scope in scopes:
                    for hits, best in zip(
                        found, matrix.search(queries, k, superseded), strict=True
                    ):
                        hits += [(key, score, scope) for key, score in best]
        if pending:
            side = queries @ np.stack([row[3] for row in pending]).T
            for hits, row_scores in zip(found, side, strict=True):
                hits += [
                    (row[1], float(x), row[2]) for row, x in zip(pending, row_scores, strict=True)
                ]
        for hits in found:
            hits.sort(key=lambda hit: (-hit[1], hit[0]))
            del hits[k:]
        return found

    # Keeping in step with the database --------------------------------------------------

    def _cache(self, kind: str) -> _KindCache:
        with self._lock:
            cache = self._kinds.get(kind)
            if cache is None:
                cache = self._kinds[kind] = _KindCache()
        if not cache.seeded:
            _seed_from_models(kind)
            cache.seeded = True
        return cache

    def _refresh(self, kind: str) -> _KindCache:
        cache = self._cache(kind)
        rows = self._fetch(kind, cache.last_id)
        if rows:
            with self._lock:
                cache.apply([r for r in rows if r[0] > cache.last_id])
        return cache

    @staticmethod
    def _fetch(kind: str, after: int) -> list[Row]:
        rows = (
            VectorRow.objects.filter(kind=kind, pk__gt=after)
            .order_by("pk")
            .values_list("pk", "row_id", "scope", "embedding")
        )
        out: list[Row] = []
        for row_pk, key, scope, blob in rows:
            vector = from_blob(blob)
            out.append((row_pk, key, scope, _unit(vector) if vector is not None else None))
        return out


def _stamp(kind: str) -> None:
    """Lock every kind's stamp until the transaction ends, then count this write.

    The kinds a transaction will write are not known up front, so the first write takes them
    all, always in kind order (PostgreSQL locks the rows of `SELECT ... ORDER BY ... FOR
    UPDATE` in the order it returns them); later writes in the same transaction hold them
    already. Two vector-writing transactions therefore queue instead of deadlocking, whichever
    kinds they touch. SQLite ignores FOR UPDATE: its one writer at a time gives the same order.
    """
    list(VectorStamp.objects.select_for_update().order_by("kind").values_list("kind", flat=True))
    VectorStamp.objects.filter(kind=kind).update(version=F("version") + 1)


def _seed_from_models(kind: str) -> None:
    """First use of the numpy backend on a database whose vectors live elsewhere (a store that
    ran on sqlite-vec before): copy the embeddings the rows already hold."""
    if VectorRow.objects.filter(kind=kind).exists():
        return
    if kind == "prototype":
        source = Prototype.objects.values_list("pk", "scope", "centroid")
    elif kind == "procedure":
        source = Procedure.objects.exclude(embedding=None).values_list(
            "index_key", "scope", "embedding"
        )
    else:
        model = Memory if kind == "memory" else Episode
        source = model.objects.exclude(embedding=None).values_list("pk", "scope", "embedding")
    with transaction.atomic():
        _stamp(kind)
        VectorRow.objects.bulk_create(
            (
                VectorRow(kind=kind, row_id=key, scope=scope, embedding=bytes(blob))
                for key, scope, blob in source.iterator()
            ),
            batch_size=1000,
        )
