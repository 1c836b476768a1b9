"""Imported history is working memory (issue 25): a Claude Code transcript written here and
imported with the real `slowave import` console script makes its scope warm, and the first
`slowave_activate` over stdio (a real MCP client against `manage.py mcp_serve`) shows the turn
that discussed the task on its first page, marked as an episode with its provenance.

Both the import and the server embed with the real model, as a user's would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import cli_env, slowave
from tests.e2e_support import spawn_server

SESSION = "0d7e51a2-6b3c-4f0e-9a61-2c8d4e1f7a90"


def _transcript(root: Path) -> Path:
    """A ~/.claude/projects lookalike: one session that settled how invoices are rounded."""
    project = root / "-home-ana-src-billing"
    project.mkdir(parents=True)
    common = {"cwd": "/home/ana/src/billing", "sessionId": SESSION, "isSidechain": False}
    rows = [
        {
            **common,
            "type": "user",
            "uuid": "u1",
            "timestamp": "2026-05-11T10:02:00.000Z",
            "message": {"role": "user", "content": "How should invoice totals be rounded?"},
        },
        {
            **common,
            "type": "assistant",
            "uuid": "u2",
            "timestamp": "2026-05-11T10:02:07.000Z",
            "message": {
                "id": "msg_01",
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "Invoice totals are rounded half-even to the cent, once, after "
                        "tax is summed per line; the ledger service rejects anything else.",
                    }
                ],
            },
        },
    ]
    (project / f"{SESSION}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    assert slowave(path, "migrate", "-v", "0").code == 0
    return path


def test_first_activate_after_an_import_is_warm_and_shows_the_turn(
    home: Path, tmp_path: Path
) -> None:
    projects = _transcript(tmp_path / "projects")
    env = cli_env(home, SLOWAVE_EMBEDDER="onnx")
    done = slowave(home, "--json", "import", "--format", "claude-code", str(projects), env=env)
    assert done.code == 0 and "Traceback" not in done.err, done.err
    summary = done.json()["data"]
    assert summary["sessions_imported"] == 1
    (scope,) = [s["scope"] for s in summary["scopes"]]

    # No background consolidation: the scope holds the imported session and nothing else.
    with spawn_server(home=home, env={"SLOWAVE_EMBEDDED_WORKER": "false"}) as mcp:
        opened = mcp.call(
            "slowave_activate",
            {
                "task": "Fix the rounding of invoice totals",
                "initial_goal": "totals match the ledger",
                "scope": scope,
            },
        )
        assert opened["ok"], opened
        data = opened["data"]
        assert data["memory_state"] == "available"
        assert "cold_start" not in {w["code"] for w in data["warnings"]}
        turns = [m for m in data["memories"] if m["type"] == "episode"]
        assert turns, data["memories"]
        turn = turns[0]
        assert "half-even" in turn["content"] and turn["episode_id"].startswith("ep_")
        assert turn["provenance"]["source_kind"] == "imported_session"
        assert turn["provenance"]["occurred_at"] == 1778493720  # 2026-05-11T10:02:00Z

        # Recall ranks the same history with its memories, and does not repeat it as evidence.
        recalled = mcp.call(
            "slowave_recall",
            {
                "session_id": data["session_id"],
                "scope": scope,
                "query": "which rounding mode do invoice totals use?",
            },
        )
        assert recalled["ok"], recalled
        ids = [m.get("episode_id") for m in recalled["data"]["memories"]]
        assert turn["episode_id"] in ids
        assert turn["episode_id"] not in {e["evidence_id"] for e in recalled["data"]["evidence"]}

        # A turn of history is shown, not exposed: feedback naming it is refused, not owed.
        judged = mcp.call(
            "slowave_feedback",
            {
                "retrieval_id": data["retrieval_id"],
                "memory_feedback": [{"memory_id": turn["episode_id"], "assessment": "used"}],
            },
        )
        assert judged["ok"], judged
        assert judged["data"]["rejected"] == [
            {"target_id": turn["episode_id"], "reason": "target_not_exposed"}
        ]

        # An unrelated task does not drag the history in: the same floor as memories.
        other = mcp.call(
            "slowave_activate",
            {"task": "Choose a font for the marketing site", "initial_goal": "x", "scope": scope},
        )
        assert other["ok"], other
        assert not [m for m in other["data"]["memories"] if m["type"] == "episode"]

        # No feedback is owed for a turn of history: the session commits with nothing pending.
        closed = mcp.call(
            "slowave_commit",
            {
                "session_id": data["session_id"],
                "outcome": "success",
                "final_goal": "totals match the ledger",
                "outcome_summary": "rounded half-even once per invoice",
                "verification": {"status": "unverified", "summary": "not run"},
            },
        )
        assert closed["ok"], closed
        assert closed["data"]["feedback_status"] == "complete"
