"""FTS5 rows carry their scope as an indexed token: lexical search and document frequencies
see only the asked scopes, and stores written before the token existed are rebuilt with it."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.db import connection

from memory import lexical

rebuild = importlib.import_module("memory.migrations.0008_fts_scope_key").rebuild
BASE = 7_000_000  # keys far above any real row: the FTS tables outlive a test's flush


@pytest.fixture
def clean_procedures():
    yield
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM fts_procedure WHERE rowid >= %s", [BASE])


@pytest.mark.django_db(transaction=True)
def test_a_store_from_before_scope_keys_is_rebuilt_and_searched_by_scope(clean_procedures):
    with connection.cursor() as cursor:  # the table as migration 0002 made it
        cursor.execute("DROP TABLE fts_procedure")
        cursor.execute(
            "CREATE VIRTUAL TABLE fts_procedure USING fts5(content, scope UNINDEXED, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        cursor.executemany(
            "INSERT INTO fts_procedure(rowid, content, scope) VALUES (%s, %s, %s)",
            [
                (BASE + 1, "rotate the billing keys", "project:a"),
                (BASE + 2, "rotate the search keys", "project:b"),
                (BASE + 3, "billing runs nightly", "project:b"),
            ],
        )
    rebuild(None, SimpleNamespace(connection=connection))

    def found(scopes: list[str]) -> list[int]:
        return sorted(key for key, _ in lexical.search("procedure", "billing keys", scopes, 10))

    assert found(["project:a"]) == [BASE + 1]
    assert found(["project:b"]) == [BASE + 2, BASE + 3]
    assert found(["project:a", "project:b"]) == [BASE + 1, BASE + 2, BASE + 3]
    assert found(["project:c"]) == []
    assert lexical.document_frequencies("procedure", ["billing", "keys"], ["project:b"]) == {
        "billing": 1,
        "keys": 1,
    }
    lexical.index("procedure", BASE + 4, "project:a", "billing keys again")
    assert found(["project:a"]) == [BASE + 1, BASE + 4]


def test_scope_keys_are_single_tokens_that_tell_scopes_apart():
    keys = {lexical.scope_key(s) for s in ("project:a", "project:a-b", "client:a", "global")}
    assert len(keys) == 4
    assert all(key.isalnum() for key in keys)
