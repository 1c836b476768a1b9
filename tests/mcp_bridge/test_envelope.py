"""Envelope wrapping in-process: error mapping at the MCP edge and the reply shape."""

from __future__ import annotations

import json
import logging

import pytest
from django.db import OperationalError

from mcp_bridge.server import _result, error_envelope, execute_tool


def test_it_hides_unexpected_failures_behind_a_retryable_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcp_bridge.server"):
        try:
            raise RuntimeError("secret detail")
        except RuntimeError as exc:
            envelope = error_envelope(exc, "slowave_recall")
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "internal_error"
    assert envelope["error"]["retryable"] is True
    assert "secret detail" not in envelope["error"]["message"]
    assert "secret detail" in caplog.text  # the operator gets the traceback on stderr


def test_it_reports_a_locked_database_as_storage_busy() -> None:
    envelope = error_envelope(OperationalError("database is locked"), "slowave_remember")
    assert envelope["error"] == {
        "code": "storage_busy",
        "message": envelope["error"]["message"],
        "retryable": True,
    }


@pytest.mark.django_db
def test_it_answers_an_unknown_tool_without_touching_a_service() -> None:
    envelope = execute_tool("slowave_nope", {}, ("client", "1"))
    assert envelope["error"]["code"] == "invalid_input"


@pytest.mark.parametrize(
    "envelope", [{"ok": True, "data": {"n": 1}}, {"ok": False, "error": {"code": "x"}}]
)
def test_it_mirrors_the_envelope_in_text_structure_and_is_error(envelope: dict) -> None:
    result = _result(envelope)
    assert result.structured_content == envelope
    assert json.loads(result.content[0].text) == envelope
    assert result.is_error is (not envelope["ok"])
