"""A live `slowave up` for black-box API tools (schemathesis, MCP Inspector), with a staff token."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.admin.live import live_server
from tests.cli.runner import slowave


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
    with live_server(
        home, ready="/api/health", **({"SLOWAVE_ALLOW_ANONYMOUS_LOCAL": "false"} | env)
    ) as base:
        # `up` has migrated the store by now; the login and token go into the same file.
        yield Live(base=base, token=staff_token(home), home=home)


@contextmanager
def slowave_up_waiting(home: Path, workers: int) -> Iterator[Live]:
    """A loopback-open, hash-embedder server with `workers` HTTP worker threads whose calls wait
    (a busy timeout far beyond any test) on a write lock a test holds, instead of answering
    busy."""
    with slowave_up(
        home,
        SLOWAVE_EMBEDDER="hash",
        SLOWAVE_ALLOW_ANONYMOUS_LOCAL="true",
        SLOWAVE_DB_BUSY_TIMEOUT_MS="120000",
        SLOWAVE_HTTP_WORKERS=str(workers),
    ) as server:
        yield server
