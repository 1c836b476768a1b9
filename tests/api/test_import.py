"""`POST /api/import` (staff): transcripts and exports, as `slowave import` loads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory.models import Event, Memory, Session
from memory.services.tokens import token_create
from tests.api.support import err, fresh_scope, ok, post
from tests.cli.runner import slowave
from tests.codex_rollouts import exchange, opening

pytestmark = pytest.mark.django_db
REMOTE = {"REMOTE_ADDR": "192.0.2.10"}
LINES = [
    {
        "session_key": "chat-1",
        "role": "user",
        "content": "We moved the API to Go.",
        "occurred_at": "2026-05-08T13:56:00Z",
        "metadata": {"dia_id": "D1:1"},
    },
    {"session_key": "chat-1", "role": "assistant", "content": "Noted: the API is in Go now."},
    {"session_key": "chat-2", "role": "user", "content": "Releases happen on Thursdays."},
]


def _jsonl(rows: list[Any]) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"


def _bearer(*, staff: bool) -> dict[str, str]:
    username = "ops-staff" if staff else "ops-agent"
    get_user_model().objects.create_user(username=username, password="x", is_staff=staff)
    token = token_create(username=username, name="importer", now=timezone.now())[1]
    return {"HTTP_AUTHORIZATION": f"Bearer {token}", **REMOTE}


def test_it_imports_a_transcript_once_and_reports_counts(client) -> None:
    staff, scope = _bearer(staff=True), fresh_scope("import")
    body = {"scope": scope, "content": _jsonl(LINES)}

    dry = ok(post(client, "import", {**body, "dry_run": True}, **staff))
    assert dry["would_create"] == ["chat-1", "chat-2"] and dry["lines"] == 3
    assert not Session.objects.filter(scope=scope).exists()

    report = ok(post(client, "import", body, **staff))
    assert (report["lines"], report["events"]) == (3, 3) and report["episodes"] >= 2
    assert [s["session_key"] for s in report["sessions_created"]] == ["chat-1", "chat-2"]
    sessions = Session.objects.filter(scope=scope)
    assert {s.ended_by for s in sessions} == {"import"}
    assert Event.objects.filter(session__scope=scope).count() == 3

    again = ok(post(client, "import", body, **staff))
    assert again["sessions_skipped"] == ["chat-1", "chat-2"] and again["sessions_created"] == []
    assert sessions.count() == 2


def test_it_keeps_import_from_non_staff(client) -> None:
    scope = fresh_scope("import")
    body = {"scope": scope, "content": _jsonl(LINES)}
    err(post(client, "import", body), 403, "forbidden")  # tokenless loopback is not staff
    err(post(client, "import", body, **_bearer(staff=False)), 403, "forbidden")
    err(post(client, "import", body, **REMOTE), 401, "unauthorized")
    assert not Session.objects.filter(scope=scope).exists()


@pytest.mark.parametrize(
    ("body", "path", "rule"),
    [
        ({"content": "x"}, "scope", "scope is required for a transcript import"),
        ({"scope": "nokind", "content": "x"}, "scope", "scope must use nonblank kind:id form"),
        ({"scope": "project:x", "content": ""}, "content", "at least 1 character"),
        ({"scope": "project:x", "content": "x", "remap": True}, "remap", "format export only"),
        ({"format": "export", "scope": "project:x", "content": "x"}, "scope", "transcript only"),
        ({"format": "export", "dry_run": True, "content": "x"}, "dry_run", "transcript only"),
        ({"format": "csv", "scope": "project:x", "content": "x"}, "format", "'transcript'"),
        ({"scope": "project:x", "content": "x", "file": "/etc/passwd"}, "file", "Extra inputs"),
    ],
)
def test_it_names_the_field_and_rule_of_a_bad_body(client, body, path, rule) -> None:
    error = err(post(client, "import", body, **_bearer(staff=True)), 400, "invalid_input")
    assert [f["path"] for f in error["field_errors"]] == [path]
    assert rule in error["field_errors"][0]["message"], error


def test_it_imports_nothing_when_one_line_is_bad(client) -> None:
    staff, scope = _bearer(staff=True), fresh_scope("import")
    rows = [LINES[0], {**LINES[1], "role": "robot"}, LINES[2]]
    error = err(
        post(client, "import", {"scope": scope, "content": _jsonl(rows)}, **staff),
        400,
        "invalid_input",
    )
    assert error["message"].startswith("line 2: ") and error["field_errors"][0]["path"] == (
        "line 2.role"
    )
    not_json = _jsonl([LINES[0], "{oops"])
    error = err(
        post(client, "import", {"scope": scope, "content": not_json}, **staff), 400, "invalid_input"
    )
    assert error["field_errors"][0]["path"] == "line 2"
    err(post(client, "import", "[1, 2]", **staff), 400, "invalid_input")
    err(post(client, "import", "{not json", **staff), 400, "invalid_input")
    assert not Session.objects.filter(scope=scope).exists()


def test_it_loads_an_export_from_another_store_all_or_nothing(client, tmp_path: Path) -> None:
    # The export comes from a separate store, made through the real CLI.
    home, scope = tmp_path / "other", "project:exported"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(_jsonl(LINES))
    home.mkdir()
    for args in (("migrate", "-v", "0"), ("import", str(transcript), "--scope", scope)):
        done = slowave(home, *args)
        assert done.code == 0, done.err
    exported = slowave(home, "export", "--scope", scope)
    assert exported.code == 0, exported.err
    staff = _bearer(staff=True)

    report = ok(post(client, "import", {"format": "export", "content": exported.out}, **staff))
    assert report["imported"]["Session"] == 2 and report["imported"]["Event"] == 3
    assert Session.objects.filter(scope=scope).count() == 2

    memories = Memory.objects.count()
    again = err(
        post(client, "import", {"format": "export", "content": exported.out}, **staff),
        400,
        "invalid_input",
    )
    assert "already in use" in again["message"] and again["field_errors"][0]["path"] == "content"
    assert Session.objects.filter(scope=scope).count() == 2 and Memory.objects.count() == memories
    header_missing = err(
        post(client, "import", {"format": "export", "content": _jsonl(LINES)}, **staff),
        400,
        "invalid_input",
    )
    assert "not a Slowave export" in header_missing["message"]


def test_it_reads_a_codex_rollout_in_the_body(client) -> None:
    staff = _bearer(staff=True)
    rows = opening("019e-rest-rollout", "/home/dev/src/rest-codex")
    rows += exchange("Where does staging live?", "Staging lives in eu-west-2.", second=10)
    body = {"format": "codex", "content": _jsonl(rows)}
    report = ok(post(client, "import", body, **staff))
    assert (report["format"], report["sessions_imported"], report["turns_kept"]) == ("codex", 1, 2)
    assert report["turns_dropped"] == 6  # Codex's context, reasoning, the tool call and output
    assert report["scopes"][0]["scope"] == "project:rest-codex"
    assert ok(post(client, "import", body, **staff))["sessions_skipped"] == 1


def test_it_reads_claude_code_and_chatgpt_history_in_the_body(client) -> None:
    staff = _bearer(staff=True)
    turn = {
        "type": "user",
        "sessionId": "cc-rest-1",
        "cwd": "/home/dev/src/rest-history",
        "timestamp": "2026-05-08T13:56:00Z",
        "message": {"role": "user", "content": "Staging lives in eu-west-1."},
    }
    noise = turn | {"message": {"role": "user", "content": [{"type": "tool_result"}]}}
    body = {"format": "claude-code", "content": _jsonl([turn, noise])}
    report = ok(post(client, "import", body, **staff))
    assert (report["sessions_imported"], report["turns_kept"], report["turns_dropped"]) == (1, 1, 1)
    assert report["scopes"][0]["scope"] == "project:rest-history"
    assert ok(post(client, "import", body, **staff))["sessions_skipped"] == 1

    bad = err(
        post(client, "import", {**body, "content": _jsonl([turn, "{oops"])}, **staff),
        400,
        "invalid_input",
    )
    assert bad["message"].startswith("content:2: not valid JSON"), bad
    remap = err(post(client, "import", {**body, "remap": True}, **staff), 400, "invalid_input")
    assert remap["field_errors"][0]["path"] == "remap"

    message = {
        "author": {"role": "user"},
        "create_time": 1775552400.0,
        "content": {"content_type": "text", "parts": ["The cat is called Miso."]},
    }
    conversation = {
        "id": "rest-conv",
        "create_time": 1775552400.0,
        "current_node": "n1",
        "mapping": {"n1": {"id": "n1", "parent": None, "children": [], "message": message}},
    }
    scope = fresh_scope("chatgpt")
    body = {"format": "chatgpt", "scope": scope, "content": json.dumps([conversation])}
    assert ok(post(client, "import", {**body, "dry_run": True}, **staff))["would_import"] == 1
    assert ok(post(client, "import", body, **staff))["sessions_imported"] == 1
    assert Session.objects.get(scope=scope).import_key == "chatgpt:rest-conv"
