"""The printed LongMemEval report: one rich table per method, question types then overall.

The JSON report is built by longmemeval.py and written with report.write_json.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from slowave_site.bench.report import fmt

# Two-line headers and short type names keep the table within 80 columns (CI logs, no TTY).
COLUMNS = (
    ("S any\n@5", "session_recall_any@5"),
    ("S all\n@5", "session_recall_all@5"),
    ("S all\n@10", "session_recall_all@10"),
    ("nDCG\n@5", "session_ndcg@5"),
    ("nDCG\n@10", "session_ndcg@10"),
    ("T all\n@10", "turn_recall_all@10"),
)


def short_type(name: str) -> str:
    return name.replace("single-session-", "ss-")


def method_table(name: str, summary: Mapping[str, Any]) -> Table:
    """Rows: each question type, then overall; n, the session and turn figures, p50/p95 ms."""
    primary = summary.get("primary_latency") or "call"
    table = Table(
        title=f"LongMemEval — {name} (latency: ms per {primary} call)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )
    table.add_column("question type", no_wrap=True)
    for label in ("n", *(label for label, _ in COLUMNS), "p50", "p95"):
        table.add_column(label, justify="right", no_wrap=True)

    def row(label: str, s: Mapping[str, Any], *, bold: bool = False) -> None:
        table.add_row(
            label,
            str(s["n"]),
            *(fmt(s[key]) for _, key in COLUMNS),
            fmt(s["p50_ms"], 1),
            fmt(s["p95_ms"], 1),
            style="bold" if bold else None,
        )

    for key, s in summary["types"].items():
        row(short_type(key), s)
    table.add_section()
    row("overall", summary["overall"], bold=True)
    others = [
        f"{kind}: p50 {fmt(v['p50_ms'], 1)} ms, p95 {fmt(v['p95_ms'], 1)} ms ({v['calls']} calls)"
        for kind, v in summary.get("latency", {}).items()
        if kind != summary.get("primary_latency")
    ]
    table.caption = "; ".join(
        ["S = session level, T = turn level (has_answer), ss = single-session", *others]
    )
    return table


def print_report(report: Mapping[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    config = report["config"]
    policy = config.get("policy") or {}
    overridden = ", ".join(policy.get("overrides") or []) or "none"
    console.print(
        f"LongMemEval {config['n_questions']} questions, roles {config['roles']}, "
        f"policy {policy.get('version')} (overrides: {overridden})"
    )
    slowave = config.get("slowave")
    if slowave:
        if slowave.get("ingest_reused"):
            console.print(f"  slowave: kept store {slowave['store']} (ingest skipped)")
        else:
            console.print(
                f"  slowave: ingested {slowave.get('ingest_turns')} turns in "
                f"{slowave.get('ingest_seconds')} s ({slowave.get('ingest_turns_per_second')}/s)"
            )
    for name, summary in report["methods"].items():
        console.print(method_table(name, summary))
        seconds = summary.get("wall_seconds")
        if seconds is not None:
            console.print(f"  {name}: {seconds:.1f} s wall time\n")
