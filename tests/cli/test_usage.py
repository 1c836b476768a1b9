"""The console script's contract: usage, exit codes, and every command reachable by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from slowave_site.cli import COMMANDS
from tests.cli.runner import slowave

# Written by the consolidation work; the CLI only maps their names.
OTHERS = {"worker", "consolidate", "decay", "reap"}


def test_it_prints_usage_and_exits_2_without_a_command(tmp_path: Path) -> None:
    result = slowave(tmp_path)
    assert result.code == 2
    assert "usage: slowave" in result.err and "forget" in result.err


def test_it_rejects_unknown_commands_and_options_with_exit_2(tmp_path: Path) -> None:
    unknown = slowave(tmp_path, "frobnicate")
    assert unknown.code == 2 and "unknown command 'frobnicate'" in unknown.err
    option = slowave(tmp_path, "--colour", "stats")
    assert option.code == 2 and "unknown option --colour" in option.err
    no_json = slowave(tmp_path, "--json", "up")
    assert no_json.code == 2 and "up has no --json output" in no_json.err
    assert not (tmp_path / "slowave.sqlite3").exists()  # nothing was started or created


def test_it_prints_help_with_exit_0(tmp_path: Path) -> None:
    result = slowave(tmp_path, "--help")
    assert result.code == 0 and all(name in result.out for name in COMMANDS)


def test_it_maps_every_command_to_a_management_command() -> None:
    from django.core.management import get_commands

    known = get_commands()
    missing = [name for name, (target, _) in COMMANDS.items() if target not in known]
    # The consolidation passes' commands are written elsewhere; the CLI only maps their names.
    assert set(missing) <= OTHERS, missing


@pytest.mark.parametrize("command", ["show", "mcp-serve", "import"])
def test_it_hands_options_to_the_management_command(tmp_path: Path, command: str) -> None:
    result = slowave(tmp_path, command, "--help")
    assert result.code == 0, result.err
    assert f"slowave {COMMANDS[command][0]}" in result.out


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"SLOWAVE_VECTOR_BACKEND": "pgvector"},
            "SLOWAVE_VECTOR_BACKEND=pgvector is not available",
        ),
        (
            {"SLOWAVE_VECTOR_BACKEND": "sqlite-vec", "DATABASE_URL": "postgresql://x@127.0.0.1/x"},
            "SLOWAVE_VECTOR_BACKEND=sqlite-vec needs SQLite",
        ),
    ],
)
def test_it_refuses_a_vector_backend_that_cannot_work_before_touching_the_store(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    result = slowave(tmp_path, "stats", env=env)
    assert result.code != 0 and message in result.err
    assert not (tmp_path / "slowave.sqlite3").exists()
