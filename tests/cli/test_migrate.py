"""`slowave migrate` run by several processes at once on a fresh store: one migrates, all succeed.

`slowave up`, `mcp_serve` and `slowave migrate` all go through the same `migrate` command, so
an editor starting agents while `slowave up` starts must not leave any of them with "table
... already exists".
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.runner import ENTRY, REPO_ROOT, cli_env

PROCESSES = 4


def test_it_migrates_a_fresh_store_once_when_several_processes_migrate_at_once(
    tmp_path: Path,
) -> None:
    home = tmp_path / "fresh-home"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", ENTRY, "migrate"],
            cwd=REPO_ROOT,
            env=cli_env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    outputs = [process.communicate(timeout=180) for process in processes]
    codes = [process.returncode for process in processes]
    assert codes == [0] * PROCESSES, outputs
    applied = [out for out, _ in outputs if "Applying memory.0001_initial" in out]
    assert len(applied) == 1, outputs
    assert sum("No migrations to apply" in out for out, _ in outputs) == PROCESSES - 1, outputs
    assert not list(home.glob("*.migrate.lock"))  # the lock leaves nothing behind
