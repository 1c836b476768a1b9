"""`slowave bench window`: a real stdio client times a spawned mcp_serve against a baseline."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from django.conf import settings

from tests.conftest import REPO_ROOT

ENTRY = "import sys; from slowave_site.cli import main; main(sys.argv[1:])"
MILESTONES = ["initialize", "tools_list", "activate", "remember", "recall"]


def _window(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLOWAVE_")}
    env |= {
        "SLOWAVE_HOME": str(tmp_path / "home"),
        "SLOWAVE_MODEL_DIR": str(settings.SLOWAVE_MODEL_DIR),
    }
    return subprocess.run(
        [sys.executable, "-c", ENTRY, "bench", "window", *extra],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_it_times_an_agents_first_moves_beside_another_revision_and_the_floor(tmp_path):
    store = tmp_path / "store.sqlite3"
    out = tmp_path / "window.json"
    done = _window(
        tmp_path,
        "--db",
        str(store),
        "--memories",
        "12",
        "--runs",
        "1",
        "--against",
        "HEAD",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["memories"] == 12  # built at the asked size; the servers wrote to copies
    assert set(report["variants"]) == {"this", "against HEAD"}
    for rows in report["variants"].values():
        medians = [rows[m]["median"] for m in MILESTONES]
        assert 0 < medians[0] and medians == sorted(medians), rows
        # The server's own RSS: an interpreter with the SDK, Django and the ONNX model.
        assert 100 < rows["rss_mb"]["median"] <= rows["peak_rss_mb"]["median"] < 2000, rows
        assert 0 < rows["cpu_at_remember"]["median"]
    assert (
        0 < report["floor"]["interpreter"]["median"] < report["variants"]["this"]["recall"]["min"]
    )
    assert set(report["ratio"]) >= set(MILESTONES) | {"rss_mb"}
    assert "remember" in done.stdout and "floor interpreter" in done.stdout
    with closing(sqlite3.connect(store)) as db:  # kept where asked, for the next run
        assert db.execute("SELECT count(*) FROM memory_memory").fetchone() == (12,)


def test_it_refuses_an_unknown_revision_and_a_count_below_one_in_one_line(tmp_path):
    missing = _window(tmp_path, "--against", "no-such-revision-xyz", "--runs", "1")
    assert missing.returncode != 0
    assert "--against no-such-revision-xyz" in missing.stderr
    assert "Traceback" not in missing.stderr
    zero = _window(tmp_path, "--runs", "0")
    assert zero.returncode != 0 and "--runs and --memories must be positive" in zero.stderr
    assert "Traceback" not in zero.stderr
