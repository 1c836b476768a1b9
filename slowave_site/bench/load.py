"""`slowave bench load`: N concurrent agents running full cognitive cycles over MCP HTTP.

Lives here: the phases (one per agent count, the same total cycles each), the read-back that
proves no write was lost, the per-phase summary. The checks are the bench's own: a run with a
lost write, a 5xx or an unretried error is reported as failed (`ok: false`).
Does not live here: the cycle (load_agent), the server (load_server), the tables (load_report).
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2

from slowave_site.bench.load_agent import (
    FACTS_PER_CYCLE,
    SHARED_EVERY,
    TOOLS,
    Agent,
    Plan,
    Ready,
    Tally,
)
from slowave_site.bench.load_floor import floor_server
from slowave_site.bench.load_server import bench_server
from slowave_site.bench.metrics import percentile_of

READBACK_CONCURRENCY = 8


def parse_agents(text: str, cycles: int) -> list[int]:
    """`--agents 1,4,16` → [1, 4, 16]; every agent of every phase needs at least one cycle."""
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--agents must be comma-separated integers, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise ValueError("--agents needs at least one positive agent count")
    if cycles < max(counts):
        raise ValueError(
            f"--cycles {cycles} is fewer than {max(counts)} agents: each needs a cycle"
        )
    return counts


def split_cycles(total: int, agents: int) -> list[int]:
    """`total` cycles shared out as evenly as possible between `agents`."""
    return [total // agents + (1 if i < total % agents else 0) for i in range(agents)]


async def run_phase(url: str, *, agents: int, cycles: int, run: str) -> tuple[Tally, float]:
    """All agents open their MCP sessions, then start together; returns the tally and wall s."""
    tally, plan = Tally(), Plan(run=run, agents=agents)
    ready, start = Ready(agents), anyio.Event()
    async with anyio.create_task_group() as group:
        for index, share in enumerate(split_cycles(cycles, agents)):
            agent = Agent(index=index, url=url, plan=plan, tally=tally)
            group.start_soon(agent.run, share, ready, start)
        await ready.all.wait()  # sessions initialized: the clock measures cycles only
        started = time.perf_counter()
        start.set()
    return tally, time.perf_counter() - started


async def read_back(url: str, written: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """GET /api/memories/{id} for every id a remember created: same scope, same content."""
    lost: list[str] = []
    statuses: dict[int, int] = {}
    limit = anyio.Semaphore(READBACK_CONCURRENCY)

    async def check(http: httpx2.AsyncClient, memory_id: str) -> None:
        scope, content = written[memory_id]
        async with limit:
            response = await http.get(f"{url}/api/memories/{memory_id}")
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        stored = response.json().get("data", {}).get("memory", {}) if response.is_success else {}
        if stored.get("scope") != scope or stored.get("content") != content:
            lost.append(memory_id)

    async with httpx2.AsyncClient(timeout=60.0) as http, anyio.create_task_group() as group:
        for memory_id in written:
            group.start_soon(check, http, memory_id)
    return {"checked": len(written), "lost": sorted(lost), "http_status": statuses}


def _latency(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"calls": 0, "p50": None, "p95": None, "p99": None}
    return {
        "calls": len(values),
        **{f"p{p}": round(percentile_of(values, p), 1) for p in (50, 95, 99)},
    }


def phase_summary(agents: int, cycles: int, tally: Tally, wall: float) -> dict[str, Any]:
    return {
        "agents": agents,
        "cycles": cycles,
        "cycles_ok": tally.cycles_ok,
        "cycles_failed": tally.cycles_failed,
        "wall_seconds": round(wall, 2),
        "cycles_per_second": round(tally.cycles_ok / wall, 2) if wall else None,
        "latency_ms": {tool: _latency(tally.latency_ms[tool]) for tool in TOOLS},
        "http_status": {str(k): v for k, v in sorted(tally.http_status.items())},
        "http_5xx": sum(v for k, v in tally.http_status.items() if k >= 500),
        "errors": dict(tally.errors),
        "error_samples": tally.error_samples,
        "storage_busy_retries": {tool: tally.busy_retries[tool] for tool in TOOLS},
        "memories_written": len(tally.written),
        "matched_instead_of_created": tally.matched,
        "recall_hit_rate": round(tally.recall_hits / cycles, 3) if cycles else None,
    }


def _database_label(database_url: str | None) -> str:
    if not database_url:
        return "sqlite"
    parts = urlsplit(database_url)
    return f"{parts.scheme}://{parts.hostname or ''}{parts.path}"  # never the password


def floor_summary(cycles: int, tally: Tally, wall: float, slowave_rate: float | None) -> dict:
    """The no-work server's row for one agent count, and Slowave's cycles/s as a share of it."""
    rate = round(tally.cycles_ok / wall, 2) if wall else None
    return {
        "cycles_ok": tally.cycles_ok,
        "cycles_per_second": rate,
        "latency_ms": {tool: _latency(tally.latency_ms[tool]) for tool in TOOLS},
        "http_5xx": sum(v for k, v in tally.http_status.items() if k >= 500),
        "errors": dict(tally.errors),
        "share": round(slowave_rate / rate, 4) if rate and slowave_rate is not None else None,
    }


async def _drive(
    url: str,
    agents: Sequence[int],
    cycles: int,
    log: Callable[[str], Any],
    floor_url: str | None = None,
) -> dict:
    run = secrets.token_hex(3)
    started = time.perf_counter()
    warm, _ = await run_phase(url, agents=1, cycles=1, run=f"{run}w")  # loads the model
    report: dict[str, Any] = {"warmup_seconds": round(time.perf_counter() - started, 2)}
    if floor_url:
        await run_phase(floor_url, agents=1, cycles=1, run=f"{run}w")
    written, phases = dict(warm.written), []
    for count in agents:
        log(f"load: {count} agent(s), {cycles} cycles")
        # The floor runs right before, so both rows see the same machine.
        floor = (
            await run_phase(floor_url, agents=count, cycles=cycles, run=run) if floor_url else None
        )
        tally, wall = await run_phase(url, agents=count, cycles=cycles, run=run)
        phases.append(phase_summary(count, cycles, tally, wall))
        if floor is not None:
            phases[-1]["floor"] = floor_summary(cycles, *floor, phases[-1]["cycles_per_second"])
        phases[-1]["_written"] = tally.written
        written.update(tally.written)
    verification = await read_back(url, written)
    lost = set(verification["lost"])
    for phase in phases:
        phase["lost_writes"] = len(lost & phase.pop("_written").keys())
    warm_summary = phase_summary(1, 1, warm, 1.0)
    report.update(
        warmup_errors=warm_summary["errors"],
        phases=phases,
        verification={**verification, "lost_writes": len(lost), "lost": verification["lost"][:20]},
    )
    return report


def run_load(
    *,
    agents: Sequence[int] = (1, 4, 16),
    cycles: int = 64,
    embedder: str = "sentence-transformers",
    database_url: str | None = None,
    worker: bool = False,
    floor: bool = False,
    workers: int = 1,
    log: Callable[[str], Any] = print,
) -> dict[str, Any]:
    load_before = os.getloadavg()  # the machine may be shared: say how busy it was
    with ExitStack() as stack:
        server = stack.enter_context(
            bench_server(
                embedder=embedder, database_url=database_url, worker=worker, workers=workers
            )
        )
        floor_url = stack.enter_context(floor_server(workers=workers)) if floor else None
        log(f"load: server at {server.base_url}" + (f", floor at {floor_url}" if floor_url else ""))
        report = anyio.run(_drive, server.base_url, list(agents), cycles, log, floor_url)
    failures = _failures(report, server.problems)
    return {
        "config": {
            "agents": list(agents),
            "cycles_per_phase": cycles,
            "facts_per_cycle": FACTS_PER_CYCLE,
            "shared_scope_every": SHARED_EVERY,
            "embedder": embedder,
            "database": _database_label(database_url),
            "worker": worker,
            "workers": workers,
            "floor": floor,
            "transport": "mcp streamable-http",
            "cpus": os.cpu_count(),
            "loadavg_1m": {"start": load_before[0], "end": os.getloadavg()[0]},
        },
        **report,
        "server_log": server.problems,
        "failures": failures,
        "ok": not failures,
    }


def _failures(report: dict[str, Any], problems: dict[str, Any]) -> list[str]:
    out = []
    for phase in report["phases"]:
        label = f"{phase['agents']} agent(s)"
        if phase["http_5xx"]:
            out.append(f"{label}: {phase['http_5xx']} HTTP 5xx")
        if phase["errors"]:
            out.append(f"{label}: errors {phase['errors']}")
        if phase["lost_writes"]:
            out.append(f"{label}: {phase['lost_writes']} lost writes")
        floor = phase.get("floor")
        if floor and (floor["http_5xx"] or floor["errors"]):
            out.append(f"{label}: the floor server failed: {floor['errors']}")
        if phase["matched_instead_of_created"]:
            out.append(f"{label}: {phase['matched_instead_of_created']} distinct facts matched")
    readback_5xx = sum(v for k, v in report["verification"]["http_status"].items() if k >= 500)
    if readback_5xx:
        out.append(f"read-back: {readback_5xx} HTTP 5xx")
    if report["warmup_errors"]:
        out.append(f"warm-up: errors {report['warmup_errors']}")
    if problems.get("tracebacks"):
        out.append(f"server logged {problems['tracebacks']} traceback(s)")
    return out
