"""The tables `slowave bench load` prints: one row per agent count, then per tool call."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from slowave_site.bench.load_agent import TOOLS


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _share(floor: dict[str, Any] | None) -> str:
    return "–" if not floor or floor["share"] is None else f"{floor['share']:.1%}"


def load_tables(report: dict[str, Any]) -> list[Table]:
    config = report["config"]
    title = f"bench load — {config['database']}, {config['embedder']}, {config['transport']}"
    summary = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    for label in ("agents", "cycles ok", "cycles/s", "wall s", "5xx", "errors", "busy"):
        summary.add_column(label, justify="right")
    summary.add_column("lost", justify="right")
    summary.add_column("recall hit", justify="right")
    floored = any("floor" in phase for phase in report["phases"])
    if floored:
        summary.add_column("of floor", justify="right")
    latency = Table(
        title="ms per tool call, storage_busy retries included",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    for label in ("agents", "tool", "calls", "p50", "p95", "p99", "busy", "errors"):
        latency.add_column(label, justify="right" if label != "tool" else "left")
    for phase in report["phases"]:
        summary.add_row(
            str(phase["agents"]),
            f"{phase['cycles_ok']}/{phase['cycles']}",
            f"{phase['cycles_per_second']:.2f}",
            f"{phase['wall_seconds']:.1f}",
            str(phase["http_5xx"]),
            str(sum(phase["errors"].values())),
            str(sum(phase["storage_busy_retries"].values())),
            str(phase["lost_writes"]),
            f"{phase['recall_hit_rate']:.0%}",
            *([_share(phase.get("floor"))] if floored else []),
        )
        if "floor" in phase:
            floor = phase["floor"]
            summary.add_row(
                "  floor",
                f"{floor['cycles_ok']}/{phase['cycles']}",
                f"{floor['cycles_per_second']:.2f}",
                "",
                str(floor["http_5xx"]),
                str(sum(floor["errors"].values())),
                "", "", "", "",
            )  # fmt: skip
        for tool in TOOLS:
            row = phase["latency_ms"][tool]
            errors = sum(v for k, v in phase["errors"].items() if k.startswith(f"{tool}:"))
            latency.add_row(
                str(phase["agents"]),
                tool,
                str(row["calls"]),
                _ms(row["p50"]),
                _ms(row["p95"]),
                _ms(row["p99"]),
                str(phase["storage_busy_retries"][tool]),
                str(errors),
            )
        latency.add_section()
    return [summary, latency]


def print_load(report: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    for table in load_tables(report):
        console.print(table)
    verification = report["verification"]
    console.print(
        f"read back {verification['checked']} memories over REST: "
        f"{verification['lost_writes']} lost; warm-up {report['warmup_seconds']} s; "
        f"load average {report['config']['loadavg_1m']['start']:.1f} → "
        f"{report['config']['loadavg_1m']['end']:.1f} on {report['config']['cpus']} CPUs"
    )
    shares = [
        f"{phase['agents']} agent(s) {_share(phase['floor'])}"
        for phase in report["phases"]
        if "floor" in phase
    ]
    if shares:
        console.print("cycles/s as a share of the no-work floor's: " + ", ".join(shares))
    for failure in report["failures"]:
        console.print(f"FAILED: {failure}")
