"""LongMemEval retrieval benchmark runner: Slowave beside plain-RAG baselines, same questions,
same documents, same run. ``slowave bench longmemeval PATH`` is a thin caller of
``run_longmemeval``.

What lives elsewhere: the loader and scored filter (longmemeval_data.py), the metrics
(longmemeval_metrics.py), Slowave's ingest and questions (longmemeval_slowave.py), kept stores
(store.py), policy overrides (overrides.py), the printed table (longmemeval_report.py).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from memory.retrieval.policy import RankingPolicy
from slowave_site.bench import baselines as bl
from slowave_site.bench import overrides
from slowave_site.bench.locomo import slowave_version
from slowave_site.bench.longmemeval_data import (
    ROLES,
    Question,
    is_scored,
    load_longmemeval,
    question_documents,
    select,
)
from slowave_site.bench.longmemeval_metrics import (
    MAX_ITEMS,
    SESSION_KS,
    TURN_KS,
    LmeResult,
    aggregate,
)
from slowave_site.bench.results import RankedItem
from slowave_site.bench.store import Kept, ingested

Log = Callable[[str], None]


def run_baselines(
    methods: Sequence[str],
    questions: Sequence[Question],
    roles: str,
    encode: bl.Encode | None,
    seconds: dict[str, float],
) -> dict[str, list[LmeResult]]:
    """Each baseline over each question's own haystack: the documents Slowave remembers."""
    out: dict[str, list[LmeResult]] = {m: [] for m in methods}
    for question in questions:
        docs = question_documents(question, roles)
        ranked = bl.rank_documents(
            methods, [d.text for d in docs], [question.question], encode, MAX_ITEMS, seconds
        )
        for method in methods:
            ((order, spent),) = ranked[method]
            items = [
                RankedItem.from_content(
                    docs[i].text,
                    docs[i].occurred_at,
                    (docs[i].turn.key,),
                    ref=docs[i].turn.key,
                    pathway=method,
                )
                for i in order
            ]
            out[method].append(LmeResult(question, items, {"search": [spent]}))
    return out


def run_slowave(
    path: str,
    selected: Sequence[Question],
    *,
    roles: str,
    consolidate: bool,
    store: str | None,
    rebuild: bool,
    ranking: RankingPolicy,
    log: Log,
) -> tuple[list[LmeResult], dict[str, Any]]:
    """Ingest (or reuse a kept store), then ask every question under ``ranking``."""
    from slowave_site.bench import longmemeval_slowave as side
    from slowave_site.bench.slowave import isolate_scopes

    spec = side.ingest_spec(
        path, "longmemeval", [q.question_id for q in selected], roles, consolidate
    )
    by_id = {q.question_id: q for q in selected}
    info: dict[str, Any] = {"store": os.path.abspath(store) if store else None, **spec.options}

    def ingest(items: Sequence[str]) -> Kept:
        start, kept, turns = time.perf_counter(), {}, 0
        for n, qid in enumerate(items, 1):
            docs = question_documents(by_id[qid], roles)
            turns += len({d.turn.key for d in docs})
            log(f"slowave: ingest {qid} ({n}/{len(items)}, {len(docs)} documents)")
            kept[qid] = side.ingest_question(by_id[qid], roles=roles, consolidate=consolidate)
        elapsed = time.perf_counter() - start
        info.update(ingest_seconds=round(elapsed, 1), ingest_turns=turns)
        info["ingest_turns_per_second"] = round(turns / elapsed, 2) if elapsed else None
        return kept

    with ingested(spec, ingest, store=store, rebuild=rebuild, log=log) as kept:
        info["ingest_reused"] = "ingest_seconds" not in info
        start = time.perf_counter()
        results = []
        info["isolated_memories"] = isolate_scopes()
        with overrides.installed(ranking):
            for n, question in enumerate(selected, 1):
                if n % 10 == 1:
                    log(f"slowave: asking {n}/{len(selected)}")
                results.append(side.ask_question(question, kept[question.question_id]))
        info["ask_seconds"] = round(time.perf_counter() - start, 1)
    return results, info


def _config(
    path: str, questions: Sequence[Question], selected: Sequence[Question], roles: str
) -> dict[str, Any]:
    unscored = [q for q in questions if not is_scored(q, roles)]
    per_question = [question_documents(q, roles) for q in selected]
    return {
        "path": os.path.abspath(path),
        "roles": roles,
        "indexed_roles": list(ROLES[roles]),
        "questions": [q.question_id for q in selected],
        "n_questions": len(selected),
        "skipped_in_file": {
            "abstention": sum(q.is_abstention for q in unscored),
            "no_evidence_in_indexed_roles": sum(not q.is_abstention for q in unscored),
        },
        "turns": sum(len({d.turn.key for d in docs}) for docs in per_question),
        "documents": sum(len(docs) for docs in per_question),
        "max_items": MAX_ITEMS,
        "session_ks": list(SESSION_KS),
        "turn_ks": list(TURN_KS),
        "first_k": "the first k returned items, each mapped to its session (deduplicated)",
        "slowave_version": slowave_version(),
        "python": platform.python_version(),
    }


def _check_methods(baselines: Sequence[str], slowave: bool) -> list[str]:
    methods = list(dict.fromkeys(baselines))
    unknown = [b for b in methods if b not in bl.BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline {unknown[0]!r}; choose from {', '.join(bl.BASELINES)}")
    if not methods and not slowave:
        raise ValueError("nothing to run: keep Slowave on and/or give at least one baseline")
    return methods


def run_longmemeval(
    path: str,
    *,
    baselines: Sequence[str] = (),
    roles: str = "user",
    questions: Sequence[str] = (),
    limit: int | None = None,
    slowave: bool = True,
    consolidate: bool = True,
    store: str | None = None,
    rebuild: bool = False,
    policy: Sequence[str] = (),
    out: str | None = None,
    details: bool = False,
    encode: bl.Encode | None = None,
    log: Log | None = None,
    pooled: bool = False,
) -> dict[str, Any]:
    """Run the benchmark; return (and with ``out``, write) the JSON report.

    ``questions``/``limit`` pick among the scored questions (file order). ``store`` keeps the
    ingest in a directory for later runs (store.py); ``policy`` overrides ranking values for the
    questions. ``encode`` feeds the dense/rrf baselines (default: the app's embedder).
    ``pooled``: every haystack session in one scope, every question asked of that pool
    (longmemeval_pooled.py); the per-question haystacks otherwise.
    """
    say = log or (lambda message: None)
    methods = _check_methods(baselines, slowave)
    everything = load_longmemeval(path)
    selected = select(everything, roles=roles, wanted=questions, limit=limit)
    ranking = overrides.resolve(policy)  # before any ingest: a typo must not cost an hour
    config = _config(path, everything, selected, roles)
    config["policy"] = overrides.describe(ranking, policy)
    results: dict[str, list[LmeResult]] = {}
    seconds: dict[str, float] = {}
    if pooled:
        # A subset (--question/--limit) pools only its own haystacks: a smaller history to
        # develop on; the full run pools every question's.
        return _run_pooled(
            path,
            selected if questions or limit is not None else everything,
            selected,
            methods,
            roles,
            config,
            slowave=slowave,
            consolidate=consolidate,
            store=store,
            rebuild=rebuild,
            ranking=ranking,
            encode=encode,
            say=say,
            out=out,
            details=details,
        )
    if slowave:
        start = time.perf_counter()
        results["slowave"], config["slowave"] = run_slowave(
            path,
            selected,
            roles=roles,
            consolidate=consolidate,
            store=store,
            rebuild=rebuild,
            ranking=ranking,
            log=say,
        )
        seconds["slowave"] = time.perf_counter() - start
        config["embedder"] = config["slowave"]["embedder"]
    if methods:
        name = None
        if encode is None and {"dense", "rrf"} & set(methods):
            encode, name = bl.default_encoder()
        say(f"baselines {', '.join(methods)}: {len(selected)} questions")
        results.update(run_baselines(methods, selected, roles, encode, seconds))
        config["baselines"] = _baseline_config(name)
    config["methods"] = list(results)
    return _report(results, seconds, config, roles, out=out, details=details)


def _baseline_config(name: str | None) -> dict[str, Any]:
    return {
        "documents": "each indexed turn (≤8,000-char chunks) as is, no date",
        "bm25": {"tokens": "[a-z0-9]+", "k1": 1.5, "b": 0.75, "idf": "okapi, eps 0.25"},
        "rrf": {"k": bl.RRF_K, "depth": bl.RRF_DEPTH},
        "embedder": name,
    }


def _run_pooled(
    path: str,
    pooled_from: Sequence[Question],
    selected: Sequence[Question],
    methods: Sequence[str],
    roles: str,
    config: dict[str, Any],
    *,
    slowave: bool,
    consolidate: bool,
    store: str | None,
    rebuild: bool,
    ranking: RankingPolicy,
    encode: bl.Encode | None,
    say: Log,
    out: str | None,
    details: bool,
) -> dict[str, Any]:
    """The pooled variant: one scope holding every session; same report shape."""
    from slowave_site.bench import longmemeval_pooled as pool

    sessions = pool.pooled_sessions(pooled_from)
    docs = pool.pooled_documents(sessions, roles)
    config.update(
        pooled=True,
        sessions=len(sessions),
        turns=len({d.turn.key for d in docs}),
        documents=len(docs),
    )
    results: dict[str, list[LmeResult]] = {}
    seconds: dict[str, float] = {}
    if slowave:
        start = time.perf_counter()
        results["slowave"], config["slowave"] = pool.run_pooled_slowave(
            path,
            selected,
            sessions,
            roles=roles,
            consolidate=consolidate,
            store=store,
            rebuild=rebuild,
            ranking=ranking,
            log=say,
        )
        seconds["slowave"] = time.perf_counter() - start
        config["embedder"] = config["slowave"]["embedder"]
    name = None
    if encode is None and {"dense", "rrf"} & set(methods):
        encode, name = bl.default_encoder()
    say(f"baselines {', '.join([*methods, pool.SESSION_BASELINE])}: {len(selected)} questions")
    results.update(pool.run_pooled_baselines(methods, selected, sessions, roles, encode, seconds))
    config["baselines"] = _baseline_config(name)
    config["baselines"][pool.SESSION_BASELINE] = "BM25 (same settings), one document per session"
    config["methods"] = list(results)
    return _report(results, seconds, config, roles, out=out, details=details)


def _report(
    results: dict[str, list[LmeResult]],
    seconds: dict[str, float],
    config: dict[str, Any],
    roles: str,
    *,
    out: str | None,
    details: bool,
) -> dict[str, Any]:
    methods: dict[str, Any] = {}
    rows: dict[str, Any] = {}
    for name, method_results in results.items():
        summary = aggregate(method_results, roles)
        rows[name] = summary.pop("rows")
        summary["wall_seconds"] = round(seconds.get(name, 0.0), 3)
        methods[name] = summary
    report: dict[str, Any] = {
        "benchmark": "longmemeval",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": config,
        "methods": methods,
    }
    if details:
        report["questions"] = rows
    if out:
        from slowave_site.bench.report import write_json

        write_json(out, report)
    return report
