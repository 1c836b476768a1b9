"""Rendering of benchmark results: one rich table per method and a JSON document."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from slowave_site.bench.metrics import CATEGORY_NAMES, RECALL_KS


def fmt(value: float | None, digits: int = 3) -> str:
    """A table cell: fixed digits, an en dash for a missing figure."""
    return "–" if value is None else f"{value:.{digits}f}"


def method_table(name: str, summary: Mapping[str, Any]) -> Table:
    """Category rows then overall: n, hit %, R@5/10/20, mean hypothesis chars, p50/p95 ms."""
    primary = summary.get("primary_latency") or "call"
    # Compact box and headers so the table fits 80 columns (non-TTY output, CI logs).
    table = Table(
        title=f"LoCoMo — {name} (latency: ms per {primary} call)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("category", no_wrap=True)
    for label in ("n", "hit %", *(f"R@{k}" for k in RECALL_KS), "chars", "p50", "p95"):
        table.add_column(label, justify="right")

    def row(label: str, s: Mapping[str, Any], *, bold: bool = False) -> None:
        cells = [
            label,
            str(s["n"]),
            fmt(s["hit_pct"], 1),
            *(fmt(s[f"recall@{k}"]) for k in RECALL_KS),
            fmt(s["mean_hypothesis_chars"], 0),
            fmt(s["p50_ms"], 1),
            fmt(s["p95_ms"], 1),
        ]
        table.add_row(*cells, style="bold" if bold else None)

    for key, s in summary["categories"].items():
        label = f"{key} {CATEGORY_NAMES.get(int(key), '')}".strip()
        row(label, s)
    table.add_section()
    row("overall", summary["overall"], bold=True)
    others = [
        f"{kind}: p50 {fmt(v['p50_ms'], 1)} ms, p95 {fmt(v['p95_ms'], 1)} ms ({v['calls']} calls)"
        for kind, v in summary.get("latency", {}).items()
        if kind != summary.get("primary_latency")
    ]
    table.caption = "; ".join(["chars = mean hypothesis length", *others])
    return table


def print_report(report: Mapping[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    for name, summary in report["methods"].items():
        console.print(method_table(name, summary))
        seconds = summary.get("wall_seconds")
        if seconds is not None:
            console.print(f"  {name}: {seconds:.1f} s wall time\n")


def write_json(path: str | os.PathLike[str], report: Mapping[str, Any]) -> Path:
    """Write atomically so an interrupted run never leaves a truncated results file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2, sort_keys=True, ensure_ascii=False, default=str)
            handle.write("\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
