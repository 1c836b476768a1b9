"""LoCoMo benchmark runner (spec §13.1): Slowave (pluggable) and plain-RAG baselines side by side.

Usage: ``python -m slowave_site.bench.locomo PATH --baseline bm25 --baseline dense --baseline rrf
[--out FILE] [--details]``. ``slowave bench locomo`` wraps ``run_locomo``/``main``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from slowave_site.bench import baselines as bl
from slowave_site.bench.locomo_data import Sample, load_locomo
from slowave_site.bench.metrics import aggregate
from slowave_site.bench.results import MAX_ITEMS, QuestionResult

# Ingests one conversation and answers each of its questions; returns one QuestionResult per
# question of ``sample.questions``, in that order.
SlowaveRunner = Callable[[Sample], list[QuestionResult]]


def slowave_version() -> str:
    try:
        from importlib.metadata import version

        return version("slowave")
    except Exception:  # running from a checkout that was never pip-installed
        return "unknown"


def _check(sample: Sample, results: list[QuestionResult]) -> list[QuestionResult]:
    """The runner must answer every question exactly once, in order, or figures are meaningless."""
    got = [r.question.key for r in results]
    want = [q.key for q in sample.questions]
    if got != want:
        raise ValueError(
            f"slowave runner answered {len(got)} questions for {sample.sample_id}, "
            f"expected {len(want)} in file order"
        )
    return results


def _select(samples: list[Sample], wanted: Sequence[str], path: str) -> list[Sample]:
    if not wanted:
        return samples
    held = [s.sample_id for s in samples]
    missing = [w for w in dict.fromkeys(wanted) if w not in held]
    if missing:
        raise ValueError(f"{path} has no sample {missing[0]!r}; it holds {', '.join(held)}")
    return [s for s in samples if s.sample_id in set(wanted)]


def select_samples(path: str, wanted: Sequence[str] = ()) -> list[Sample]:
    """The file's conversations, only those with the ``wanted`` ids when given (file order)."""
    return _select(load_locomo(path), list(wanted), path)


def run_locomo(
    path: str,
    *,
    baselines: Sequence[str] = (),
    samples: Sequence[str] = (),
    slowave_runner: SlowaveRunner | None = None,
    slowave_runners: Mapping[str, SlowaveRunner] | None = None,
    out: str | None = None,
    details: bool = False,
    encode: bl.Encode | None = None,
    config: dict[str, Any] | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the benchmark; return (and with ``out``, write) the JSON report.

    ``encode`` feeds the dense/rrf baselines (default: the app's embedder when Django is set up,
    else the bundled MiniLM). ``config`` adds entries to the report's configuration, e.g. the
    Slowave runner's ingest mode, vector backend, floors and consolidation flag. ``samples``
    keeps only the conversations with those ids (all when empty), e.g. to tune on some
    conversations and confirm on the others. ``slowave_runners`` adds Slowave methods by name
    (e.g. another ingest mode), each run over every conversation in turn.
    """
    baselines = list(dict.fromkeys(baselines))
    unknown = [b for b in baselines if b not in bl.BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline {unknown[0]!r}; choose from {', '.join(bl.BASELINES)}")
    runners = {**({"slowave": slowave_runner} if slowave_runner else {}), **(slowave_runners or {})}
    if not baselines and not runners:
        raise ValueError("nothing to run: give a Slowave runner and/or at least one baseline")
    say = log or (lambda message: None)
    selected = _select(load_locomo(path), list(samples), path)
    embedder_name = None
    if encode is None and {"dense", "rrf"} & set(baselines):
        encode, embedder_name = bl.default_encoder()

    results: dict[str, list[QuestionResult]] = {}
    seconds: dict[str, float] = {}
    for method, runner in runners.items():
        results[method], seconds[method] = [], 0.0
        for sample in selected:
            say(
                f"{method}: {sample.sample_id} ({len(sample.turns)} turns, "
                f"{len(sample.questions)} questions)"
            )
            start = time.perf_counter()
            results[method].extend(_check(sample, list(runner(sample))))
            seconds[method] += time.perf_counter() - start
    for name in baselines:
        results[name], seconds[name] = [], 0.0
    for sample in selected:
        if not baselines:
            break
        say(f"baselines {', '.join(baselines)}: {sample.sample_id}")
        # Indices are shared across methods; each method is charged what it would cost alone.
        per_method = bl.run_baselines(baselines, sample, encode, seconds=seconds)
        for name in baselines:
            results[name].extend(per_method[name])

    methods: dict[str, Any] = {}
    rows: dict[str, Any] = {}
    for name, method_results in results.items():
        summary = aggregate(method_results)
        rows[name] = summary.pop("rows")
        summary["wall_seconds"] = round(seconds[name], 3)
        methods[name] = summary

    report: dict[str, Any] = {
        "benchmark": "locomo",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": {
            "path": os.path.abspath(path),
            "samples": [s.sample_id for s in selected],
            "turns": sum(len(s.turns) for s in selected),
            "questions": sum(len(s.questions) for s in selected),
            "max_items": MAX_ITEMS,
            "methods": list(results),
            "baselines": {
                "bm25": {"tokens": "[a-z0-9]+", "k1": 1.5, "b": 0.75, "idf": "okapi, eps 0.25"},
                "rrf": {"k": bl.RRF_K, "depth": bl.RRF_DEPTH},
                "embedder": embedder_name,
            }
            if baselines
            else None,
            "slowave_version": slowave_version(),
            "python": platform.python_version(),
            **(config or {}),
        },
        "methods": methods,
    }
    if details:
        report["questions"] = rows
    if out:
        from slowave_site.bench.report import write_json

        write_json(out, report)
    return report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m slowave_site.bench.locomo", description="LoCoMo benchmark (spec §13.1)."
    )
    parser.add_argument("path", help="LoCoMo-layout JSON file, e.g. locomo10.json")
    parser.add_argument(
        "--baseline",
        action="append",
        choices=bl.BASELINES,
        default=[],
        help="plain-RAG baseline to run (repeatable)",
    )
    parser.add_argument(
        "--sample",
        action="append",
        default=[],
        metavar="ID",
        help="only the conversation with this sample_id (repeatable; default: all)",
    )
    parser.add_argument("--out", help="write the JSON report here")
    parser.add_argument("--details", action="store_true", help="per-question rows in the JSON")
    return parser


def main(argv: Sequence[str] | None = None, slowave_runner: SlowaveRunner | None = None) -> int:
    """Standalone entry. Exit codes: 0 ok, 1 failure, 2 usage (argparse)."""
    args = _parser().parse_args(argv)
    if slowave_runner is None and not args.baseline:
        _parser().error("nothing to run: pass at least one --baseline")
    if "DJANGO_SETTINGS_MODULE" not in os.environ:
        os.environ["DJANGO_SETTINGS_MODULE"] = "slowave_site.settings"
        # A benchmark never touches the user's memory store: scratch home unless one is given.
        if "SLOWAVE_HOME" not in os.environ and "SLOWAVE_DB_PATH" not in os.environ:
            os.environ["SLOWAVE_HOME"] = tempfile.mkdtemp(prefix="slowave-bench-")
    import django

    django.setup()
    from rich.console import Console

    from slowave_site.bench.report import print_report

    errors = Console(stderr=True)
    try:
        report = run_locomo(
            args.path,
            baselines=args.baseline,
            samples=args.sample,
            slowave_runner=slowave_runner,
            out=args.out,
            details=args.details,
            log=lambda m: errors.log(m) if errors.is_terminal else None,
        )
    except (OSError, ValueError) as exc:
        errors.print(f"[red]error:[/red] {exc}")
        return 1
    print_report(report, Console())
    if args.out:
        errors.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
