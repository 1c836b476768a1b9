"""One scope, one spelling (issue 26, 14), over a real `mcp_serve` on stdio.

A scope written in NFD (`e` + combining acute) is the same scope as its NFC form, so the
memories remembered under one are recalled under the other. A scope holding an invisible
format character (a zero-width space, U+200B) is refused as invalid_input naming `scope`,
instead of silently becoming a new, empty scope.
"""

from __future__ import annotations

import pytest

from tests.e2e_support import McpClient, server_fixture

mcp = server_fixture()
NFC = "project:caf\u00e9-billing"
NFD = "project:cafe\u0301-billing"
FACT = "Café billing closes the books on the third working day of each month."


def _activate(mcp: McpClient, scope: str) -> dict:
    return mcp.call(
        "slowave_activate",
        {"task": "When does café billing close the books?", "initial_goal": "g", "scope": scope},
    )


@pytest.mark.slow
def test_an_nfd_scope_is_the_same_scope_as_its_nfc_spelling(mcp: McpClient) -> None:
    opened = _activate(mcp, NFC)
    assert opened["ok"], opened
    stored = mcp.call(
        "slowave_remember",
        {"scope": NFC, "session_id": opened["data"]["session_id"], "content": FACT, "type": "fact"},
    )
    assert stored["ok"], stored
    again = _activate(mcp, NFD)
    assert again["ok"], again
    found = mcp.call(
        "slowave_recall",
        {"scope": NFD, "session_id": again["data"]["session_id"], "query": "close the books"},
    )
    assert found["ok"], found
    assert FACT in str(found["data"]), found


@pytest.mark.slow
@pytest.mark.parametrize("invisible", ["\u200b", "\u2060", "\ufeff", "\u00ad"])
def test_a_scope_with_a_format_character_is_refused_naming_the_field(
    mcp: McpClient, invisible: str
) -> None:
    refused = _activate(mcp, f"project:cafe{invisible}-billing")
    assert not refused["ok"], refused
    error = refused["error"]
    assert error["code"] == "invalid_input", error
    assert "scope" in str(error), error
    assert "Cf" in str(error), error
