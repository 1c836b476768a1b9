"""The sqlite-vec backend: `vec0` tables partitioned by scope, cosine distance, exact; searched
through an in-process copy of each table (vec_mirror), which sqlite-vec's tables keep fresh.

`vec_generation` (migration 0009) counts, per kind, the writes that are not new rows above every
other, so an in-process copy of a table learns of another process's rewrites."""

from __future__ import annotations

import numpy as np
from django.db import connection

from memory.embeddings import to_blob
from memory.vectors import check_kind as _check_kind
from memory.vectors.vec_mirror import VecMirror


class SqliteVecIndex:
    """vec0 tables partitioned by scope, cosine distance, brute force (exact)."""

    name = "sqlite-vec"

    def __init__(self) -> None:
        self._mirrors: dict[str, VecMirror] = {}

    def upsert(self, kind: str, row_id: int, scope: str, vector: np.ndarray) -> None:
        self.upsert_many(kind, [(row_id, scope, vector)])

    def upsert_many(self, kind: str, rows: list[tuple[int, str, np.ndarray]]) -> None:
        """upsert of each row in order, in three statements for the batch."""
        _check_kind(kind)
        if not rows:
            return
        keys = [row_id for row_id, _, _ in rows]
        final = {row_id: (scope, vector) for row_id, scope, vector in rows}  # a key's last write
        with connection.cursor() as cursor:
            cursor.executemany(f"DELETE FROM vec_{kind} WHERE rowid = %s", [[k] for k in final])
            cursor.executemany(
                f"INSERT INTO vec_{kind}(rowid, scope, embedding) VALUES (%s, %s, %s)",
                [[row_id, scope, to_blob(vector)] for row_id, (scope, vector) in final.items()],
            )
            # A row at or below the highest one written is a rewrite or a backfill, which the
            # copies of the table (vec_mirror) in every process must read again. A key at or
            # below one written earlier in the batch is one for sure; a key above all of those
            # is one when the table's top was already at or above it.
            below, record, highest = 0, [], None
            for key in keys:
                if highest is not None and key <= highest:
                    below += 1
                else:
                    record.append(key)
                    highest = key
            checks = "".join(" + (%s <= top)" for _ in record)
            cursor.execute(
                f"UPDATE vec_generation SET rewrites = rewrites + %s{checks}, "
                "top = max(top, %s) WHERE kind = %s",
                [below, *record, max(keys), kind],
            )

    def delete(self, kind: str, row_id: int) -> None:
        _check_kind(kind)
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM vec_{kind} WHERE rowid = %s", [row_id])
            if cursor.rowcount > 0:
                cursor.execute(
                    "UPDATE vec_generation SET rewrites = rewrites + 1 WHERE kind = %s", [kind]
                )

    def knn(
        self, kind: str, vector: np.ndarray, k: int, scopes: list[str]
    ) -> list[tuple[int, float]]:
        """The scopes' k nearest rows, as sqlite-vec's search of each partition gives them,
        from the in-process copy of the table (vec_mirror): a fraction of sqlite-vec's scan."""
        _check_kind(kind)
        if not scopes:
            return []
        hits = self._mirror(kind).search(np.asarray(vector)[None, :], k, scopes)[0]
        return [(key, cos) for key, cos, _ in hits]

    def knn_all_scopes(self, kind: str, vector: np.ndarray, k: int) -> list[tuple[int, float, str]]:
        """(id, cosine, scope) over every partition at once."""
        return self.knn_all_scopes_many(kind, np.asarray(vector)[None, :], k)[0]

    def knn_all_scopes_many(
        self, kind: str, vectors: np.ndarray, k: int
    ) -> list[list[tuple[int, float, str]]]:
        """One matrix product over an in-process copy of the table (vec_mirror), not one
        brute-force scan of the whole table per vector."""
        _check_kind(kind)
        return self._mirror(kind).search(vectors, k)

    def _mirror(self, kind: str) -> VecMirror:
        return self._mirrors.get(kind) or self._mirrors.setdefault(kind, VecMirror(kind))
