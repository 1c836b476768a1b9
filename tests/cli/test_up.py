"""`slowave up` runs the web server and the embedded worker together and stops them together."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.admin.live import free_port
from tests.cli.runner import ENTRY, REPO_ROOT, cli_env


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_it_serves_the_admin_and_stops_its_worker_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = cli_env(tmp_path, SLOWAVE_EMBEDDED_WORKER="true")
    up = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "up", "--port", str(port)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/admin/login/", timeout=2
                ) as r:
                    assert r.status == 200
                break
            except OSError:
                assert up.poll() is None and time.monotonic() < deadline, "slowave up did not start"
                time.sleep(0.2)
        workers = _children(up.pid)
        assert workers, "slowave up should start the embedded worker as a child process"
        up.send_signal(signal.SIGTERM)
        assert up.wait(timeout=30) == 0
        deadline = time.monotonic() + 20
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in workers), "the worker outlived slowave up"
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait()
        for pid in workers:  # the worker runs in its own process group: never leave it behind
            if _alive(pid):
                os.killpg(pid, signal.SIGKILL)
