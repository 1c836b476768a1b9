"""The pgvector backend: vectors live in PostgreSQL, one `vector(384)` table per kind (spec §4).

Tables `pgv_<kind>` (key, scope, embedding) with an HNSW index on cosine distance and a b-tree on
scope (migration 0012). No process holds a copy of the vectors: every search is one SQL
statement, so a transaction sees its own writes and what others committed, as any row does.

Exact where it is cheap, approximate only where it must be: a search whose scopes hold at most
`EXACT_LIMIT` rows scans them (the order expression is one the index cannot serve), and a larger
one walks the HNSW index with pgvector 0.8's iterative scan, which keeps reading the graph until
k rows pass the scope filter, in exact distance order. Ties are broken by the smaller key, as
the exact backends do.
"""

from __future__ import annotations

import itertools
import math
import threading
from typing import Any

import numpy as np
from django.db import connection, transaction

from memory.vectors import KINDS, check_kind, seed_rows
from memory.vectors.matrix import top

# Up to this many rows in the searched scopes a search is an exact scan; above it, the HNSW
# walk. Measured on real MiniLM vectors (8,000 LongMemEval-S turns, 400 questions, a loaded
# 2-core machine): an exact scan costs ~2.5 us a row (19.6 ms p50 at 8,000), the walk 6-10 ms
# p50 at any of these sizes, so they cost the same near 5,000 rows.
EXACT_LIMIT = 5_000
# How wide the HNSW walk looks (pgvector's hnsw.ef_search; at least 2k). Against exact search
# on the vectors above, recall@10 was 0.985 (one scope of three) and 0.994 (every scope) at
# 100, 0.996 and 0.9997 at 200, for +40 % time (6.1 -> 8.9 ms p50).
EF_SEARCH = 200
# Rows an iterative scan may visit before it gives up on a scope filter that few rows pass.
MAX_SCAN_TUPLES = 40_000

Hit = tuple[int, float, str]  # (key, cosine, scope)
# Settings of a walk, until the transaction ends (set_config's `true`: SET LOCAL): an iterative
# scan in exact distance order, and no plan but the HNSW index (the planner would otherwise pick
# a scan and a sort, or the scope index, where it guesses them cheaper).
WALK = (
    "SELECT set_config('hnsw.iterative_scan', 'strict_order', true), "
    "set_config('hnsw.ef_search', %s, true), set_config('hnsw.max_scan_tuples', %s, true), "
    "set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), "
    "set_config('enable_sort', 'off', true)"
)


def literal(vector: np.ndarray) -> str:
    """pgvector's text form; float32 values printed exactly (each value's shortest repr as a
    Python float: `tolist` hands them over as floats without a numpy scalar each)."""
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


def _storable(vector: np.ndarray) -> bool:
    """A vector with a direction: a zero or non-finite one has no cosine and never ranks (the
    exact backends skip it too); pgvector refuses NaN outright."""
    values = np.asarray(vector, dtype=np.float32)
    return bool(np.isfinite(values).all()) and bool(np.any(values))


class PgvectorIndex:
    name = "pgvector"

    def __init__(self) -> None:
        self._seeded = False
        self._lock = threading.Lock()

    def upsert(self, kind: str, row_id: int, scope: str, vector: np.ndarray) -> None:
        self.upsert_many(kind, [(row_id, scope, vector)])

    def upsert_many(self, kind: str, rows: list[tuple[int, str, np.ndarray]]) -> None:
        """upsert of each row in order, in one statement for the batch (and one more for the
        keys whose last vector has no direction, which leave the table)."""
        check_kind(kind)
        final = {row_id: (scope, vector) for row_id, scope, vector in rows}  # a key's last write
        kept = [(k, scope, v) for k, (scope, v) in final.items() if _storable(v)]
        gone = [k for k, (_, v) in final.items() if not _storable(v)]
        with connection.cursor() as cursor:
            if kept:
                cursor.execute(
                    f"INSERT INTO pgv_{kind} (key, scope, embedding) "
                    "SELECT * FROM unnest(%s::bigint[], %s::varchar[], %s::vector[]) "
                    "ON CONFLICT (key) DO UPDATE SET scope = EXCLUDED.scope, "
                    "embedding = EXCLUDED.embedding",
                    [
                        [k for k, _, _ in kept],
                        [s for _, s, _ in kept],
                        [literal(v) for _, _, v in kept],
                    ],
                )
            if gone:
                cursor.execute(f"DELETE FROM pgv_{kind} WHERE key = ANY(%s)", [gone])

    def delete(self, kind: str, row_id: int) -> None:
        check_kind(kind)
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM pgv_{kind} WHERE key = %s", [row_id])

    def knn(
        self, kind: str, vector: np.ndarray, k: int, scopes: list[str]
    ) -> list[tuple[int, float]]:
        check_kind(kind)
        if k <= 0 or not scopes or not _storable(vector):
            return []
        where, params = "WHERE scope = ANY(%s)", [list(scopes)]
        hits = self._search(kind, [vector], k, where, params)[0]
        return [(key, cosine) for key, cosine, _ in hits]

    def knn_all_scopes(self, kind: str, vector: np.ndarray, k: int) -> list[Hit]:
        return self.knn_all_scopes_many(kind, np.asarray(vector)[None, :], k)[0]

    def knn_all_scopes_many(self, kind: str, vectors: np.ndarray, k: int) -> list[list[Hit]]:
        check_kind(kind)
        queries = list(np.asarray(vectors))
        found: list[list[Hit]] = [[] for _ in queries]
        asked = [i for i, query in enumerate(queries) if _storable(query)]
        if k <= 0 or not asked:
            return found
        hits = self._search(kind, [queries[i] for i in asked], k, "", [])
        for i, rows in zip(asked, hits, strict=True):
            found[i] = rows
        return found

    def _search(
        self, kind: str, queries: list[np.ndarray], k: int, where: str, params: list[Any]
    ) -> list[list[Hit]]:
        """Best k rows for each query, one statement for the batch (a lateral join)."""
        if not self._seeded:
            with self._lock:
                if not self._seeded:
                    _seed()
                    self._seeded = True
        if self._small(kind, where, params):
            return self._run(kind, queries, k, where, params, exact=True)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(WALK, [str(max(EF_SEARCH, 2 * k)), str(MAX_SCAN_TUPLES)])
            return self._run(kind, queries, k, where, params, exact=False)

    @staticmethod
    def _small(kind: str, where: str, params: list[Any]) -> bool:
        """At most EXACT_LIMIT rows to search: counting stops one past the limit."""
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM pgv_{kind} {where} LIMIT %s) AS capped",
                [*params, EXACT_LIMIT + 1],
            )
            (count,) = cursor.fetchone()
        return int(count) <= EXACT_LIMIT

    @staticmethod
    def _run(
        kind: str,
        queries: list[np.ndarray],
        k: int,
        where: str,
        params: list[Any],
        *,
        exact: bool,
    ) -> list[list[Hit]]:
        # Rows tied with the k-th may sit past it in the index's order: ask for a few more
        # and cut by (cosine, key) here.
        with connection.cursor() as cursor:
            cursor.execute(
                statement(kind, where, exact), [[literal(q) for q in queries], *params, k + 8]
            )
            rows = cursor.fetchall()
        per_query: list[list[tuple[int, float, str]]] = [[] for _ in queries]
        for i, key, distance, scope in rows:
            if distance is not None and math.isfinite(distance):
                per_query[i - 1].append((int(key), 1.0 - float(distance), scope))
        return [_best(found, k) for found in per_query]


def statement(kind: str, where: str, exact: bool) -> str:
    """The search: params (query vectors, the `where` clause's, limit). `+ 0` hides the
    distance from the planner, which can then only scan (exact); without it, under WALK's
    settings, the HNSW index serves the ORDER BY."""
    distance = "(t.embedding <=> q.v) + 0" if exact else "t.embedding <=> q.v"
    order = "distance, t.key" if exact else "distance"
    return (
        "SELECT q.i, hit.key, hit.distance, hit.scope "
        "FROM unnest(%s::vector[]) WITH ORDINALITY AS q(v, i) CROSS JOIN LATERAL ("
        f"SELECT t.key, t.scope, {distance} AS distance FROM pgv_{kind} AS t {where} "
        f"ORDER BY {order} LIMIT %s) AS hit"
    )


def _seed() -> None:
    """First use over a store whose vectors live elsewhere (it ran on numpy or sqlite-vec
    before): copy the embeddings its rows hold (memory.vectors' seed_rows) into each empty
    table. The table lock makes a second process wait, then find the table filled."""
    for kind in KINDS:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT EXISTS (SELECT 1 FROM pgv_{kind})")
            (filled,) = cursor.fetchone()
        if filled:
            continue
        rows = seed_rows(kind)
        if rows is None:
            continue
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE pgv_{kind} IN SHARE ROW EXCLUSIVE MODE")
            cursor.execute(f"SELECT EXISTS (SELECT 1 FROM pgv_{kind})")
            if cursor.fetchone()[0]:
                continue
            sql = f"COPY pgv_{kind} (key, scope, embedding) FROM STDIN"
            # The rows are read as they are consumed (a server-side cursor on this connection),
            # so each batch is read before its COPY starts.
            source = iter(rows)
            while batch := list(itertools.islice(source, 2000)):
                with cursor.cursor.copy(sql) as copy:  # psycopg's COPY: one round trip
                    for key, scope, blob in batch:
                        vector = np.frombuffer(blob, dtype=np.float32)
                        if _storable(vector):
                            copy.write_row((key, scope, literal(vector)))


def _best(found: list[Hit], k: int) -> list[Hit]:
    if not found:
        return []
    keys = np.array([key for key, _, _ in found], dtype=np.int64)
    scores = np.array([cosine for _, cosine, _ in found], dtype=np.float64)
    return [found[i] for i in top(keys, scores, k).tolist()]
