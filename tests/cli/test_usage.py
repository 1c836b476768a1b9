"""The console script's contract: usage, exit codes, and every command reachable by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from slowave_site.cli import COMMANDS
from tests.cli.runner import REPO_ROOT, cli_env, slowave

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
            "SLOWAVE_VECTOR_BACKEND=pgvector needs PostgreSQL",
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
    result = slowave(tmp_path, "stats", env=cli_env(tmp_path, **env))
    assert result.code == 2 and message in result.err and "Traceback" not in result.err
    assert not (tmp_path / "slowave.sqlite3").exists()


BAD_SETTINGS = [
    (
        {"SLOWAVE_MIN_RELEVANCE": "abc"},
        "slowave: SLOWAVE_MIN_RELEVANCE must be a number between 0 and 1 (got 'abc')",
    ),
    (
        {"SLOWAVE_MIN_RELEVANCE": "1.5"},
        "slowave: SLOWAVE_MIN_RELEVANCE must be a number between 0 and 1 (got '1.5')",
    ),
    (
        {"SLOWAVE_HTTP_WORKERS": "0"},
        "slowave: SLOWAVE_HTTP_WORKERS must be an integer, 1 or more (got '0')",
    ),
    (
        {"SLOWAVE_PORT": "http"},
        "slowave: SLOWAVE_PORT must be an integer between 1 and 65535 (got 'http')",
    ),
    (
        {"SLOWAVE_EMBEDDED_WORKER": "maybe"},
        "slowave: SLOWAVE_EMBEDDED_WORKER must be true or false (got 'maybe')",
    ),
    (
        {"SLOWAVE_LOG_LEVEL": "loud"},
        "slowave: SLOWAVE_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL",
    ),
    (
        {"SLOWAVE_ALLOWED_HOSTS": "slowave.internal,https://slowave.example.com"},
        "slowave: SLOWAVE_ALLOWED_HOSTS must be comma-separated host names without scheme, port "
        "or path (e.g. slowave.internal,.example.com) (got 'https://slowave.example.com')",
    ),
    (
        {"SLOWAVE_IMPORT_MAX_BYTES": "0"},
        "slowave: SLOWAVE_IMPORT_MAX_BYTES must be an integer, 1 or more (got '0')",
    ),
    (
        {"DATABASE_URL": "mysql://root:hunter2@127.0.0.1/slowave"},
        "slowave: DATABASE_URL must be a PostgreSQL URL like postgresql://user@host:5432/dbname "
        "(got scheme 'mysql')",
    ),
    (
        {"DATABASE_URL": "postgresql://u@127.0.0.1:port/x"},
        "slowave: DATABASE_URL must be a PostgreSQL URL",
    ),
]


def _one_clean_line(code: int, err: str, message: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err and message in err
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(("env", "message"), BAD_SETTINGS)
def test_it_names_a_malformed_setting_in_one_line_and_exits_2(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    result = slowave(tmp_path, "stats", env=cli_env(tmp_path, **env))
    _one_clean_line(result.code, result.err, message)
    assert "hunter2" not in result.err  # a DATABASE_URL's password is never echoed
    assert not (tmp_path / "slowave.sqlite3").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["-c", "import sys; from slowave_site.cli import main; main(['mcp-serve'])"],
        ["-c", "import sys; from slowave_site.cli import main; main(['up'])"],
        ["manage.py", "mcp_serve"],
        ["manage.py", "migrate"],
        ["-m", "celery", "-A", "slowave_site", "worker"],
        ["-m", "celery", "-A", "slowave_site", "beat"],
    ],
    ids=[
        "slowave mcp-serve",
        "slowave up",
        "manage.py mcp_serve",
        "manage.py migrate",
        "worker",
        "beat",
    ],
)
def test_every_entry_point_refuses_a_malformed_setting_the_same_way(
    tmp_path: Path, command: list[str]
) -> None:
    proc = subprocess.run(
        [sys.executable, *command],
        cwd=REPO_ROOT,
        env=cli_env(tmp_path, SLOWAVE_MIN_RELEVANCE="abc"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    message = "slowave: SLOWAVE_MIN_RELEVANCE must be a number between 0 and 1 (got 'abc')"
    _one_clean_line(proc.returncode, proc.stderr, message)
    assert proc.stdout == ""  # under mcp_serve stdout belongs to the protocol
    assert not (tmp_path / "slowave.sqlite3").exists()
