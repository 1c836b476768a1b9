"""Heavy calls cannot starve short ones under `slowave up` (issue 16.7).

A call whose body is long (a heavy cue) takes at most SLOWAVE_HTTP_WORKERS - 1 worker threads,
and its facets are embedded in batches that let a short call's embedding go first. Four
20,000-character tasks at once once held a trivial recall from another client for 11.6 s (p50)
and left the server hundreds of MB larger.

The first test is exact: heavy activates wait on SQLite's write lock, which the test holds,
and a short call must still find a worker. The second runs heavy cues for real on the model and
asserts an order, not a duration: the short recall answers before the heavy cues have all
answered (it used to queue behind them for a thread, and then for the model), and the server
hands back the memory the heavy cues took (it used to keep ~150 MB after these two tests).
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.api.live import Live, slowave_up
from tests.api.support import fresh_scope

WORKERS = 2
HEAVY = 4  # heavy calls in flight at once: twice the workers
SETTLE_SECONDS = 0.5  # for the heavy calls to reach the server before the short one


def _server_rss_mb(home: Path) -> float:
    """Resident memory of the `slowave up` process serving `home`."""
    needle = f"SLOWAVE_HOME={home}".encode()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and needle in (entry / "environ").read_bytes().split(b"\0"):
                if b"up" in (entry / "cmdline").read_bytes().split(b"\0"):
                    status = (entry / "status").read_text()
                    return int(status.split("VmRSS:")[1].split()[0]) / 1024
        except OSError:
            continue
    raise AssertionError(f"no slowave up process serves {home}")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    home = tmp_path_factory.mktemp("heavy-calls")
    # The real model (the heavy part of a heavy cue); writers wait on a held lock, not fail;
    # calls go tokenless from loopback, since checking a token writes its last use.
    with slowave_up(
        home,
        SLOWAVE_HTTP_WORKERS=str(WORKERS),
        SLOWAVE_DB_BUSY_TIMEOUT_MS="120000",
        SLOWAVE_ALLOW_ANONYMOUS_LOCAL="true",
    ) as server:
        yield server


def _post(live: Live, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{live.base}/api/{path}",
        method="POST",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:  # a refusal still carries its envelope
        return json.loads(exc.read())


def _mcp(live: Live, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One MCP tool call over `/mcp`: its envelope."""

    async def call() -> dict[str, Any]:
        async with (
            streamable_http_client(f"{live.base}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool(tool, arguments, read_timeout_seconds=300)
            assert isinstance(result, types.CallToolResult)
            assert isinstance(result.structured_content, dict)
            return result.structured_content

    return anyio.run(call)


def _heavy_task(seed: int) -> str:
    """A 20,000-character task in many long lines: 33 facets of the model's full 256 tokens."""
    rng = random.Random(seed)
    words = "billing queue retry deploy cache invoice payment schema report worker".split()
    lines = [" ".join(f"{rng.choice(words)}{rng.randrange(900)}" for _ in range(60))]
    while sum(len(line) + 1 for line in lines) < 20_000:
        lines.append(" ".join(f"{rng.choice(words)}{rng.randrange(900)}" for _ in range(60)))
    return "\n".join(lines)[:20_000]


class Call(threading.Thread):
    """One request in a thread; `done` lists the names of calls in the order they answered."""

    def __init__(self, name: str, work: Callable[[], dict[str, Any]], done: list[str]) -> None:
        super().__init__(daemon=True)
        self.label, self.work, self.done = name, work, done
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.answered = threading.Event()

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.done.append(self.label)
            self.answered.set()

    def envelope(self) -> dict[str, Any]:
        self.join(timeout=600)
        assert not self.is_alive() and self.error is None, self.error
        assert self.result is not None
        return self.result


def _heavy_activates(live: Live, done: list[str], scope: str) -> list[Call]:
    """HEAVY activates with a 20,000-character task, every other one over MCP."""

    def activate(i: int) -> dict[str, Any]:
        body = {"task": _heavy_task(i), "initial_goal": "g", "scope": scope}
        return _mcp(live, "slowave_activate", body) if i % 2 else _post(live, "activate", body)

    calls = [Call(f"heavy{i}", lambda i=i: activate(i), done) for i in range(HEAVY)]
    for call in calls:
        call.start()
    return calls


@pytest.fixture(scope="module")
def session(live: Live) -> dict[str, Any]:
    """A scope with a memory and an open session: the short recall's."""
    scope = fresh_scope("short")
    opened = _post(
        live, "activate", {"task": "Where do invoices live?", "initial_goal": "g", "scope": scope}
    )
    session_id = opened["data"]["session_id"]
    stored = _post(
        live,
        "remember",
        {
            "scope": scope,
            "session_id": session_id,
            "content": "Invoices are stored in the billing Postgres database",
            "type": "fact",
        },
    )
    assert stored["ok"], stored
    return {
        "scope": scope,
        "session_id": session_id,
        "memory_id": stored["data"]["memory_id"],
        "rss_mb": _server_rss_mb(live.home),  # the model loaded, no heavy cue seen yet
    }


def test_it_keeps_a_worker_for_short_calls_while_heavy_ones_hold_the_rest(
    live: Live, session: dict[str, Any]
) -> None:
    done: list[str] = []
    held = sqlite3.connect(Path(live.home) / "slowave.sqlite3", isolation_level=None, timeout=30)
    try:
        held.execute("BEGIN IMMEDIATE")  # each heavy activate ranks, then waits to write
        heavy = _heavy_activates(live, done, session["scope"])
        time.sleep(SETTLE_SECONDS)
        # Reads only (WAL): it needs a free worker thread and nothing else.
        short = Call(
            "short",
            lambda: _post(
                live,
                "recall",
                {"session_id": "sess_unknown", "scope": session["scope"], "query": "invoices"},
            ),
            done,
        )
        short.start()
        answered_while_held = short.answered.wait(timeout=60)
    finally:
        held.execute("ROLLBACK")
        held.close()
    assert answered_while_held, "the short call found no free worker while heavy calls waited"
    assert short.envelope()["error"]["message"] == "unknown session_id: sess_unknown"
    for call in heavy:
        assert call.envelope()["ok"], call.result


def test_a_short_recall_answers_while_heavy_cues_run(live: Live, session: dict[str, Any]) -> None:
    done: list[str] = []
    heavy = _heavy_activates(live, done, fresh_scope("heavy"))
    time.sleep(SETTLE_SECONDS)
    short = Call(
        "short",
        lambda: _post(
            live,
            "recall",
            {
                "session_id": session["session_id"],
                "scope": session["scope"],
                "query": "Where do invoices live?",
            },
        ),
        done,
    )
    short.start()
    recalled = short.envelope()
    assert recalled["ok"], recalled
    assert session["memory_id"] in [m["memory_id"] for m in recalled["data"]["memories"]]
    for call in heavy:
        assert call.envelope()["ok"], call.result
    # Queued behind the heavy calls, it answers after at least HEAVY - WORKERS + 1 of them.
    assert done.index("short") < HEAVY - WORKERS + 1, done
    assert _server_rss_mb(live.home) - session["rss_mb"] < 100
