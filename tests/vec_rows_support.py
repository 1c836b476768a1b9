"""Vector rows a test committed above `base`, removed again: the sqlite-vec tables outlive a
test's flush, and `vec_generation.top` must fall back with them."""

from __future__ import annotations

from django.db import connection


def forget_vec_rows(base: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM vec_memory WHERE rowid >= %s", [base])
        cursor.execute(
            "UPDATE vec_generation SET top = (SELECT coalesce(max(rowid), 0) FROM vec_memory) "
            "WHERE kind = 'memory'"
        )
