"""Codex rollout files through the codex reader, the history import and the hook's capture, on
the real database: the user's and the assistant's words kept with their times and Codex's
context, reasoning, tool and event lines dropped; the scope from the recorded cwd; secrets
screened; a second import, or a second capture of a grown file, storing each turn once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from memory.errors import InvalidInput
from memory.models import Event, Session
from memory.services.hook_capture import hook_capture
from memory.services.import_formats import history_read, history_write
from memory.services.import_formats.sources import history_sources, transcript_format
from tests.codex_rollouts import NOISE, exchange, message, opening, write_rollout

pytestmark = pytest.mark.django_db
SESSION = "019e1a2b-3c4d-7e5f-8a9b-0c1d2e3f4a5b"
CWD = "/home/dev/src/billing-svc"  # not a checkout here: the scope is its last part
SCOPE = "project:billing-svc"
QUESTION = "Which queue does billing publish invoices to?"
ANSWER = "Billing publishes invoices to the SQS queue invoices-v2; retries go to invoices-dlq."


def rollout(*turns: tuple[str, str]) -> list[Any]:
    rows = opening(SESSION, CWD)
    for index, (question, answer) in enumerate(turns):
        rows += exchange(question, answer, second=10 * (index + 1))
    return rows


def _import(path: Path, scope: str | None = None) -> dict[str, Any]:
    files = history_sources(format="codex", path=path)
    plan = history_read(format="codex", files=files, scope=scope)
    return dict(history_write(plan=plan, now=timezone.now()))


def _events(scope: str) -> list[tuple[str, str, str]]:
    return [
        (e.role, e.content, e.occurred_at.isoformat() if e.occurred_at else "")
        for e in Event.objects.filter(session__scope=scope).order_by("session__import_key", "seq")
    ]


def test_it_keeps_the_user_and_assistant_words_and_drops_codex_s_own_lines(
    tmp_path: Path,
) -> None:
    path = write_rollout(
        tmp_path / f"rollout-2026-05-04T10-00-00-{SESSION}.jsonl", rollout((QUESTION, ANSWER))
    )
    report = _import(path)
    assert (report["sessions_imported"], report["turns_kept"], report["files"]) == (1, 2, 1)
    # the developer message, AGENTS.md, environment context, reasoning, tool call and output
    assert report["turns_dropped"] == 6
    # session_meta, turn_context, and the three event_msg lines (echoes and token count)
    assert report["records_skipped"] == 5
    assert _events(SCOPE) == [
        ("user", QUESTION, "2026-05-04T10:00:10.100000+00:00"),
        ("assistant", ANSWER, "2026-05-04T10:00:15.900000+00:00"),
    ]
    session = Session.objects.get(scope=SCOPE)
    assert (session.import_key, session.ended_by) == (f"codex:{SESSION}", "import")
    stored = " ".join(Event.objects.values_list("content", flat=True))
    assert NOISE not in stored and "AGENTS.md" not in stored and "environment_context" not in stored
    assert sorted(Event.objects.values_list("metadata__turn", flat=True)) == [
        "2026-05-04T10:00:10.100Z/user/0",
        "2026-05-04T10:00:15.900Z/assistant/0",
    ]


def test_an_attached_image_leaves_only_the_user_s_words(tmp_path: Path) -> None:
    asked = message("2026-05-04T10:00:10.100Z", "user", "What is wrong in this screenshot?")
    asked["payload"]["content"] += [
        {"type": "input_text", "text": "<image name=[Image #1]>"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
        {"type": "input_text", "text": "</image>"},
    ]
    path = write_rollout(tmp_path / "rollout-image.jsonl", [*opening(SESSION, CWD), asked])
    assert _import(path)["turns_kept"] == 1
    assert [c for _, c, _ in _events(SCOPE)] == ["What is wrong in this screenshot?"]


def test_a_sessions_tree_is_searched_and_a_second_import_stores_nothing(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write_rollout(
        root / "2026" / "05" / "04" / f"rollout-a-{SESSION}.jsonl", rollout((QUESTION, ANSWER))
    )
    other = opening("019e-other", "/home/dev/src/mobile") + [
        message("2026-05-05T08:00:00.000Z", "user", "The mobile app ships on Thursdays.")
    ]
    write_rollout(root / "2026" / "05" / "05" / "rollout-b-019e-other.jsonl", other)
    write_rollout(tmp_path / "history.jsonl", [{"session_id": SESSION, "ts": 1, "text": "x"}])
    first = _import(root)
    assert (first["files"], first["sessions_imported"]) == (2, 2)
    assert [s["scope"] for s in first["scopes"]] == [SCOPE, "project:mobile"]
    again = _import(root)
    assert (again["sessions_imported"], again["sessions_skipped"], again["events"]) == (0, 2, 0)
    assert Event.objects.count() == 3
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput, match="holds no rollout-"):
        _import(tmp_path / "empty")


def test_a_secret_in_a_turn_is_refused_or_redacted_never_stored(
    tmp_path: Path, settings: Any
) -> None:
    token = "ghp_" + "Zq8Lm2Xv4Ns6Pt0Rw3Ky5Hb7Jc9Df1Ga3Ue5Vo"
    path = write_rollout(
        tmp_path / "rollout-s.jsonl",
        rollout((f"my github token is {token}", "I will not repeat it.")),
    )
    with pytest.raises(InvalidInput) as refused:
        _import(path)
    assert f"{path}:6 holds a credential (GitHub token at characters" in refused.value.message
    assert token not in refused.value.message and not Event.objects.exists()
    settings.SLOWAVE_SECRETS = "redact"
    _import(path)
    assert [c for _, c, _ in _events(SCOPE)] == [
        "my github token is [REDACTED:GitHub token]",
        "I will not repeat it.",
    ]
    assert Session.objects.get().redactions == {f"{path}:6": {"GitHub token": 1}}


def test_a_malformed_line_refuses_the_import_by_file_and_line(tmp_path: Path) -> None:
    rows = rollout((QUESTION, ANSWER))
    path = write_rollout(tmp_path / "rollout-bad.jsonl", [*rows, "{not json"])
    with pytest.raises(InvalidInput, match=rf"rollout-bad\.jsonl:{len(rows) + 1}: not valid JSON"):
        _import(path)
    shapeless = message("2026-05-04T11:00:00Z", "user", "x")
    shapeless["payload"]["content"] = "x"
    write_rollout(path, [*rows, shapeless])
    with pytest.raises(InvalidInput, match=r":\d+: payload.content must be a list of parts"):
        _import(path)
    write_rollout(path, [*rows, message("yesterday", "user", "when?")])
    with pytest.raises(InvalidInput, match=r":\d+: timestamp must be an RFC 3339"):
        _import(path)
    assert not Session.objects.exists()


def test_the_hook_captures_a_grown_rollout_once_and_then_only_its_new_turns(
    tmp_path: Path,
) -> None:
    path = write_rollout(tmp_path / "rollout-live.jsonl", rollout((QUESTION, ANSWER)))
    assert transcript_format(path) == "codex"
    now = timezone.now()
    for _ in range(2):  # handed over twice: stored once
        hook_capture(transcript_path=str(path), cwd=CWD, now=now)
    follow_up = ("And the dead letters?", "They land in invoices-dlq after five tries.")
    write_rollout(path, rollout((QUESTION, ANSWER), follow_up))
    report = hook_capture(transcript_path=str(path), cwd=CWD, now=now)
    assert report["sessions_imported"] == 1
    keys = list(Session.objects.order_by("import_key").values_list("import_key", flat=True))
    assert keys == [f"codex:{SESSION}", f"codex:{SESSION}#2"]
    assert [c for _, c, _ in _events(SCOPE)] == [QUESTION, ANSWER, *follow_up]
    # A later import of the same history leaves it as it is.
    assert _import(path)["sessions_imported"] == 0


def test_a_claude_code_transcript_is_not_taken_for_a_rollout(tmp_path: Path) -> None:
    line = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}}
    path = write_rollout(tmp_path / "s.jsonl", [{"type": "summary", "summary": "x"}, line])
    assert transcript_format(path) == "claude-code"
