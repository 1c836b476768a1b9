"""An in-process float32 copy of one sqlite-vec table, one contiguous matrix per scope, that
answers the searches sqlite-vec would answer by brute force, exactly, with matrix products.

sqlite-vec's own search scans a scope's partition chunk by chunk: 10-15 ms for 10k vectors, most
of a recall at 100k memories in 10 scopes (`slowave bench scale`), where one matrix product over
the scope's copy takes under 1 ms. Across all scopes it scans the whole table for each query
vector: remembering a batch cost ~10 ms per item at 20k memories (corroboration, spec §6.3).

Memory: 1.5 KB per vector (384 float32) for each kind searched in the process, about 150 MB
per 100k memories, and as much again per 100k passages; read on a kind's first search (0.2 s
per 100k rows, vec_rows.py).

Rows are mostly written with ever higher rowids (a memory's vector is written when the memory is
created), so each scope's copy is in rowid order and catches up on the rows above the last
rowid it holds, which it reads only when `vec_generation.top`, the highest rowid written, passed
it: one primary-key lookup per search otherwise. Any other write (a re-embedding, a backfill, a
delete), from this process or another, bumps the kind's `vec_generation.rewrites`; a search that
finds the count moved drops the copy and reads the table again in full. SQLite has one writer at
a time, so a search inside a write transaction may see that transaction's own rows and count:
they stay provisional until it commits, and a search after a rollback reads the rows above the
last committed rowid again (and the whole table, if the rolled-back transaction had moved the
count).
"""

from __future__ import annotations

import threading

import numpy as np
from django.db import connection, transaction

from memory.embeddings import DIMENSIONS
from memory.vectors import vec_rows
from memory.vectors.matrix import products, top, units
from memory.vectors.reading import first_read

Hit = tuple[int, float, str]  # (rowid, cosine, scope)


class _Block:
    """One scope's rows: unit vectors in a growable matrix and their keys, ascending."""

    def __init__(self) -> None:
        self.vectors = np.zeros((0, DIMENSIONS), dtype=np.float32)
        self.keys = np.zeros(0, dtype=np.int64)
        self.size = 0

    def extend(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Append rows above every key held (keys ascending); an empty block takes the arrays
        it is given, scaled in place, so a full read holds each vector once."""
        if not self.size:
            self.keys, self.vectors, self.size = keys, _units_in_place(vectors), len(keys)
            return
        need = self.size + len(keys)
        if need > len(self.keys):
            # An eighth of headroom, not double: a scope's matrix is most of the copy's memory.
            capacity = need + max(need // 8, 64)
            self.vectors = _grown(self.vectors[: self.size], capacity)
            self.keys = _grown(self.keys[: self.size], capacity)
        self.vectors[self.size : need] = units(vectors)
        self.keys[self.size : need] = keys
        self.size = need

    def cut(self, key: int) -> None:
        """Drop the rows above `key`."""
        self.size = int(np.searchsorted(self.keys[: self.size], key, side="right"))

    def best(self, queries: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """(keys, cosines) of the best k rows for each unit query, best first."""
        keys = self.keys[: self.size]
        out = []
        for row in products(queries, self.vectors[: self.size]):
            chosen = top(keys, row, k)
            out.append((keys[chosen], row[chosen]))
        return out


class VecMirror:
    def __init__(self, kind: str) -> None:
        self._kind = kind
        self._blocks: dict[str, _Block] = {}
        self._confirmed = 0  # every committed row up to this key is held
        self._held = 0  # the highest key held, provisional rows included
        self._generation: int | None = None  # vec_generation.rewrites the copy was read under
        self._chunked: bool | None = None  # vec_rows may read the table's shadow tables
        self._lock = threading.Lock()

    def search(
        self, queries: np.ndarray, k: int, scopes: list[str] | None = None
    ) -> list[list[Hit]]:
        """Best k rows of the scopes (None: every scope) for each query, ties to the smaller
        rowid; a row without a direction (a zero vector) is never returned."""
        with self._lock:
            # Provisional rows (a write transaction's, this thread's or another's) are checked
            # again every time: a reading reuses only what committed.
            if self._held > self._confirmed or first_read(self):
                self._catch_up()
            wanted = self._blocks if scopes is None else dict.fromkeys(scopes)
            chosen = [
                (scope, block)
                for scope in wanted
                if (block := self._blocks.get(scope)) is not None and block.size
            ]
            if not chosen or k <= 0:
                return [[] for _ in queries]
            unit = units(np.asarray(queries, dtype=np.float32))
            parts = [block.best(unit, k) for _, block in chosen]
        names = [scope for scope, _ in chosen]
        return [_merged([found[i] for found in parts], names, k) for i in range(len(unit))]

    def _catch_up(self) -> None:
        # Drop what a transaction that never committed left, then read everything above the
        # last committed key (in a write transaction: its own rows, provisionally). A moved
        # rewrite count means rows below that key changed: read everything.
        if self._held > self._confirmed:
            for block in self._blocks.values():
                block.cut(self._confirmed)
            self._held = self._confirmed
        found: vec_rows.Rows | None = None
        if self._chunked:
            generation, highest, found = vec_rows.news(self._kind, self._confirmed)
        else:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT rewrites, top FROM vec_generation WHERE kind = %s", [self._kind]
                )
                generation, highest = cursor.fetchone() or (None, None)
        # A top below what the copy confirmed: rows were taken away without a rewrite (a
        # restored or swapped store file): read everything again.
        fell = highest is not None and highest < self._confirmed
        if generation != self._generation or self._chunked is None or fell:
            self._blocks, self._confirmed, self._held, found = {}, 0, 0, None
            self._generation = generation
            self._chunked = vec_rows.chunked(self._kind)
        if found is None and (highest is None or highest > self._confirmed):
            found = vec_rows.rows_above(self._kind, self._confirmed, from_chunks=self._chunked)
        for scope, (keys, vectors) in (found or {}).items():
            self._blocks.setdefault(scope, _Block()).extend(keys, vectors)
            self._held = max(self._held, int(keys[-1]))
        if not connection.in_atomic_block:
            # Every committed row up to `top` was there to read: the table holds none above
            # the rows read but those written since (a write below `top` moves the count).
            self._confirmed = self._held = max(self._held, highest or 0)
        elif self._held > self._confirmed:
            newest = self._held
            transaction.on_commit(lambda: self._confirm(newest))

    def _confirm(self, newest: int) -> None:
        with self._lock:
            self._confirmed = max(self._confirmed, min(newest, self._held))


def _merged(found: list[tuple[np.ndarray, np.ndarray]], names: list[str], k: int) -> list[Hit]:
    if len(found) == 1:
        (keys, scores), where = found[0], np.zeros(len(found[0][0]), dtype=np.int64)
    else:
        keys = np.concatenate([keys for keys, _ in found])
        scores = np.concatenate([scores for _, scores in found])
        where = np.concatenate([np.full(len(keys), i) for i, (keys, _) in enumerate(found)])
        best = top(keys, scores, k)
        keys, scores, where = keys[best], scores[best], where[best]
    return [
        (key, score, names[i])
        for key, score, i in zip(keys.tolist(), scores.tolist(), where.tolist(), strict=True)
    ]


def _units_in_place(vectors: np.ndarray) -> np.ndarray:
    """matrix.units without the copy (the same division, so the same floats)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors /= np.where(norms > 0, norms, np.nan).astype(np.float32)
    return vectors


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown
