"""The server under test for `slowave bench load`: a real `slowave up` in a subprocess.

Lives here: starting it on a free loopback port with its own temporary SLOWAVE_HOME (so the
user's memory is never touched), waiting for `/api/health`, stopping it, and reading its log
for tracebacks afterwards. Does not live here: the agents (load_agent) or the report (load).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

import memory

REPO_ROOT = Path(memory.__file__).resolve().parent.parent
ENTRY = "import sys; from slowave_site.cli import main; main(sys.argv[1:])"
START_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 15.0
LOG_EXCERPT_LINES = 40


@dataclass
class BenchServer:
    base_url: str
    home: Path
    log_path: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    # Filled in once the server has stopped (the log is complete then).
    problems: dict[str, object] = field(default_factory=dict)

    def read_problems(self) -> dict[str, object]:
        """Tracebacks and lock errors the server logged: a 200 can still hide a logged failure."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        lines = text.splitlines()
        first = next((i for i, line in enumerate(lines) if line.startswith("Traceback")), None)
        return {
            "tracebacks": sum(line.startswith("Traceback") for line in lines),
            "database_locked": sum("database is locked" in line for line in lines),
            "excerpt": [] if first is None else lines[first : first + LOG_EXCERPT_LINES],
        }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(home: Path, *, embedder: str, database_url: str | None, worker: bool) -> dict:
    # The caller's SLOWAVE_* and DATABASE_URL stay out: SLOWAVE_DB_PATH could name real memory.
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("SLOWAVE_") and k != "DATABASE_URL"
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.update(
        SLOWAVE_HOME=str(home),
        # The caller's ONNX export (it names no memory): the server makes none of its own.
        SLOWAVE_MODEL_DIR=str(settings.SLOWAVE_MODEL_DIR),
        SLOWAVE_EMBEDDER=embedder,
        SLOWAVE_EMBEDDED_WORKER="true" if worker else "false",
    )
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


def _healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/api/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def bench_server(
    *, embedder: str, database_url: str | None = None, worker: bool = False, workers: int = 1
) -> Iterator[BenchServer]:
    """`slowave up` on 127.0.0.1:<free port>; yields once `/api/health` answers."""
    home = Path(tempfile.mkdtemp(prefix="slowave-load-"))
    port = free_port()
    server = BenchServer(f"http://127.0.0.1:{port}", home, home / "up.log")
    args = [sys.executable, "-c", ENTRY, "up", "--host", "127.0.0.1", "--port", str(port)]
    if not worker:
        args.append("--no-worker")
    if workers != 1:
        args += ["--workers", str(workers)]
    env = server_env(home, embedder=embedder, database_url=database_url, worker=worker)
    with server.log_path.open("wb") as log:
        server.process = subprocess.Popen(
            args,
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the worker goes down with it
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not _healthy(server.base_url):
            if server.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    "slowave up did not start:\n" + server.log_path.read_text(errors="replace")
                )
            time.sleep(0.2)
        yield server
    finally:
        _stop(server.process)
        server.problems = server.read_problems()
        shutil.rmtree(home, ignore_errors=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
