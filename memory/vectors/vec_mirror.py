"""An in-process float32 copy of one sqlite-vec table, for the one search that spans all scopes.

sqlite-vec answers a search over every scope with a brute-force scan of the whole table for each
query vector: remembering a batch cost ~10 ms per item at 20k memories and grew with the store
(corroboration, spec §6.3). This copy answers a whole batch with one matrix product.

Rows are mostly written with ever higher rowids (a memory's vector is written when the memory is
created), so the copy is a list in rowid order that catches up on the rows above the last rowid
it holds. Any other write (a re-embedding, a backfill, a delete), from this process or another,
bumps the kind's count in `vec_generation`; a search that finds the count moved drops the copy
and reads the table again in full. SQLite has one writer at a time, so a search inside a write
transaction may see that transaction's own rows and count: they stay provisional until it
commits, and a search after a rollback reads the rows above the last committed rowid again (and
the whole table, if the rolled-back transaction had moved the count).
"""

from __future__ import annotations

import threading

import numpy as np
from django.db import connection, transaction

from memory.embeddings import DIMENSIONS, known_vector
from memory.vectors.matrix import top, units

Hit = tuple[int, float, str]  # (rowid, cosine, scope)


class VecMirror:
    def __init__(self, kind: str) -> None:
        self._kind = kind
        self._table = f"vec_{kind}"
        self._vectors = np.zeros((0, DIMENSIONS), dtype=np.float32)
        self._keys = np.zeros(0, dtype=np.int64)
        self._scopes = np.zeros(0, dtype=np.int32)
        self._names: list[str] = []
        self._number: dict[str, int] = {}
        self._size = 0
        self._confirmed = 0  # every committed row up to this key is held
        self._generation: int | None = None  # vec_generation.rewrites the copy was read under
        self._lock = threading.Lock()

    def search(self, queries: np.ndarray, k: int) -> list[list[Hit]]:
        """Best k rows over every scope for each query, ties to the smaller rowid."""
        with self._lock:
            self._catch_up()
            vectors, keys, scopes = (
                self._vectors[: self._size],
                self._keys[: self._size],
                self._scopes[: self._size],
            )
            if not self._size or k <= 0:
                return [[] for _ in queries]
            scores = units(np.asarray(queries, dtype=np.float32)) @ vectors.T
            found = []
            for row in scores:
                best = top(keys, row, k)
                found.append(
                    [(int(keys[i]), float(row[i]), self._names[scopes[i]]) for i in best.tolist()]
                )
            return found

    def _catch_up(self) -> None:
        # Drop what a transaction that never committed left, then read everything above the
        # last committed key (in a write transaction: its own rows, provisionally). A moved
        # rewrite count means rows below that key changed: read everything.
        self._size = int(np.searchsorted(self._keys[: self._size], self._confirmed, side="right"))
        with connection.cursor() as cursor:
            cursor.execute("SELECT rewrites FROM vec_generation WHERE kind = %s", [self._kind])
            found = cursor.fetchone()
            generation = found[0] if found else None
            if generation != self._generation:
                self._size = self._confirmed = 0
                self._generation = generation
            cursor.execute(
                f"SELECT rowid, scope, embedding FROM {self._table} "
                "WHERE rowid > %s ORDER BY rowid",
                [self._confirmed],
            )
            rows = cursor.fetchall()
        if rows:
            self._append(rows)
        newest = int(self._keys[self._size - 1]) if self._size else 0
        if not connection.in_atomic_block:
            self._confirmed = max(self._confirmed, newest)
        elif newest > self._confirmed:
            transaction.on_commit(lambda: self._confirm(newest))

    def _confirm(self, newest: int) -> None:
        with self._lock:
            held = int(self._keys[self._size - 1]) if self._size else 0
            self._confirmed = max(self._confirmed, min(newest, held))

    def _append(self, rows: list[tuple[int, str, bytes]]) -> None:
        need = self._size + len(rows)
        if need > len(self._keys):
            capacity = max(need, 2 * len(self._keys), 1024)
            self._vectors = _grown(self._vectors, capacity)
            self._keys = _grown(self._keys, capacity)
            self._scopes = _grown(self._scopes, capacity)
        end = self._size + len(rows)
        vectors = [known_vector(b) for _, _, b in rows]
        self._vectors[self._size : end] = units(np.stack(vectors))
        self._keys[self._size : end] = [pk for pk, _, _ in rows]
        self._scopes[self._size : end] = [self._scope_number(scope) for _, scope, _ in rows]
        self._size = end

    def _scope_number(self, scope: str) -> int:
        number = self._number.get(scope)
        if number is None:
            number = self._number[scope] = len(self._names)
            self._names.append(scope)
        return number


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown
