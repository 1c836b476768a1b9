"""Long CLI work shows a progress bar on a terminal's stderr, and nothing when stderr is a
file or the output is JSON."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.cli.runner import ENTRY, REPO_ROOT, cli_env, slowave


def _on_a_terminal(home: Path, *args: str) -> tuple[str, str]:
    """Run the command with stderr on a pseudo-terminal; (stdout, what the terminal got)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", ENTRY, *args],
            cwd=REPO_ROOT,
            env=cli_env(home, TERM="xterm", COLUMNS="100"),
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
        )
        os.close(follower)
        screen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command has exited
                break
            if not chunk:
                break
            screen += chunk
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, screen.decode(errors="replace")
    finally:
        os.close(leader)
    return out, screen.decode(errors="replace")


def test_consolidate_shows_its_passes_on_a_terminal(tmp_path: Path) -> None:
    assert slowave(tmp_path, "migrate", "-v", "0").code == 0
    out, screen = _on_a_terminal(tmp_path, "consolidate")
    assert "Pass form_pending_episodes" in screen and "Pass promote_generalization" in screen
    assert len(out.splitlines()) == 9  # the report itself is unchanged, on stdout


def test_no_bar_when_stderr_is_not_a_terminal_or_with_json(tmp_path: Path) -> None:
    assert slowave(tmp_path, "migrate", "-v", "0").code == 0
    plain = slowave(tmp_path, "consolidate")
    assert plain.code == 0 and plain.err == ""
    _out, screen = _on_a_terminal(tmp_path, "worker", "--once", "--json")
    assert "Pass " not in screen
