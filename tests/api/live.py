"""A live `slowave up` for black-box API tools (schemathesis, MCP Inspector), with a staff token."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.admin.live import free_port
from tests.cli.runner import ENTRY, REPO_ROOT, cli_env, slowave


@dataclass(frozen=True)
class Live:
    base: str
    token: str  # a staff user's ApiToken
    home: Path

    def call(self, path: str, body: Any) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.base}/api/{path}",
            method="POST",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())["data"]


def staff_token(home: Path) -> str:
    """A staff login and its API token in the store under `home`, made through the CLI."""
    made = slowave(
        home, "createadmin", "--username", "staff", "--password-stdin", stdin="live-staff-pw-1\n"
    )
    assert made.code == 0, made.err
    created = slowave(home, "--json", "token", "create", "--user", "staff", "--name", "tests")
    assert created.code == 0, created.err
    return created.json()["data"]["token"]


@contextmanager
def slowave_up(home: Path, **env: str) -> Iterator[Live]:
    """`slowave up --no-worker` on a free loopback port, real embedding model, tokens required."""
    port = free_port()
    server_env = cli_env(
        home, SLOWAVE_EMBEDDER="sentence-transformers", SLOWAVE_ALLOW_ANONYMOUS_LOCAL="false"
    )
    server_env.update(env)
    log = (home / "up.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "up", "--port", str(port), "--no-worker"],
        cwd=REPO_ROOT,
        env=server_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/health", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "slowave up did not start:\n" + (home / "up.log").read_text()
                    ) from None
                time.sleep(0.2)
        # `up` has migrated the store by now; the login and token go into the same file.
        yield Live(base=base, token=staff_token(home), home=home)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
