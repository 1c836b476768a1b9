"""The official MCP Inspector CLI, pinned in tests/inspector/package.json, against both transports.

`.ci/run` installs it with `npm ci` from package-lock.json; the test runs that local binary
(nothing is downloaded at test time). It lists the five tools and completes a
`slowave_activate` over stdio (`manage.py mcp_serve`) and over streamable HTTP (`/mcp` of a
live `slowave up` that requires tokens).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.live import Live, slowave_up
from tests.cli.runner import REPO_ROOT

INSPECTOR = Path(__file__).resolve().parent / "node_modules" / ".bin" / "mcp-inspector"
TOOLS = sorted(
    ["slowave_activate", "slowave_remember", "slowave_recall", "slowave_feedback", "slowave_commit"]
)


@pytest.fixture(scope="module", autouse=True)
def installed() -> None:
    if not INSPECTOR.exists():
        message = "MCP Inspector not installed: run `npm ci --prefix tests/inspector`"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI installs it; a missing binary there is a broken step
        pytest.skip(message)


def _inspect(home: Path, *args: str, timeout: float = 180) -> dict[str, Any]:
    """One `mcp-inspector --cli` call; its stdout is the JSON result."""
    env = {k: os.environ[k] for k in ("PATH", "LANG", "TMPDIR") if k in os.environ}
    env["HOME"] = str(home)  # the inspector keeps its catalog under ~/.mcp-inspector
    proc = subprocess.Popen(
        [str(INSPECTOR), "--cli", *args],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the stdio server is its child: stop the whole group
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"inspector timed out:\n{out[-2000:]}\n{err[-4000:]}")
    assert proc.returncode == 0, f"{out[-2000:]}\n{err[-4000:]}"
    return json.loads(out)


def _activate_args(scope: str) -> list[str]:
    return [
        "--method",
        "tools/call",
        "--tool-name",
        "slowave_activate",
        "--tool-arg",
        "task=plan the release",
        "initial_goal=ship it",
        f"scope={scope}",
    ]


def _check(listed: dict[str, Any], called: dict[str, Any]) -> None:
    assert sorted(t["name"] for t in listed["tools"]) == TOOLS
    assert called.get("isError") is not True, called
    envelope = called["structuredContent"]
    assert envelope["ok"] is True and envelope["data"]["session_id"].startswith("sess_")
    assert json.loads(called["content"][0]["text"]) == envelope


def test_it_lists_and_calls_the_tools_over_stdio(tmp_path: Path) -> None:
    server = [
        "-e",
        f"SLOWAVE_HOME={tmp_path}",
        "-e",
        "SLOWAVE_EMBEDDER=onnx",
        "-e",
        f"SLOWAVE_MODEL_DIR={os.environ['SLOWAVE_MODEL_DIR']}",
        "-e",
        "SLOWAVE_EMBEDDED_WORKER=false",
        "--cwd",
        str(REPO_ROOT),
    ]
    command = ["--", sys.executable, "manage.py", "mcp_serve", "--no-worker"]
    listed = _inspect(tmp_path, *server, "--method", "tools/list", *command)
    called = _inspect(tmp_path, *server, *_activate_args("project:inspector-stdio"), *command)
    _check(listed, called)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with slowave_up(tmp_path_factory.mktemp("inspector-http")) as server:
        yield server


def test_it_lists_and_calls_the_tools_over_streamable_http(live: Live, tmp_path: Path) -> None:
    target = [
        "--transport",
        "http",
        "--server-url",
        f"{live.base}/mcp",
        "--header",
        f"Authorization: Bearer {live.token}",
    ]
    listed = _inspect(tmp_path, *target, "--method", "tools/list")
    called = _inspect(tmp_path, *target, *_activate_args("project:inspector-http"))
    _check(listed, called)


def test_it_is_refused_over_http_without_a_token(live: Live, tmp_path: Path) -> None:
    env = {k: os.environ[k] for k in ("PATH", "LANG", "TMPDIR") if k in os.environ}
    run = subprocess.run(
        [str(INSPECTOR), "--cli", "--transport", "http", "--server-url", f"{live.base}/mcp"]
        + ["--method", "tools/list"],
        cwd=REPO_ROOT,
        env={**env, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    # The 401 sends the inspector looking for an OAuth login, which a script cannot give.
    assert run.returncode != 0 and "tools" not in run.stdout
    assert "auth_required" in run.stdout + run.stderr, run.stdout + run.stderr
