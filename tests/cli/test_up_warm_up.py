"""`slowave up` warms itself as mcp_serve does (memory.services.warming): the model loaded and
the vector copy caught up in a thread beside the server, before any request arrives."""

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

WARMED = "warm-up done: model loaded, vector copy caught up"


def test_it_warms_the_model_and_the_vector_copy_before_any_request(tmp_path: Path) -> None:
    # The real model, as a server serves it; DEBUG shows the warm-up's closing line.
    env = cli_env(tmp_path, SLOWAVE_EMBEDDER="onnx", SLOWAVE_LOG_LEVEL="DEBUG")
    log, port = tmp_path / "up.log", free_port()
    with log.open("w") as stderr:
        up = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "up", "--no-worker", "--port", str(port)],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        while WARMED not in log.read_text():
            assert up.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "no warm-up: " + log.read_text()[-3000:]
            time.sleep(0.2)
        _answers(f"http://127.0.0.1:{port}/admin/login/", up, deadline)  # then stops cleanly
    finally:
        os.killpg(up.pid, signal.SIGTERM)
        up.wait(timeout=30)
    assert "warm-up stopped early" not in log.read_text()


def _answers(url: str, up: subprocess.Popen[bytes], deadline: float) -> None:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                assert reply.status == 200
                return
        except OSError:
            assert up.poll() is None and time.monotonic() < deadline, "slowave up did not serve"
            time.sleep(0.2)
