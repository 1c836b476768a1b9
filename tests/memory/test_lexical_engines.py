"""The lexical parity test: every engine (SQLite FTS5, PostgreSQL tsvector) finds the same rows,
counts the same document frequencies and forgets and moves rows alike, on the same data.

Scores differ by design (bm25 against ts_rank_cd; only ranks are fused downstream), so the
test compares the rows found and the best row where one row holds every term.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.engines import storage_engine

BASE = 9_100_000  # keys far above any real row: the FTS5 tables outlive a test's flush
ROWS = {
    1: ("project:a", "The billing queue runs on Redis"),
    2: ("project:a", "Rotate the billing keys every month"),
    3: ("project:b", "Billing keys live in the vault"),
    4: ("project:b", "Deploys run on Fridays"),
}


def lexical_findings() -> dict[str, object]:
    """What the engine of the database in use finds at each step, keys relative to BASE."""
    from memory import lexical

    def found(text: str, scopes: list[str]) -> list[int]:
        return sorted(key - BASE for key, _ in lexical.search("procedure", text, scopes, 10))

    for key, (scope, content) in ROWS.items():
        lexical.index("procedure", BASE + key, scope, content)
    seen: dict[str, object] = {
        "engine": lexical.get_engine().name,
        "billing in a": found("billing", ["project:a"]),
        "billing keys anywhere": found("Billing KEYS?", ["project:a", "project:b"]),
        "best of billing keys in a": [
            key - BASE for key, _ in lexical.search("procedure", "billing keys", ["project:a"], 1)
        ],
        "vault in a": found("vault", ["project:a"]),
        "no token": found("?!", ["project:a"]),
        "no scope": found("billing", []),
        "frequencies in a": lexical.document_frequencies(
            "procedure", ["billing", "keys", "redis", "nothing"], ["project:a"]
        ),
    }
    lexical.remove("procedure", BASE + 2)
    lexical.remove("procedure", BASE + 99)  # never indexed: no error
    seen["keys in a after a removal"] = found("keys", ["project:a"])
    lexical.index("procedure", BASE + 4, "project:a", "Deploys run on Fridays, billing too")
    seen["fridays after a move"] = [found("fridays", ["project:b"]), found("fridays", ["project:a"])]
    for key in (*ROWS, 99):
        lexical.remove("procedure", BASE + key)
    return seen


EXPECTED = {
    "billing in a": [1, 2],
    "billing keys anywhere": [1, 2, 3],
    "best of billing keys in a": [2],
    "vault in a": [],
    "no token": [],
    "no scope": [],
    "frequencies in a": {"billing": 2, "keys": 1, "redis": 1, "nothing": 0},
    "keys in a after a removal": [],
    "fridays after a move": [[], [4]],
}


@pytest.mark.django_db
def test_fts5_finds_what_the_parity_test_expects():
    seen = lexical_findings()
    assert seen.pop("engine") == "fts5" and storage_engine().name == "sqlite"
    assert seen == EXPECTED


@pytest.mark.django_db  # nothing here touches SQLite; the findings come from PostgreSQL
def test_tsvector_finds_what_the_parity_test_expects(tmp_path: Path):
    from tests.pg_support import findings_on_postgres

    seen = findings_on_postgres(
        tmp_path,
        "lexical_findings()",
        "from tests.memory.test_lexical_engines import lexical_findings",
    )
    assert seen.pop("engine") == "tsvector"
    assert seen == EXPECTED
