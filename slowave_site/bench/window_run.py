"""`slowave bench window`'s run: the store, the variants and their scratch homes, the report.

The measuring itself is slowave_site.bench.window's; this module decides what is measured:
this checkout, and with `against` a revision checked out beside it, each serving its own copy
of one store (`db`, built with bench scale's ingest when it does not exist).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from django.conf import settings

from slowave_site.bench.window import (
    PROJECT_ROOT,
    Variant,
    checkout,
    copy_store,
    count_memories,
    run_window,
)


def run_window_bench(
    *,
    db: str | None,
    memories: int,
    runs: int,
    against: str | None,
    scope: str,
    query: str,
    build: Callable[[Path, int, Callable[[str], None]], None],
    log: Callable[[str], None],
) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="slowave-window-"))
    try:
        with ExitStack() as stack:
            roots = {"this": PROJECT_ROOT}
            if against:  # first: a revision that does not exist fails before any ingest
                roots[f"against {against}"] = stack.enter_context(checkout(against))
            store = Path(db).expanduser() if db else scratch / "store.sqlite3"
            if not store.exists():
                log(f"building a store of {memories} memories in {store}")
                build(store, memories, log)
            variants = []
            for index, (name, root) in enumerate(roots.items()):
                home = scratch / f"home-{index}"
                home.mkdir()
                copy_store(store, home / "slowave.sqlite3")
                variants.append(
                    Variant(name=name, root=root, home=home, db=home / "slowave.sqlite3")
                )
            report = run_window(
                variants=variants,
                runs=runs,
                scope=scope,
                query=query,
                model_dir=str(settings.SLOWAVE_MODEL_DIR),
                log=log,
            )
        report["memories"] = count_memories(store)
        report["cores"] = os.cpu_count()
        return report
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def format_window(report: dict[str, Any]) -> str:
    """The report as a table: seconds from spawn (median [min–max]) per variant and floor."""
    load = report["load_before"][0], report["load_after"][0]
    lines = [
        f"{report['memories']} memories, {report['runs']} runs per variant, scope "
        f"{report['scope']}, load {load[0]:.2f} before / {load[1]:.2f} after, "
        f"{report['cores']} cores"
    ]
    for name, rows in report["variants"].items():
        lines.append(f"{name}:")
        for key, row in rows.items():
            unit = " MB" if key.endswith("_mb") else " s"
            lines.append(
                f"  {key:<16} {row['median']:>8.3f}{unit}  [{row['min']:.3f}–{row['max']:.3f}]"
            )
    for name, row in report["floor"].items():
        lines.append(
            f"floor {name:<10} {row['median']:>8.3f} s  [{row['min']:.3f}–{row['max']:.3f}]"
        )
    for key, ratio in report.get("ratio", {}).items():
        lines.append(f"ratio {key:<16} {ratio:.3f}  (this / against)")
    return "\n".join(lines)
