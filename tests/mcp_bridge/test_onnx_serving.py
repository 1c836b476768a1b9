"""mcp_serve embeds through ONNX Runtime and never loads torch (the export exists: the session
made it, tests/conftest.py), over stdio with the SDK's client."""

from __future__ import annotations

from tests.acceptance.cycle import activate, fresh_scope, remember
from tests.e2e_support import mapped_files, server_fixture

mcp = server_fixture()


def _codes(reply: dict) -> set[str]:
    return {warning["code"] for warning in reply.get("warnings", [])}


def test_it_answers_by_meaning_with_onnx_and_without_torch(mcp) -> None:
    scope = fresh_scope("onnx")
    opened = activate(mcp, scope, "Set up the billing service")
    remember(mcp, scope, opened["session_id"], "Invoices are stored in PostgreSQL on db-billing-2.")
    # No word in common with the memory: only the model can find it.
    reply = activate(mcp, scope, "Which database keeps the bills?")
    assert "lexical_only" not in _codes(reply), reply
    assert any("db-billing-2" in m["content"] for m in reply["memories"]), reply

    libraries = mapped_files(mcp.pid)
    assert any("onnxruntime" in path for path in libraries)
    assert not [path for path in libraries if "libtorch" in path]
    assert not [path for path in libraries if "DeveloperTools" in path]  # no telemetry store
    stderr = mcp.stderr_text()
    assert "exporting the embedding model" not in stderr and "embedding with torch" not in stderr
