"""The sqlite-vec backend: `vec0` tables partitioned by scope, cosine distance, brute force."""

from __future__ import annotations

import numpy as np
from django.db import connection

from memory.embeddings import to_blob
from memory.vectors import check_kind as _check_kind


class SqliteVecIndex:
    """vec0 tables partitioned by scope, cosine distance, brute force (exact)."""

    name = "sqlite-vec"

    def upsert(self, kind: str, row_id: int, scope: str, vector: np.ndarray) -> None:
        _check_kind(kind)
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM vec_{kind} WHERE rowid = %s", [row_id])
            cursor.execute(
                f"INSERT INTO vec_{kind}(rowid, scope, embedding) VALUES (%s, %s, %s)",
                [row_id, scope, to_blob(vector)],
            )

    def delete(self, kind: str, row_id: int) -> None:
        _check_kind(kind)
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM vec_{kind} WHERE rowid = %s", [row_id])

    def knn(
        self, kind: str, vector: np.ndarray, k: int, scopes: list[str]
    ) -> list[tuple[int, float]]:
        _check_kind(kind)
        blob = to_blob(vector)
        hits: list[tuple[int, float]] = []
        with connection.cursor() as cursor:
            for scope in scopes:
                cursor.execute(
                    f"SELECT rowid, distance FROM vec_{kind} "
                    "WHERE embedding MATCH %s AND k = %s AND scope = %s",
                    [blob, k, scope],
                )
                hits.extend((int(row_id), 1.0 - float(distance)) for row_id, distance in cursor)
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits[:k]

    def knn_all_scopes(self, kind: str, vector: np.ndarray, k: int) -> list[tuple[int, float, str]]:
        """(id, cosine, scope) over every partition at once: one scan instead of one per scope."""
        _check_kind(kind)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT rowid, distance, scope FROM vec_{kind} "
                "WHERE embedding MATCH %s AND k = %s",
                [to_blob(vector), k],
            )
            return [
                (int(row_id), 1.0 - float(distance), scope) for row_id, distance, scope in cursor
            ]

    def knn_all_scopes_many(
        self, kind: str, vectors: np.ndarray, k: int
    ) -> list[list[tuple[int, float, str]]]:
        return [self.knn_all_scopes(kind, vector, k) for vector in vectors]
