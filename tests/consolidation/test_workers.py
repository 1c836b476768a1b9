"""Real Celery workers and concurrent `worker --once` processes (spec §8.5).

Mechanics only, so the servers here use the hash embedder: a commit over MCP enqueues
`consolidation.run_passes`, and a worker in another process (filesystem transport, or Redis on
127.0.0.1:6379) must run it; two `worker --once` started together must run each pass once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from consolidation.scheduler import start_embedded_worker, stop_worker
from consolidation.services.passes import ALL_PASSES, CONSOLIDATION_PASSES
from tests.acceptance.cycle import activate, commit, fresh_scope, ok, remember
from tests.consolidation.processes import rows, spawn_manage, wait_for
from tests.e2e_support import REPO_ROOT, McpClient, server_env, spawn_server

pytestmark = pytest.mark.timeout(240)
HASH = {"SLOWAVE_EMBEDDER": "hash"}
WORKER_WAIT = 90  # worker start, task pick-up (polling) and passes, on a loaded CI machine


def _commit_a_session(mcp: McpClient, scope: str, text: str) -> None:
    opened = activate(mcp, scope, "Record what the team decided")
    remember(mcp, scope, opened["session_id"], text)
    ok(commit(mcp, opened["session_id"]))


def _commit_run(db_path: Path) -> list[str]:
    """Passes a commit-triggered run finished, once its last pass is recorded."""
    done = [
        name
        for (name,) in rows(
            db_path,
            "SELECT pass_name FROM memory_workerrun WHERE triggered_by = "
            "'commit' AND status = 'succeeded' ORDER BY id",
        )
    ]
    return done if CONSOLIDATION_PASSES[-1].name in done else []


def _stop(process: subprocess.Popen, log: Path) -> None:
    code = stop_worker(process, timeout=20)
    assert code is not None, log.read_text()[-3000:]


def test_it_runs_a_commits_passes_on_the_embedded_filesystem_worker(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "SLOWAVE_HOME", str(tmp_path)
    )  # what the child inherits, as under `slowave up`
    monkeypatch.setenv("SLOWAVE_EMBEDDER", "hash")
    monkeypatch.delenv("SLOWAVE_BROKER_URL", raising=False)
    with spawn_server(home=tmp_path, env=HASH) as mcp:
        log = tmp_path / "worker.log"
        with log.open("w") as sink:
            worker = start_embedded_worker(stdout=sink, stderr=subprocess.STDOUT)
        assert worker is not None
        try:
            _commit_a_session(
                mcp, fresh_scope(), "Releases are cut from the main branch on Tuesdays"
            )
            done = wait_for(lambda: _commit_run(mcp.db_path), timeout=WORKER_WAIT)
        finally:
            _stop(worker, log)
    assert done == [spec.name for spec in CONSOLIDATION_PASSES]
    assert list((tmp_path / "broker" / "queue").iterdir()) == []  # the message was consumed


def _free_redis_db() -> int:
    """An empty Redis database number, so parallel runs and other users never share a queue."""
    for number in range(15, 0, -1):
        if redis.Redis(host="127.0.0.1", port=6379, db=number).dbsize() == 0:
            return number
    raise AssertionError("no empty Redis database on 127.0.0.1:6379")


def test_it_runs_a_commits_passes_on_a_redis_worker_with_beat(tmp_path):
    number = _free_redis_db()
    env = {**HASH, "SLOWAVE_BROKER_URL": f"redis://127.0.0.1:6379/{number}"}
    log = tmp_path / "worker.log"
    try:
        with spawn_server(home=tmp_path, env=env) as mcp:
            worker = spawn_manage(tmp_path, "worker", "--beat", env=env, log=log)
            try:
                _commit_a_session(mcp, fresh_scope(), "Hotfixes skip the staging soak")
                done = wait_for(lambda: _commit_run(mcp.db_path), timeout=WORKER_WAIT)
            finally:
                _stop(worker, log)
    finally:
        redis.Redis(host="127.0.0.1", port=6379, db=number).flushdb()
    assert done == [spec.name for spec in CONSOLIDATION_PASSES]
    assert "beat: Starting" in log.read_text()


def test_it_runs_every_pass_exactly_once_with_two_workers_started_together(tmp_path):
    with spawn_server(home=tmp_path, env=HASH) as mcp:
        scope = fresh_scope()
        for text in (
            "Deploys need a green build",
            "Deploys need a green build!",
            "Deploys need a green build.",
        ):
            _commit_a_session(mcp, scope, text)
    command = [sys.executable, "manage.py", "worker", "--once", "--json"]
    env = server_env(tmp_path, HASH)
    workers = [
        subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [w.communicate(timeout=180) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], [err[-2000:] for _, err in outputs]
    reports = [json.loads(out)["passes"] for out, _ in outputs]
    ran = [[p["name"] for p in report if p["status"] == "succeeded"] for report in reports]
    assert sorted(ran[0] + ran[1]) == sorted(spec.name for spec in ALL_PASSES)
    assert all(p["status"] in ("succeeded", "covered") for report in reports for p in report)
    per_pass = rows(
        tmp_path / "slowave.sqlite3",
        "SELECT pass_name, count(*) FROM memory_workerrun GROUP BY pass_name",
    )
    assert dict(per_pass) == {spec.name: 1 for spec in ALL_PASSES}
    assert os.path.exists(tmp_path / "slowave.sqlite3")
