"""`slowave bench memorycode PATH`: coding instructions updated across sessions (MemoryCode).

The file is in LoCoMo's layout, so ingest, asking, the kept store (``--store``), the policy
overrides (``--policy``) and the bm25 / dense / rrf baselines are LoCoMo's runner
(locomo_run.py) under the bench name ``memorycode``; this module keeps its per-question rows
and scores them against MemoryCode's gold (memorycode_metrics.py): recall of the current version
at 1, 5 and 10, session recall_all@5, and how often a superseded version ranks above the
current one. ``half`` keeps the tuning or the confirming half of the dialogues (by a hash of
their id), so a signal tuned on one is confirmed on the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from slowave_site.bench import memorycode_metrics as mc
from slowave_site.bench.locomo import select_samples
from slowave_site.bench.locomo_run import run_locomo_bench
from slowave_site.bench.report import fmt, write_json


def score_rows(report: Mapping[str, Any], gold: Mapping[str, mc.Gold]) -> dict[str, list[dict]]:
    """Each method's per-question MemoryCode figures, from the LoCoMo report's rows."""
    scored: dict[str, list[dict]] = {}
    for method, rows in report["questions"].items():
        out = []
        for row in rows:
            key = f"{row['sample_id']}#{row['index']}"
            figures = mc.question_figures([i["dia_ids"] for i in row["items"]], gold[key])
            out.append({"key": key, "category": gold[key].category, **figures, "row": row})
        scored[method] = out
    return scored


def run_memorycode(
    path: str,
    *,
    samples: Sequence[str] = (),
    half: str | None = None,
    out: str | None = None,
    details: bool = False,
    log: Callable[[str], None] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The MemoryCode report; ``options`` are run_locomo_bench's (baselines, store, policy...)."""
    if half is not None and half not in mc.HALVES:
        raise ValueError(f"half must be one of {', '.join(mc.HALVES)}, not {half!r}")
    chosen = [s.sample_id for s in select_samples(path, samples)]
    if half is not None:
        chosen = [s for s in chosen if mc.half_of(s) == half]
    gold = mc.load_gold(path)
    report = run_locomo_bench(
        path, samples=chosen, details=True, log=log, bench="memorycode", **options
    )
    scored = score_rows(report, gold)
    result: dict[str, Any] = {
        "benchmark": "memorycode",
        "created_at": report["created_at"],
        "config": {**report["config"], "half": half},
        "methods": {
            name: {
                **mc.summary_by_category(rows),
                "latency": report["methods"][name].get("latency"),
                "wall_seconds": report["methods"][name].get("wall_seconds"),
            }
            for name, rows in scored.items()
        },
    }
    if details:
        result["questions"] = {
            name: [{k: v for k, v in r.items() if k != "row"} | _items(r["row"]) for r in rows]
            for name, rows in scored.items()
        }
    if out:
        write_json(out, result)
    return result


def _items(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"question": row["question"], "items": [i["dia_ids"] for i in row["items"]]}


COLUMNS = ("n", "cur@1", "cur@5", "cur@10", "sess_all@5", "sup_above@10", "sup_above@20")


def method_table(name: str, summary: Mapping[str, Any]) -> Table:
    table = Table(title=f"MemoryCode — {name}", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("category", no_wrap=True)
    for label in COLUMNS:
        table.add_column(label.replace("sup_above", "sup>cur"), justify="right")

    def row(label: str, s: Mapping[str, Any], bold: bool = False) -> None:
        cells = [str(s["n"]), *(fmt(s[c]) for c in COLUMNS[1:])]
        table.add_row(label, *cells, style="bold" if bold else None)

    for key, s in summary["categories"].items():
        row(f"{key} {mc.CATEGORY_NAMES.get(int(key), '')}".strip(), s)
    table.add_section()
    row("updated (41,42,45,46)", summary["updated"])
    row("overall", summary["overall"], bold=True)
    table.caption = (
        "cur@k: current version's gold among the first k (code: its turn; workplace: its "
        "session); sup>cur@k: an older version ranks above the current one in the first k"
    )
    return table


def print_report(report: Mapping[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    for name, summary in report["methods"].items():
        console.print(method_table(name, summary))
