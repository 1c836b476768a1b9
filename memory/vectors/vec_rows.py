"""A sqlite-vec table's rows above a key, grouped by scope, read in bulk.

Read through the `vec0` table, a range of rowids is a scan of the whole table (56 ms for one new
row at 100k memories, 3 s for all of them: every row's vector is unpacked one by one). A `vec0`
table keeps its rows in plain shadow tables: `<t>_rowids` (rowid -> chunk, slot), `<t>_chunks`
(a chunk's scope, validity bitmap and rowids) and `<t>_vector_chunks00` (a chunk's vectors as
one float32 blob); a deleted row's validity bit is cleared. Reading those gives the same rows in
0.2 s for 100k. That layout is sqlite-vec's own, so it is read only for tables created by the
version it was checked against (`<t>_info`'s CREATE_VERSION); any other falls back to the scan.
A few new rows are read by rowid through the `vec0` table itself (`news`): a point lookup there
reads one vector, where their chunk's blob holds a thousand.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import numpy as np
from django.db import connection

from memory.embeddings import DIMENSIONS, known_vector

KNOWN_LAYOUT = "v0.1.9"  # tests/memory/test_vec_mirror.py checks it against the table's answers
BATCH = 500  # chunk ids or rowids per IN (...) list
# A chunk holding fewer rows to read than this has them read by rowid (6 us each), not its
# blob (0.7 ms for 1024 slots).
FEW_ROWS = 100

Rows = dict[str, tuple[np.ndarray, np.ndarray]]  # scope -> (keys ascending, float32 vectors)


def chunked(kind: str) -> bool:
    """Whether `vec_<kind>` has the shadow layout read here (fixed when the table is made)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT value FROM vec_{kind}_info WHERE key = 'CREATE_VERSION'")
        found = cursor.fetchone()
    return found is not None and found[0] == KNOWN_LAYOUT


def news(kind: str, key: int) -> tuple[int | None, int | None, Rows | None]:
    """`vec_generation`'s (rewrites, top) for the kind and, when `top` passed `key`, the rows
    above `key`, in one statement: a search that finds nothing new costs one primary-key
    lookup, and one with new rows no more. The new rowids come from `<t>_rowids` (so
    `chunked(kind)` must hold) and each row's scope and vector from the `vec0` table by rowid,
    a point lookup that reads that row's 1.5 KB, where the chunk's vector blob is 1.5 MB."""
    table = f"vec_{kind}"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT g.rewrites, g.top, e.rowid, e.scope, e.embedding "
            f"FROM vec_generation g LEFT JOIN {table}_rowids r ON g.top > %s AND r.rowid > %s "
            f"LEFT JOIN {table} e ON e.rowid = r.rowid "
            "WHERE g.kind = %s ORDER BY r.rowid",
            [key, key, kind],
        )
        found = cursor.fetchall()
    if not found:  # no count kept for the kind: the caller reads the table
        return None, None, None
    keys: dict[str, list[int]] = defaultdict(list)
    blobs: dict[str, list[bytes]] = defaultdict(list)
    for _, _, rowid, scope, blob in found:
        if blob is None:  # nothing new, or a row deleted since its rowid was read
            continue
        keys[str(scope)].append(int(rowid))
        blobs[str(scope)].append(blob)
    rows = {
        scope: (
            np.array(keys[scope], dtype=np.int64),
            # A writable copy: the mirror scales a new scope's arrays in place.
            np.frombuffer(b"".join(pieces), dtype=np.float32).reshape(-1, DIMENSIONS).copy(),
        )
        for scope, pieces in blobs.items()
    }
    return found[0][0], found[0][1], rows


def rows_above(kind: str, key: int, *, from_chunks: bool) -> Rows:
    """Every row of `vec_<kind>` with a rowid above `key`, by scope, keys ascending;
    `from_chunks`: read the shadow tables (`chunked(kind)` said they have the known layout)."""
    table = f"vec_{kind}"
    return _from_chunks(table, key) if from_chunks else _through_table(table, key)


def _from_chunks(table: str, key: int) -> Rows:
    """Two passes over the chunks holding rows above `key`: their rowids, to size each scope's
    arrays, then their vectors into the arrays: a chunk (1.5 MB) at a time where it holds many
    of the rows, by rowid through the `vec0` table where it holds few (a scope's first chunk
    is mostly empty). The first pass decides the rows: a row deleted or rewritten between the
    two is read as it is then, and its write has moved `vec_generation.rewrites`, so the copy
    is read again."""
    chosen = (
        ""
        if key <= 0
        else f"WHERE chunk_id IN (SELECT chunk_id FROM {table}_rowids WHERE rowid > %s) "
    )
    held: dict[int, tuple[str, np.ndarray, np.ndarray]] = {}  # chunk: scope, slots, keys
    sizes: dict[str, int] = defaultdict(int)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT chunk_id, partition00, validity, rowids FROM {table}_chunks {chosen}",
            [] if key <= 0 else [key],
        )
        for chunk, scope, validity, rowids in cursor:
            slots, keys = _held(validity, rowids, key)
            if len(slots):
                held[int(chunk)] = (str(scope), slots, keys)
                sizes[str(scope)] += len(slots)
        out = {
            scope: (np.empty(n, dtype=np.int64), np.zeros((n, DIMENSIONS), dtype=np.float32))
            for scope, n in sizes.items()
        }
        filled: dict[str, int] = defaultdict(int)

        def fill(chunk: int, vectors: np.ndarray) -> None:
            scope, _, keys = held[chunk]
            at = filled[scope]
            out[scope][0][at : at + len(keys)] = keys
            out[scope][1][at : at + len(keys)] = vectors
            filled[scope] = at + len(keys)

        chunks = sorted(held)
        dense = [chunk for chunk in chunks if len(held[chunk][1]) >= FEW_ROWS]
        query = (
            f"SELECT rowid, vectors FROM {table}_vector_chunks00 WHERE rowid IN ({{}}) "
            "ORDER BY rowid"
        )
        for chunk, vectors in _in_batches(cursor, query, dense):
            matrix = np.frombuffer(vectors, dtype=np.float32).reshape(-1, DIMENSIONS)
            fill(int(chunk), matrix[held[int(chunk)][1]])
        sparse = [chunk for chunk in chunks if len(held[chunk][1]) < FEW_ROWS]
        found = _by_rowid(cursor, table, [int(k) for c in sparse for k in held[c][2]])
        zero = bytes(4 * DIMENSIONS)  # a row gone since the first pass: no direction
        for chunk in sparse:
            blob = b"".join(found.get(int(k), zero) for k in held[chunk][2])
            fill(chunk, np.frombuffer(blob, dtype=np.float32).reshape(-1, DIMENSIONS))
    return {scope: _ascending(keys, vectors) for scope, (keys, vectors) in out.items()}


def _by_rowid(cursor: Any, table: str, keys: list[int]) -> dict[int, bytes]:
    """The vectors of `keys`, a point lookup each through the `vec0` table (the rowids table
    first: a `vec0` table on the outer side of the join would be scanned)."""
    query = (
        f"SELECT e.rowid, e.embedding FROM {table}_rowids r CROSS JOIN {table} e "
        f"ON e.rowid = r.rowid WHERE r.rowid IN ({{}})"
    )
    return {int(rowid): blob for rowid, blob in _in_batches(cursor, query, keys)}


def _in_batches(cursor: Any, query: str, keys: list[int]) -> Iterator[tuple[Any, ...]]:
    """The rows of `query` (its `{}` the IN list) for `keys`, BATCH keys a statement."""
    for start in range(0, len(keys), BATCH):
        batch = keys[start : start + BATCH]
        cursor.execute(query.format(", ".join(["%s"] * len(batch))), batch)
        yield from cursor.fetchall()


def _held(validity: bytes, rowids: bytes, key: int) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's live slots holding rowids above `key`, and those rowids."""
    keys = np.frombuffer(rowids, dtype=np.int64)
    valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
    slots = np.flatnonzero(valid[: len(keys)].astype(bool) & (keys > key))
    return slots, keys[slots]


def _through_table(table: str, key: int) -> Rows:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT rowid, scope, embedding FROM {table} WHERE rowid > %s ORDER BY rowid", [key]
        )
        found = cursor.fetchall()
    parts: dict[str, list[tuple[int, np.ndarray]]] = defaultdict(list)
    for rowid, scope, blob in found:
        parts[str(scope)].append((int(rowid), known_vector(blob)))
    return {
        scope: (
            np.array([k for k, _ in rows], dtype=np.int64),
            np.stack([v for _, v in rows]).astype(np.float32, copy=False),
        )
        for scope, rows in parts.items()
    }


def _ascending(keys: np.ndarray, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A scope's rows by key: as read when they were written in key order, sorted when not (a
    rewritten row sits in a later chunk's slot)."""
    if np.all(keys[1:] > keys[:-1]):
        return keys, vectors
    order = np.argsort(keys, kind="stable")
    return keys[order], vectors[order]
