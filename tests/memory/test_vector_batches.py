"""sqlite-vec takes a batch of vectors in three statements (SqliteVecIndex.upsert_many): the
rows and the rewrite count the in-process copies watch (vec_generation) end as one upsert at a
time would leave them, whatever the order of the keys."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from memory.vectors.sqlite_vec import SqliteVecIndex

pytestmark = pytest.mark.django_db
BASE = 8_500_000  # far above any real row


def _vectors(n: int) -> np.ndarray:
    vectors = np.random.default_rng(11).normal(size=(n, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _state() -> tuple[int, int, list[tuple[int, str]]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT rewrites, top FROM vec_generation WHERE kind = 'episode'")
        rewrites, top = cursor.fetchone()
        cursor.execute(
            "SELECT rowid, scope FROM vec_episode WHERE rowid >= %s ORDER BY rowid", [BASE]
        )
        return rewrites, top, [(int(r), s) for r, s in cursor]


def _reset() -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM vec_episode WHERE rowid >= %s", [BASE])
        cursor.execute(
            "UPDATE vec_generation SET rewrites = 0, top = %s WHERE kind = 'episode'", [BASE + 4]
        )


@pytest.mark.parametrize(
    "offsets",
    [[5, 6, 7], [5, 3, 10], [2, 1, 9, 9, 4], [1]],
    ids=["new-rows", "a-rewrite-between", "rewrites-and-a-repeat", "one-below-top"],
)
def test_a_batch_ends_as_one_upsert_at_a_time_would(offsets: list[int]) -> None:
    index, vectors = SqliteVecIndex(), _vectors(len(offsets))
    rows = [(BASE + o, f"project:{o % 2}", v) for o, v in zip(offsets, vectors, strict=True)]
    _reset()
    for row_id, scope, vector in rows:
        index.upsert("episode", row_id, scope, vector)
    one_by_one = _state()
    _reset()
    index.upsert_many("episode", rows)
    assert _state() == one_by_one
