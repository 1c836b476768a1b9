"""One isolated, migrated Slowave home per CLI test module, seeded through the services."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.runner import run_python, slowave

SCOPE = "project:cli"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli-home")
    migrated = slowave(path, "migrate", "-v", "0")
    assert migrated.code == 0, migrated.err
    return path


@pytest.fixture(scope="module")
def seeded(home: Path) -> dict[str, Any]:
    out = run_python(
        home, f"import json; from tests.cli.seeding import seed; print(json.dumps(seed({SCOPE!r})))"
    )
    return json.loads(out.strip().splitlines()[-1])
