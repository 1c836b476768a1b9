"""Memories and queries without a word (punctuation, emoji, CJK, a zero-width space) are stored,
found and never break their scope, on both embedders and both vector backends.

With the hash embedder such text once had a zero vector: sqlite-vec gave its cosine as NULL,
and every later activate and recall in the scope failed with an internal error.
"""

from __future__ import annotations

from tests.acceptance.cycle import activate, fresh_scope, ok, remember
from tests.e2e_support import server_fixture

hashed = server_fixture(env={"SLOWAVE_EMBEDDER": "hash"}, databases=("sqlite", "postgresql"))
TOKENLESS = ["!!!", "🙂🙂", "会议在星期三举行", "\u200b"]
QUERIES = ["!!!", "?", "🙂", "会议", "When do deploys run?"]


def _recall(server, scope: str, session_id: str, query: str) -> dict:
    return ok(
        server.call("slowave_recall", {"session_id": session_id, "scope": scope, "query": query})
    )


def _exercise(server) -> dict[str, dict]:
    """Remember word-less text beside a plain fact, then activate and recall in the scope."""
    scope = fresh_scope("tokenless")
    opened = activate(server, scope, "Keep notes in any script")
    ids = {
        text: remember(server, scope, opened["session_id"], text)["memory_id"] for text in TOKENLESS
    }
    ids["deploys"] = remember(
        server, scope, opened["session_id"], "Deploys run on Fridays after the freeze"
    )["memory_id"]
    again = activate(server, scope, "When do deploys run?")
    assert ids["deploys"] in [m["memory_id"] for m in again["memories"]], again
    assert ok(server.call("slowave_activate", {"task": "!!!", "initial_goal": "?", "scope": scope}))
    found = {query: _recall(server, scope, again["session_id"], query) for query in QUERIES}
    found["ids"] = ids
    return found


def test_it_finds_and_survives_tokenless_memories_with_the_hash_embedder(hashed) -> None:
    found = _exercise(hashed)
    ids = found.pop("ids")

    def recalled(query: str) -> list[str]:
        return [m["memory_id"] for m in found[query]["memories"]]

    # The hash embedder reads characters when there is no word: like text meets like.
    assert ids["!!!"] in recalled("!!!")
    assert ids["🙂🙂"] in recalled("🙂")
    assert ids["会议在星期三举行"] in recalled("会议")
    assert ids["deploys"] in recalled("When do deploys run?")


def test_it_survives_tokenless_memories_with_the_model(mcp) -> None:
    found = _exercise(mcp)
    ids = found.pop("ids")
    assert ids["deploys"] in [m["memory_id"] for m in found["When do deploys run?"]["memories"]]
