"""Transcript import (scenario 42) and the export round trip (scenario 43), through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.conftest import SCOPE
from tests.cli.runner import slowave

TARGET = "project:imported"
LINES = [
    {
        "session_key": "conv-1:session_1",
        "role": "user",
        "content": "We moved the API to Go.",
        "occurred_at": "2026-05-08T13:56:00Z",
        "metadata": {"dia_id": "D1:1"},
    },
    {
        "session_key": "conv-1:session_1",
        "role": "assistant",
        "content": "Noted: the API is in Go now.",
        "occurred_at": "2026-05-08T13:57:00Z",
        "metadata": {"dia_id": "D1:2"},
    },
    {
        "session_key": "conv-1:session_2",
        "role": "user",
        "content": "Releases happen on Thursdays.",
        "occurred_at": "2026-05-21T10:04:00Z",
    },
    {
        "session_key": "conv-1:session_3",
        "role": "system",
        "content": "The on-call rota changes monthly.",
        "occurred_at": "2026-06-02T08:00:00+02:00",
    },
]


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def _sessions(home: Path, scope: str) -> int:
    return slowave(home, "--json", "stats", "--scope", scope).json()["data"]["sessions"]


def test_it_imports_a_transcript_as_ended_sessions_once(home: Path, tmp_path: Path) -> None:
    transcript = _write(tmp_path / "t.jsonl", LINES)
    dry = slowave(home, "--json", "import", str(transcript), "--scope", TARGET, "--dry-run")
    assert dry.code == 0 and len(dry.json()["data"]["would_create"]) == 3
    assert _sessions(home, TARGET) == 0

    first = slowave(home, "--json", "import", str(transcript), "--scope", TARGET)
    assert first.code == 0, first.err
    report = first.json()["data"]
    assert [s["session_key"] for s in report["sessions_created"]] == [
        "conv-1:session_1",
        "conv-1:session_2",
        "conv-1:session_3",
    ]
    assert report["events"] == 4 and report["episodes"] >= 3
    shown = slowave(home, "--json", "show", report["sessions_created"][0]["session_id"]).json()[
        "data"
    ]
    record = shown["record"]
    assert (record["status"], record["ended_by"], record["outcome"], record["feedback_status"]) == (
        "ended",
        "import",
        "unknown",
        "not_required",
    )
    assert [e["occurred_at"] for e in shown["events"]] == [
        "2026-05-08T13:56:00Z",
        "2026-05-08T13:57:00Z",
    ]
    assert shown["events"][0]["metadata"] == {"dia_id": "D1:1"}
    assert slowave(home, "--json", "stats", "--scope", TARGET).json()["data"]["episodes"] >= 3

    again = slowave(home, "--json", "import", str(transcript), "--scope", TARGET)
    assert again.code == 0 and again.json()["data"]["sessions_created"] == []
    assert len(again.json()["data"]["sessions_skipped"]) == 3
    assert _sessions(home, TARGET) == 3


def test_it_imports_nothing_from_a_file_with_one_bad_line(home: Path, tmp_path: Path) -> None:
    scope = "project:bad-import"
    cases = [
        ([*LINES[:2], {**LINES[2], "role": "robot"}, LINES[3]], "line 3: role: Input should be"),
        ([LINES[0], "{not json", LINES[2]], "line 2: not valid JSON"),
        (
            [LINES[0], {**LINES[1], "occurred_at": "2026-05-08T13:57:00"}],
            "line 2: occurred_at must include a UTC offset",
        ),
        ([LINES[0], {**LINES[1], "extra": 1}], "line 2: extra: Extra inputs are not permitted"),
    ]
    for rows, message in cases:
        result = slowave(
            home, "import", str(_write(tmp_path / "bad.jsonl", rows)), "--scope", scope
        )
        assert result.code == 1 and message in result.err, result.err
    assert _sessions(home, scope) == 0
    missing_scope = slowave(home, "import", str(tmp_path / "bad.jsonl"))
    assert missing_scope.code == 2 and "--scope is required" in missing_scope.err
    missing_file = slowave(home, "import", str(tmp_path / "nope.jsonl"), "--scope", scope)
    assert missing_file.code == 1 and "no such file" in missing_file.err


def test_it_round_trips_an_export_byte_for_byte(
    home: Path, seeded: dict[str, Any], tmp_path: Path
) -> None:
    first = tmp_path / "first.jsonl"
    assert slowave(home, "export", "--scope", SCOPE, "--out", str(first)).code == 0
    records = [json.loads(line) for line in first.read_text().splitlines()]
    kinds = {r["record"] for r in records}
    assert {
        "header",
        "session",
        "memory",
        "procedure",
        "retrieval",
        "feedback",
        "forget_log",
    } <= kinds
    statuses = {r["status"] for r in records if r["record"] == "memory"}
    assert {"stale", "forgotten", "active"} <= statuses

    empty = tmp_path / "empty-home"
    empty.mkdir()
    assert slowave(empty, "migrate", "-v", "0").code == 0
    loaded = slowave(empty, "--json", "import", str(first), "--format", "export")
    assert loaded.code == 0, loaded.err
    second = tmp_path / "second.jsonl"
    assert slowave(empty, "export", "--scope", SCOPE, "--out", str(second)).code == 0
    a, b = first.read_text().splitlines(), second.read_text().splitlines()
    assert a[1:] == b[1:]
    header_a, header_b = json.loads(a[0]), json.loads(b[0])
    assert {**header_a, "exported_at": None} == {**header_b, "exported_at": None}

    again = slowave(empty, "import", str(first), "--format", "export")
    assert again.code == 1 and "already in use" in again.err
    assert b == [line for line in second.read_text().splitlines()]


def test_it_refuses_bad_export_arguments(home: Path, tmp_path: Path) -> None:
    none = slowave(home, "export")
    assert none.code == 1 and "--scope" in none.err
    bad = slowave(home, "export", "--scope", "nocolon")
    assert bad.code == 1 and "kind:id" in bad.err
    not_export = slowave(
        home, "import", str(_write(tmp_path / "t.jsonl", LINES)), "--format", "export"
    )
    assert not_export.code == 1 and "line 1: not a Slowave export" in not_export.err
