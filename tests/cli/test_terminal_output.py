"""Stored text cannot drive the operator's terminal (issue 26, 13).

A memory holding ESC sequences (clear screen, a fake green "OK" line), a carriage return and a
bidi override is remembered through the services, then `slowave show` prints it: the
human-facing output shows each control character as a visible escape and never writes it raw
(every command's console and stdout go through memory/management/terminal.py); `--json` stays
exact.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import run_python, slowave

SCOPE = "project:terminal"
HOSTILE = "Deploy notes \x1b[2J\x1b[H\x1b[32mOK all checks passed\x1b[0m\rdone \u202egnp.exe\x9b31m"
RAW = ("\x1b", "\r", "\u202e", "\x9b")


@pytest.fixture(scope="module")
def hostile(home: Path) -> str:
    code = (
        "from tests.factories import open_session, remember\n"
        f"s = open_session({SCOPE!r}, 'write the deploy notes')\n"
        f"print(remember({SCOPE!r}, s['session_id'], {HOSTILE!r})[0])\n"
    )
    return run_python(home, code).strip().splitlines()[-1]


@pytest.mark.slow
def test_show_escapes_every_control_character_of_a_memory(home: Path, hostile: str) -> None:
    result = slowave(home, "show", hostile)
    assert result.code == 0, result.err
    for raw in RAW:
        assert raw not in result.out, repr(result.out)
    assert "\\x1b[2J" in result.out
    assert "\\u202e" in result.out


@pytest.mark.slow
def test_json_output_keeps_the_exact_text(home: Path, hostile: str) -> None:
    result = slowave(home, "--json", "show", hostile)
    assert result.code == 0, result.err
    assert json.loads(result.out)["data"]["memory"]["content"] == HOSTILE
