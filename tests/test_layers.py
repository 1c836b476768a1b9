"""The import layering of ARCHITECTURE.md holds: import-linter's contracts in pyproject.toml.

Nothing imports upward (memory ← consolidation | mcp_bridge ← slowave_site, and the layers
inside each app) and no two sibling modules or packages import each other, lazy imports
included. The second test shows the check is not vacuous: a copy of the code with one upward
import, or one cycle hidden in a function, breaks it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("slowave_site", "memory", "consolidation", "mcp_bridge")
LINT = "from importlinter.cli import lint_imports; raise SystemExit(lint_imports(no_cache=True))"


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH: the packages under `root`, not the editable install's checkout.
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, "-c", LINT],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_keeps_every_import_pointing_down_and_no_cycles() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "line", "complaint"),
    [
        ("memory/models.py", "import slowave_site.urls  # noqa\n", "memory is not allowed"),
        ("memory/retrieval/__init__.py", "import memory.services  # noqa\n", "is not allowed"),
        (
            "memory/services/sessions.py",
            "def _dodge() -> None:\n    import memory.services.closing  # noqa\n",
            "No cycles are allowed in memory.services",
        ),
    ],
    ids=["upward-between-apps", "upward-inside-memory", "cycle-in-a-function"],
)
def test_it_fails_on_an_upward_import_or_a_cycle(
    tmp_path: Path, module: str, line: str, complaint: str
) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (tmp_path / module).open("a") as f:
        f.write("\n\n" + line)
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert complaint in result.stdout
