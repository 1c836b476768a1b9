"""`slowave up` says one short block and nothing else while it runs; `--verbose` brings back
the Celery banner and uvicorn's lines."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.admin.live import free_port
from tests.cli.runner import ENTRY, REPO_ROOT, cli_env, slowave
from tests.cli.test_up import _alive, _children


@dataclass
class Output:
    port: int
    printed: str  # stdout and stderr while it ran
    logged: str
    all_printed: str  # ... and once it has stopped (what buffers held included)
    all_logged: str


def _run_up(home: Path, *extra: str) -> Output:
    """Start `slowave up`, make one REST call once the worker is up, stop it; its output."""
    port = free_port()
    out, err = home / "up.out", home / "up.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        up = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "up", "--port", str(port), *extra],
            cwd=REPO_ROOT,
            env=cli_env(home, SLOWAVE_EMBEDDED_WORKER="true"),
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    family: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2):
                    break
            except OSError:
                assert up.poll() is None and time.monotonic() < deadline, err.read_text()
                time.sleep(0.2)
        # The worker's start (banner, "ready") comes a little after the server's: wait for
        # its beat to have written its schedule, the last thing it does on start.
        deadline = time.monotonic() + (0 if "--no-worker" in extra else 30)
        while not (home / "broker" / "beat-schedule").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
        family = _children(up.pid)
        family += [grandchild for child in family for grandchild in _children(child)]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stats", timeout=10) as r:
            assert r.status == 200
        time.sleep(0.5)
        printed, logged = out.read_text(), err.read_text()  # while it runs, not its goodbye
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(_alive(pid) for pid in family) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in family:
            if _alive(pid):
                os.killpg(pid, signal.SIGKILL)
    return Output(port, printed, logged, out.read_text(), err.read_text())


def test_it_prints_one_block_and_nothing_else(tmp_path: Path) -> None:
    output = _run_up(tmp_path)
    base = f"http://127.0.0.1:{output.port}"
    assert output.printed.splitlines() == [
        "Slowave is up",
        f"  admin      {base}/admin/  (first login: slowave createadmin)",
        f"  REST docs  {base}/api/docs",
        f"  MCP        {base}/mcp",
        f"  metrics    {base}/metrics",
        "  worker     embedded, consolidating every 300 s",
        f"  database   {tmp_path / 'slowave.sqlite3'}",
        "Stop with Ctrl+C. Startup details: slowave up --verbose",
    ]
    # No banner, no INFO lines, no access log, no warnings: not even in what was buffered.
    assert output.logged == "" and "celery@" not in output.all_printed + output.all_logged


def test_verbose_brings_back_the_worker_banner_and_server_lines(tmp_path: Path) -> None:
    output = _run_up(tmp_path, "--verbose")
    assert output.printed.startswith("Slowave is up\n")
    everything = output.all_printed + output.all_logged
    assert "[tasks]" in everything and "celery@" in everything  # Celery's banner
    assert "Uvicorn running on" in output.logged
    assert '"GET /api/stats HTTP/1.1" 200' in everything  # the access log


def test_it_names_the_worker_state_when_there_is_none(tmp_path: Path) -> None:
    output = _run_up(tmp_path, "--no-worker")
    worker = "  worker     off (--no-worker): nothing consolidates until a worker runs\n"
    assert worker in output.printed
    assert output.all_logged == "", output.all_logged


def test_it_says_so_instead_of_its_block_when_the_port_is_taken(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = slowave(tmp_path, "up", "--port", str(port), timeout=60)
    assert result.code == 1 and "Slowave is up" not in result.out
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in result.err
