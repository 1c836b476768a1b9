"""Every command on a fresh SLOWAVE_HOME, before anyone ran `slowave migrate` (issue 26, 12).

The commands that use the store migrate it first, under the same lock as `slowave up`; none
of them prints a traceback. A store that cannot be migrated gets one line naming
`slowave migrate`, status 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import cli_env, slowave

COMMANDS = [
    ("stats",),
    ("show", "mem_01J0000000000000000000000"),
    ("export", "--all"),
    ("forget", "sch_1", "--reason", "test"),
    ("reap",),
    ("decay", "--dry-run"),
    ("explain", "ret_01J0000000000000000000000"),
    ("token", "list"),
]


@pytest.mark.slow
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_command_on_a_fresh_home_migrates_first_and_never_tracebacks(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    result = slowave(tmp_path / "fresh", *args)
    assert "Traceback" not in result.err, result.err
    assert "no such table" not in result.err
    assert result.code in (0, 1), result.err
    # The store is now migrated: stats answers from it.
    after = slowave(tmp_path / "fresh", "--json", "stats")
    assert after.code == 0, after.err


@pytest.mark.slow
def test_import_of_a_transcript_is_the_first_command_on_a_fresh_home(tmp_path: Path) -> None:
    transcript = tmp_path / "talk.jsonl"
    rows = [
        {"session_key": "s1", "role": "user", "content": "Which database does billing use?"},
        {"session_key": "s1", "role": "assistant", "content": "Billing uses PostgreSQL 16."},
    ]
    transcript.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = slowave(tmp_path / "fresh", "--json", "import", str(transcript), "--scope", "user:ana")
    assert result.code == 0, result.err
    assert "Traceback" not in result.err


@pytest.mark.slow
def test_a_store_that_cannot_be_migrated_gets_one_line_and_status_1(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "fresh", DATABASE_URL="postgres://postgres@127.0.0.1:1/nowhere")
    result = slowave(tmp_path / "fresh", "stats", env=env)
    assert result.code == 1
    assert "Traceback" not in result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert "slowave migrate" in lines[0]
