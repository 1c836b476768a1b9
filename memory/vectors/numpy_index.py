"""The numpy backend: exact cosine search over in-memory float32 matrices (spec §4).

The database is the store (`VectorRow`, any vendor), an append-only log: an upsert or delete
adds a row with a new, higher id. Every process keeps one matrix per (kind, scope) and a
horizon, the id up to which it has applied the log. A search first asks the database for the
newest id (one primary-key lookup); only when that moved does it read the rows above the
horizon, for every kind at once. Writers lock `VectorStamp` before inserting: on PostgreSQL
those row locks make ids become visible in id order, so "ids above the horizon" never skips a
row. Every write locks the stamps of all kinds, in kind order, in one statement: a transaction
writing episodes then memories and another writing memories then episodes would otherwise each
hold the stamp the other waits for (a deadlock, one aborted).

Rows written by the current, still open transaction are never cached (it may roll back): while
a transaction has written vectors, searches score the rows above the horizon on the side. Its
first write catches up with the committed log first, so those are its own rows only.
"""

from __future__ import annotations

import threading
from typing import cast

import numpy as np
from django.db import connection, transaction
from django.db.models import F

from memory.embeddings import from_blob, to_blob
from memory.models import VectorRow, VectorStamp
from memory.vectors import KINDS, check_kind, seed_rows
from memory.vectors.matrix import products, top, units

_DIRTY = "_slowave_vectors_dirty"
_NEWEST = f'SELECT MAX("id") FROM "{VectorRow._meta.db_table}"'  # both vendors' quoting
Row = tuple[int, str, int, str, "np.ndarray | None"]  # (id, kind, key, scope, vector or None)
Part = tuple[np.ndarray, np.ndarray, np.ndarray]  # (keys, cosines, scope numbers), one query
_NOTHING: Part = (np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros(0, np.int64))


class _Matrix:
    """One scope's vectors: a growable matrix, the key of each slot and which slots are live.

    Slots below `size` never change but for `live`, so a search may read them without the
    index lock once it has copied `live`."""

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

    def snapshot(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(vectors, keys, live mask or None when every slot is live); call under the lock."""
        live = self.live[: self.size].copy() if self.dead else None
        return self.vectors[: self.size], self.keys[: self.size], live


def _scan(
    snapshot: tuple[np.ndarray, np.ndarray, np.ndarray | None],
    queries: np.ndarray,
    k: int,
    skip: np.ndarray | None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Best k (keys, cosines) of one scope's snapshot for each query."""
    vectors, keys, live = snapshot
    found = products(queries, vectors)
    if skip is not None:
        hidden = np.isin(keys, skip)
        live = ~hidden if live is None else live & ~hidden
    if live is not None:
        keys, found = keys[live], found[:, live]
    out = []
    for row in found:
        best = top(keys, row, k)
        out.append((keys[best], row[best]))
    return out


class _KindCache:
    """Everything one process has applied for one kind."""

    def __init__(self) -> None:
        self.scopes: dict[str, _Matrix] = {}
        self.slots: dict[int, tuple[str, int]] = {}

    def apply(self, key: int, scope: str, vector: np.ndarray | None) -> None:
        old = self.slots.pop(key, None)
        if old is not None:
            self.scopes[old[0]].kill(old[1])
        if vector is not None:
            matrix = self.scopes.get(scope)
            if matrix is None:
                matrix = self.scopes[scope] = _Matrix(len(vector))
            self.slots[key] = (scope, matrix.append(key, vector))

    def compact(self) -> None:
        for scope, matrix in list(self.scopes.items()):
            if matrix.dead > 1024 and matrix.dead * 4 > matrix.size:
                fresh = _Matrix(matrix.vectors.shape[1])
                for slot in np.flatnonzero(matrix.live[: matrix.size]):
                    key = int(matrix.keys[slot])
                    self.slots[key] = (scope, fresh.append(key, matrix.vectors[slot]))
                self.scopes[scope] = fresh


class NumpyIndex:
    name = "numpy"

    def __init__(self) -> None:
        self._kinds = {kind: _KindCache() for kind in KINDS}
        self._horizon = 0  # every committed row with an id up to this one is applied
        self._seeded = False
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
            if not getattr(connection, _DIRTY, False):
                if self._seeded:
                    self._catch_up()
                _mark_dirty()
            VectorRow.objects.filter(kind=kind, row_id=row_id).delete()
            VectorRow.objects.create(kind=kind, row_id=row_id, scope=scope, embedding=blob)

    # Reads ------------------------------------------------------------------------------

    def knn(
        self, kind: str, vector: np.ndarray, k: int, scopes: list[str]
    ) -> list[tuple[int, float]]:
        ((keys, scores, _),) = self._search(kind, np.asarray(vector)[None, :], k, set(scopes))[0]
        return list(zip(keys.tolist(), scores.tolist(), strict=True))

    def knn_all_scopes(self, kind: str, vector: np.ndarray, k: int) -> list[tuple[int, float, str]]:
        return self.knn_all_scopes_many(kind, np.asarray(vector)[None, :], k)[0]

    def knn_all_scopes_many(
        self, kind: str, vectors: np.ndarray, k: int
    ) -> list[list[tuple[int, float, str]]]:
        found, names = self._search(kind, np.asarray(vectors), k, None)
        return [
            list(
                zip(keys.tolist(), scores.tolist(), [names[i] for i in where.tolist()], strict=True)
            )
            for keys, scores, where in found
        ]

    def _search(
        self, kind: str, vectors: np.ndarray, k: int, scopes: set[str] | None
    ) -> tuple[list[Part], list[str]]:
        """Best k (keys, cosines, scope numbers) per query, and the scope of each number."""
        check_kind(kind)
        if k <= 0 or scopes == set() or not len(vectors):
            return [_NOTHING for _ in vectors], []
        own = [row for row in self._sync() if row[1] == kind]
        skip = np.array([row[2] for row in own], dtype=np.int64) if own else None
        pending = [
            row for row in own if row[4] is not None and (scopes is None or row[3] in scopes)
        ]
        with self._lock:
            chosen = [
                (scope, matrix.snapshot())
                for scope, matrix in self._kinds[kind].scopes.items()
                if matrix.size > matrix.dead and (scopes is None or scope in scopes)
            ]
        if not chosen and not pending:
            return [_NOTHING for _ in vectors], []
        queries = units(np.asarray(vectors, dtype=np.float32))
        names = [scope for scope, _ in chosen]
        parts: list[list[Part]] = [[] for _ in queries]
        for number, (_, snapshot) in enumerate(chosen):
            for found, (keys, scores) in zip(parts, _scan(snapshot, queries, k, skip), strict=True):
                found.append((keys, scores, np.full(len(keys), number)))
        if pending:
            _score_on_the_side(pending, queries, k, names, parts)
        return [_merge(found, k) for found in parts], names

    # Keeping in step with the database --------------------------------------------------

    def _sync(self) -> list[Row]:
        """Apply what other transactions committed; return the open transaction's own rows."""
        if not self._seeded:
            _seed()
            self._seeded = True
        if connection.in_atomic_block and getattr(connection, _DIRTY, False):
            return self._rows_after(self._horizon)
        setattr(connection, _DIRTY, False)  # left over from a rolled-back transaction
        self._catch_up()
        return []

    def _catch_up(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(_NEWEST)
            (newest,) = cursor.fetchone()
        horizon = self._horizon
        if newest is None or newest <= horizon:
            return
        rows = self._rows_after(horizon)
        with self._lock:
            touched = set()
            for row_pk, kind, key, scope, vector in rows:
                if row_pk > self._horizon:
                    self._kinds[kind].apply(key, scope, vector)
                    touched.add(kind)
            for kind in touched:
                self._kinds[kind].compact()
            self._horizon = max(self._horizon, newest, rows[-1][0] if rows else 0)

    @staticmethod
    def _rows_after(horizon: int) -> list[Row]:
        rows = (
            VectorRow.objects.filter(pk__gt=horizon)
            .order_by("pk")
            .values_list("pk", "kind", "row_id", "scope", "embedding")
        )
        out: list[Row] = [
            (row_pk, kind, key, scope, from_blob(blob)) for row_pk, kind, key, scope, blob in rows
        ]
        live = [i for i, row in enumerate(out) if row[4] is not None]
        if live:
            scaled = units(np.stack([cast(np.ndarray, out[i][4]) for i in live]))
            for i, unit in zip(live, scaled, strict=True):
                out[i] = (*out[i][:4], unit)
        return out


def _score_on_the_side(
    pending: list[Row], queries: np.ndarray, k: int, names: list[str], parts: list[list[Part]]
) -> None:
    """Add the best k of the open transaction's rows to each query's parts, numbering scopes
    not seen yet after the cached ones."""
    names += sorted({row[3] for row in pending} - set(names))
    keys = np.array([row[2] for row in pending], dtype=np.int64)
    where = np.array([names.index(row[3]) for row in pending])
    # `pending` holds only rows with a vector (see _search).
    side = products(queries, np.stack([cast(np.ndarray, row[4]) for row in pending]))
    for found, row in zip(parts, side, strict=True):
        best = top(keys, row, k)
        found.append((keys[best], row[best], where[best]))


def _merge(found: list[Part], k: int) -> Part:
    if len(found) == 1:
        return found[0]
    keys, scores, where = (np.concatenate(column) for column in zip(*found, strict=True))
    best = top(keys, scores, k)
    return keys[best], scores[best], where[best]


def _mark_dirty() -> None:
    """The open transaction has written vectors: searches score them on the side until it
    commits. A rollback leaves the flag set; the next search outside a transaction clears it."""
    setattr(connection, _DIRTY, True)
    transaction.on_commit(lambda: setattr(connection, _DIRTY, False))


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


def _seed() -> None:
    """First use of the numpy backend on a database whose vectors live elsewhere (a store that
    ran on sqlite-vec before): copy the embeddings the rows already hold (memory.vectors'
    seed_rows)."""
    empty = [kind for kind in KINDS if not VectorRow.objects.filter(kind=kind).exists()]
    for kind in empty:
        rows = seed_rows(kind)
        if rows is None:
            continue
        with transaction.atomic():
            _stamp(kind)
            if VectorRow.objects.filter(kind=kind).exists():
                continue  # another process seeded it while this one waited for the lock
            if not getattr(connection, _DIRTY, False):
                _mark_dirty()
            VectorRow.objects.bulk_create(
                (
                    VectorRow(kind=kind, row_id=key, scope=scope, embedding=blob)
                    for key, scope, blob in rows
                ),
                batch_size=1000,
            )
