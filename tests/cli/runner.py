"""Run the real `slowave` console entry point in a subprocess against an isolated home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
ENTRY = "import sys; from slowave_site.cli import main; main(sys.argv[1:])"
# SLOWAVE_* and DATABASE_URL are never inherited: a developer's settings must not leak in.
# SLOWAVE_MODEL_DIR names no memory: the session's one ONNX export (tests/conftest.py).
PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "TMPDIR", "PYTHONDONTWRITEBYTECODE", "SLOWAVE_MODEL_DIR")


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASSTHROUGH if k in os.environ}
    # The repository first on the path: the console script must run this checkout's code.
    env.update(
        PYTHONPATH=str(REPO_ROOT),
        SLOWAVE_HOME=str(home),
        SLOWAVE_EMBEDDER="hash",
        SLOWAVE_EMBEDDED_WORKER="false",
    )
    env.update(extra)
    return env


def slowave(
    home: Path,
    *args: str,
    stdin: str | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> Result:
    proc = subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        cwd=REPO_ROOT,
        env=env or cli_env(home),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def run_python(
    home: Path, code: str, *, env: dict[str, str] | None = None, timeout: float = 120
) -> str:
    """Run Django-using code (e.g. seeding through services) in the same environment."""
    prelude = (
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
        "'slowave_site.settings'); django.setup()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", prelude + code],
        cwd=REPO_ROOT,
        env=env or cli_env(home),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
