"""Claude Code and ChatGPT history files through the readers and the transcript import, on the
real database: what is kept and dropped, order and times, the all-or-nothing refusal naming
file and line, re-import as a no-op, and directory imports with a scope per project."""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from memory.errors import InvalidInput
from memory.models import Episode, Event, Session
from memory.services.import_formats import CONTENT_MAX, history_read, history_write
from memory.services.import_formats.sources import history_sources

pytestmark = pytest.mark.django_db
_uuids = count(1)


def cc(kind: str, content: Any, *, session: str = "sess-a", at: str, **extra: Any) -> dict:
    """One Claude Code transcript line as the tool writes it (the keys a reader may need)."""
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/src/payments-api",
        "sessionId": session,
        "version": "2.0.61",
        "gitBranch": "main",
        "type": kind,
        "message": {"role": kind, "content": content},
        "uuid": f"uuid-{next(_uuids)}",
        "timestamp": at,
        **extra,
    }


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def session_rows() -> list[Any]:
    return [
        {"type": "summary", "summary": "Payments work", "leafUuid": "uuid-x"},
        cc("user", "Which database does the payments service use?", at="2026-03-02T09:00:00Z"),
        cc(
            "assistant",
            [
                {"type": "thinking", "thinking": "Look at the settings.", "signature": "s"},
                {"type": "tool_use", "id": "tu1", "name": "Read", "input": {"file_path": "x"}},
            ],
            at="2026-03-02T09:00:05Z",
        ),
        cc(
            "user",
            [{"type": "tool_result", "tool_use_id": "tu1", "content": "DB=postgres"}],
            at="2026-03-02T09:00:06Z",
        ),
        cc("assistant", [text("It uses PostgreSQL 16.")], at="2026-03-02T09:00:09Z"),
        cc("user", "<command-name>/clear</command-name>", at="2026-03-02T09:01:00Z"),
        cc("user", "Caveat: the model should not reply", at="2026-03-02T09:01:01Z", isMeta=True),
        cc("assistant", [text("sub-agent chatter")], at="2026-03-02T09:01:02Z", isSidechain=True),
        {"type": "system", "subtype": "stop_hook_summary", "timestamp": "2026-03-02T09:01:03Z"},
        cc("user", [text("Remember: deploys go out on Tuesdays.")], at="2026-03-02T09:02:00Z"),
    ]


def _import(fmt: str, path: Path, scope: str | None = None, **kw: Any) -> dict[str, Any]:
    files = history_sources(format=fmt, path=path)
    plan = history_read(format=fmt, files=files, scope=scope)
    return history_write(plan=plan, now=timezone.now(), **kw)


def _events(scope: str) -> list[tuple[str, str, str]]:
    return [
        (e.role, e.content, e.occurred_at.isoformat() if e.occurred_at else "")
        for e in Event.objects.filter(session__scope=scope).order_by("session__started_at", "seq")
    ]


def test_it_keeps_the_text_turns_of_a_claude_code_session_in_order(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "-home-dev-src-payments-api" / "sess-a.jsonl", session_rows())
    report = _import("claude-code", path)
    scope = "project:payments-api"  # the recorded cwd's basename, not the encoded directory
    assert (report["sessions_imported"], report["turns_kept"], report["files"]) == (1, 3, 1)
    # thinking+tool_use, tool_result, the command wrapper, meta and side chain lines
    assert report["turns_dropped"] == 5 and report["records_skipped"] == 2
    assert _events(scope) == [
        ("user", "Which database does the payments service use?", "2026-03-02T09:00:00+00:00"),
        ("assistant", "It uses PostgreSQL 16.", "2026-03-02T09:00:09+00:00"),
        ("user", "Remember: deploys go out on Tuesdays.", "2026-03-02T09:02:00+00:00"),
    ]
    session = Session.objects.get(scope=scope)
    assert (session.import_key, session.ended_by, session.status) == (
        "claude-code:sess-a",
        "import",
        "ended",
    )
    assert Episode.objects.filter(session=session).exists()


def test_it_makes_one_turn_of_a_streamed_answer_and_counts_a_copied_line_once(
    tmp_path: Path,
) -> None:
    first = cc("user", "Where do logs go?", at="2026-03-02T10:00:00Z")
    rows = [
        first,
        cc("assistant", [text("Logs go to Loki.")], at="2026-03-02T10:00:01Z", message_id="m9"),
        cc(
            "assistant",
            [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}],
            at="2026-03-02T10:00:02Z",
            message_id="m9",
        ),
        cc(
            "assistant", [text("Retention is 30 days.")], at="2026-03-02T10:00:03Z", message_id="m9"
        ),
    ]
    for row in rows[1:]:
        row["message"]["id"] = row.pop("message_id")
    write_jsonl(tmp_path / "proj" / "one.jsonl", rows)
    write_jsonl(tmp_path / "proj" / "two.jsonl", [first])  # a resumed session's copy
    report = _import("claude-code", tmp_path / "proj", scope="project:logs")
    assert report["turns_kept"] == 2 and report["files"] == 2
    assert [c for _, c, _ in _events("project:logs")] == [
        "Where do logs go?",
        "Logs go to Loki.\n\nRetention is 30 days.",
    ]


def test_it_refuses_a_malformed_line_by_file_and_line_and_writes_nothing(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "p" / "a.jsonl", session_rows())
    bad = write_jsonl(
        tmp_path / "p" / "b.jsonl",
        [cc("user", "fine", session="sess-b", at="2026-03-03T09:00:00Z"), "{not json"],
    )
    with pytest.raises(InvalidInput) as caught:
        _import("claude-code", tmp_path / "p")
    assert caught.value.message.startswith(f"{bad}:2: not valid JSON")
    shapeless = cc("assistant", "x", at="2026-03-03T09:00:00Z")
    shapeless["message"] = {"role": "assistant", "content": [text("ok"), {"type": "text"}]}
    write_jsonl(bad, [shapeless])
    with pytest.raises(InvalidInput, match=r"b\.jsonl:1: message\.content\[1\]\.text must be"):
        _import("claude-code", tmp_path / "p")
    write_jsonl(bad, [cc("user", "when?", at="last Tuesday")])
    with pytest.raises(InvalidInput, match=r"b\.jsonl:1: timestamp must be an RFC 3339"):
        _import("claude-code", tmp_path / "p")
    assert not Session.objects.exists() and not Event.objects.exists()
    assert good.exists()


def test_a_second_import_of_the_same_history_is_a_no_op(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "x" / "sess-a.jsonl", session_rows())
    first = _import("claude-code", path)
    again = _import("claude-code", path)
    assert (first["sessions_imported"], again["sessions_imported"]) == (1, 0)
    assert again["sessions_skipped"] == 1 and again["events"] == 0
    assert Session.objects.count() == 1 and Event.objects.count() == 3


def test_the_projects_directory_gives_each_project_its_own_scope(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    write_jsonl(root / "-home-dev-src-payments-api" / "sess-a.jsonl", session_rows())
    no_cwd = cc("user", "The mobile app ships weekly.", session="sess-m", at="2026-03-04T08:00:00Z")
    del no_cwd["cwd"]
    write_jsonl(root / "-home-dev-mobile" / "sess-m.jsonl", [no_cwd])
    (root / "-home-dev-empty").mkdir()
    report = _import("claude-code", root, progress=lambda n: None)
    assert [s["scope"] for s in report["scopes"]] == [
        "project:-home-dev-mobile",  # no cwd recorded: the directory's own name
        "project:payments-api",
    ]
    assert report["sessions_imported"] == 2 and report["files"] == 2
    with pytest.raises(InvalidInput, match="holds no"):
        _import("claude-code", root / "-home-dev-empty")


def test_a_dry_run_reports_and_writes_nothing(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d" / "s.jsonl", session_rows())
    report = _import("claude-code", path, dry_run=True)
    assert report["would_import"] == 1 and report["sessions_imported"] == 0
    assert not Session.objects.exists()


def test_a_turn_longer_than_an_event_holds_is_kept_whole_over_several(tmp_path: Path) -> None:
    long = ("word " * (CONTENT_MAX // 4)).strip()
    path = write_jsonl(tmp_path / "l" / "s.jsonl", [cc("user", long, at="2026-03-02T09:00:00Z")])
    report = _import("claude-code", path, scope="project:long")
    assert report["turns_kept"] == 2
    parts = [c for _, c, _ in _events("project:long")]
    assert all(len(p) <= CONTENT_MAX for p in parts) and " ".join(parts) == long


# ChatGPT ------------------------------------------------------------------------------------


def node(ident: str, parent: str | None, role: str | None, parts: Any = None, **kw: Any) -> dict:
    message = None
    if role is not None:
        message = {
            "id": ident,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": kw.pop("at", None),
            "content": kw.pop("content", {"content_type": "text", "parts": parts}),
            "metadata": kw.pop("metadata", {}),
            "recipient": kw.pop("recipient", "all"),
        }
    return {"id": ident, "message": message, "parent": parent, "children": kw.pop("children", [])}


def conversation(ident: str, nodes: list[dict], current: str, created: float) -> dict:
    return {
        "title": "Trip planning",
        "create_time": created,
        "update_time": created + 60,
        "mapping": {n["id"]: n for n in nodes},
        "current_node": current,
        "conversation_id": ident,
        "id": ident,
    }


def chatgpt_export() -> list[dict]:
    return [
        conversation(
            "conv-1",
            [
                node("root", None, None),
                node(
                    "sys",
                    "root",
                    "system",
                    [""],
                    metadata={"is_visually_hidden_from_conversation": True},
                ),
                node("u1", "sys", "user", ["My passport expires in June 2027."], at=1772442000.0),
                node("old", "u1", "assistant", ["An abandoned answer."], at=1772442005.0),
                node("a1", "u1", "assistant", ["Noted: June 2027."], at=None),
                node(
                    "code",
                    "a1",
                    "assistant",
                    None,
                    recipient="python",
                    content={"content_type": "code", "language": "python", "text": "1+1"},
                ),
                node(
                    "tool",
                    "code",
                    "tool",
                    None,
                    content={"content_type": "execution_output", "text": "2"},
                ),
                node(
                    "u2",
                    "tool",
                    "user",
                    None,
                    at=1772442100.0,
                    content={
                        "content_type": "multimodal_text",
                        "parts": [{"content_type": "image_asset_pointer"}, "Here is my photo."],
                    },
                ),
            ],
            current="u2",
            created=1772441000.0,
        )
    ]


def test_it_keeps_the_displayed_branch_of_a_chatgpt_conversation(tmp_path: Path) -> None:
    path = tmp_path / "export" / "conversations.json"
    path.parent.mkdir()
    path.write_text(json.dumps(chatgpt_export(), indent=2))
    report = _import("chatgpt", path.parent)
    assert (report["sessions_imported"], report["turns_kept"], report["turns_dropped"]) == (1, 3, 3)
    assert _events("project:chatgpt") == [
        ("user", "My passport expires in June 2027.", "2026-03-02T09:00:00+00:00"),
        # no time of its own: the conversation's
        ("assistant", "Noted: June 2027.", "2026-03-02T08:43:20+00:00"),
        ("user", "Here is my photo.", "2026-03-02T09:01:40+00:00"),
    ]
    assert Session.objects.get().import_key == "chatgpt:conv-1"
    assert _import("chatgpt", path)["sessions_skipped"] == 1
    assert Session.objects.count() == 1


def test_it_refuses_a_malformed_chatgpt_export_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    broken = chatgpt_export()
    broken[0]["mapping"]["a1"]["message"]["content"] = {"content_type": "text", "parts": "no"}
    path.write_text(
        json.dumps([chatgpt_export()[0] | {"id": "c0", "conversation_id": "c0"}, broken[0]])
    )
    with pytest.raises(InvalidInput, match=r"conversations\.json:\[1\]\.mapping\.a1\.message"):
        _import("chatgpt", path)
    path.write_text('[\n  {"id": "c",\n  "mapping": }\n]')
    with pytest.raises(InvalidInput, match=r"conversations\.json:3: not valid JSON"):
        _import("chatgpt", path)
    assert not Session.objects.exists()
