"""`slowave bench window`: how soon a freshly spawned `mcp_serve` answers an agent, and its size.

Lives here: spawning `manage.py mcp_serve` over stdio with the SDK's own client (the way
agents start it), the times from spawn to each milestone of an agent's first task
(initialize, tools/list, activate, remember, recall), the server's RSS read from /proc after
the recall, the same-run baselines (another revision's checkout spawned alternately with
this one, and the interpreter's own start), and the summary (median, min, max).
Does not live here: making the store (slowave_site.bench.scale's ingest; the command calls
it), printing (the command).

Each variant serves its own copy of the store from its own SLOWAVE_HOME, so one revision's
writes and greeter cache never meet another's; one unmeasured start per variant first fills
the greeter's handshake cache (mcp_bridge/greeter.py), as any start after an agent's first.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

MILESTONES = ("initialize", "tools_list", "activate", "remember", "recall")
# What the floor spawns: the interpreter alone, and the interpreter importing the SDK.
FLOORS = {"interpreter": "pass", "import_mcp": "import mcp.server.lowlevel"}
REQUEST_TIMEOUT_SECONDS = 120.0  # generous: a loaded machine, a cold page cache
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Variant:
    """One server to measure: `root`'s manage.py, serving `db` with SLOWAVE_HOME `home`."""

    name: str
    root: Path
    home: Path
    db: Path


def copy_store(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite store (its WAL included), through SQLite's backup."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def count_memories(db: Path) -> int:
    with closing(sqlite3.connect(db)) as connection:
        (count,) = connection.execute("SELECT count(*) FROM memory_memory").fetchone()
    return int(count)


@contextmanager
def checkout(revision: str, *, repo: Path = PROJECT_ROOT) -> Iterator[Path]:
    """`revision` checked out (detached) into a temporary git worktree, removed afterwards."""
    place = Path(tempfile.mkdtemp(prefix="slowave-window-rev-")) / "checkout"
    git = ["git", "-C", str(repo)]
    done = subprocess.run(
        [*git, "worktree", "add", "--detach", str(place), revision],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        shutil.rmtree(place.parent, ignore_errors=True)
        raise ValueError(f"--against {revision}: {done.stderr.strip() or 'git worktree failed'}")
    try:
        yield place
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(place)], capture_output=True)
        shutil.rmtree(place.parent, ignore_errors=True)


def _server_env(variant: Variant, marker: str, model_dir: str) -> dict[str, str]:
    # The user's environment, minus anything that could point the server at a real store.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLOWAVE_")}
    env.pop("DATABASE_URL", None)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env | {
        "SLOWAVE_HOME": str(variant.home),
        "SLOWAVE_DB_PATH": str(variant.db),
        "SLOWAVE_MODEL_DIR": model_dir,
        "SLOWAVE_WINDOW_MARKER": marker,
    }


def child_pid(marker: str, variable: str = "SLOWAVE_WINDOW_MARKER") -> int:
    """Our direct child carrying `variable=marker` in its environment (stdio_client hides
    the pid); the end-to-end tests find their servers the same way."""
    needle = f"{variable}={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == os.getpid() and needle in (entry / "environ").read_bytes().split(b"\0"):
                return int(entry.name)
        except (OSError, ValueError, IndexError):
            continue
    raise RuntimeError("could not find the mcp_serve child process")


def _status_mb(pid: int, field: str) -> float:
    for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def _cpu_seconds(pid: int) -> float:
    fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def _call(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(name, arguments)
    envelope = result.structured_content
    if not isinstance(envelope, dict) or envelope.get("ok") is not True:
        raise RuntimeError(f"{name} did not succeed: {envelope}")
    data = envelope["data"]
    assert isinstance(data, dict)
    return data


async def start_once(
    variant: Variant, *, scope: str, query: str, model_dir: str
) -> dict[str, float]:
    """Spawn the server, run an agent's opening moves, and time them from the spawn."""
    marker = uuid.uuid4().hex
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_serve"],
        env=_server_env(variant, marker, model_dir),
        cwd=str(variant.root),
    )
    client = types.Implementation(name="slowave-bench-window", version="1")
    seconds: dict[str, float] = {}
    with (variant.home / "mcp_serve.stderr.log").open("a") as errlog:
        started = time.perf_counter()

        def mark(milestone: str) -> None:
            seconds[milestone] = time.perf_counter() - started

        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(
                read, write, read_timeout_seconds=REQUEST_TIMEOUT_SECONDS, client_info=client
            ) as session:
                seconds |= await _first_task(session, mark, scope=scope, query=query, marker=marker)
    return seconds


async def _first_task(
    session: ClientSession, mark: Callable[[str], None], *, scope: str, query: str, marker: str
) -> dict[str, float]:
    """The handshake, then activate, remember and recall, each marked when answered; the
    server's CPU by the remember and its RSS after the recall."""
    await session.initialize()
    mark("initialize")
    await session.list_tools()
    mark("tools_list")
    opened = await _call(
        session, "slowave_activate", {"task": query, "initial_goal": "answer it", "scope": scope}
    )
    mark("activate")
    session_id = opened["session_id"]
    remembered = f"The window bench started a server ({marker[:8]})"
    await _call(
        session,
        "slowave_remember",
        {"scope": scope, "session_id": session_id, "content": remembered, "type": "fact"},
    )
    mark("remember")
    pid = child_pid(marker)
    cpu_at_remember = _cpu_seconds(pid)
    await _call(
        session, "slowave_recall", {"session_id": session_id, "scope": scope, "query": query}
    )
    mark("recall")
    return {
        "rss_mb": _status_mb(pid, "VmRSS"),
        "peak_rss_mb": _status_mb(pid, "VmHWM"),
        "cpu_at_remember": cpu_at_remember,
    }


def floor_once(code: str) -> float:
    """Seconds from spawn to exit of a bare interpreter running `code`."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tempfile.gettempdir())
    return time.perf_counter() - started


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def run_window(
    *,
    variants: list[Variant],
    runs: int,
    scope: str,
    query: str,
    model_dir: str,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """`runs` rounds; each spawns every variant once, then each floor, in turn."""

    def start(variant: Variant) -> dict[str, float]:
        return anyio.run(lambda: start_once(variant, scope=scope, query=query, model_dir=model_dir))

    for variant in variants:  # fills the greeter cache; not measured
        start(variant)
    samples: dict[str, list[dict[str, float]]] = {v.name: [] for v in variants}
    floors: dict[str, list[float]] = {name: [] for name in FLOORS}
    load_before = os.getloadavg()
    for round_number in range(runs):
        for variant in variants:
            samples[variant.name].append(start(variant))
        for name, code in FLOORS.items():
            floors[name].append(floor_once(code))
        latest = ", ".join(f"{n} {rows[-1]['remember']:.2f} s" for n, rows in samples.items())
        log(f"round {round_number + 1}/{runs}: first remember {latest}")
    report: dict[str, Any] = {
        "runs": runs,
        "scope": scope,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "variants": {
            name: {key: summary([s[key] for s in rows]) for key in rows[0]}
            for name, rows in samples.items()
        },
        "floor": {name: summary(values) for name, values in floors.items()},
    }
    if len(variants) > 1:
        this, base = (report["variants"][v.name] for v in variants[:2])
        report["ratio"] = {
            key: round(this[key]["median"] / base[key]["median"], 3)
            for key in (*MILESTONES, "rss_mb", "cpu_at_remember")
            if base[key]["median"] > 0
        }
    return report
