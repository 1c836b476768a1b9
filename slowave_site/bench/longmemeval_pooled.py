"""Pooled LongMemEval (``slowave bench longmemeval PATH --pooled``): one person's long history.

Every haystack session of the file, deduplicated by session id, is remembered into ONE scope in
date order (the per-question bench gives each question its own ~50 sessions); every scored
question is then asked against that pool at its own date. The baselines rank the same pooled
documents, plus BM25 over whole sessions as documents (``bm25-sessions``, the session-level
anchor: a memory system should find a session at least as well). The loader, metrics, ingest
mechanics and report are longmemeval*.py's; this module only pools.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from memory.retrieval.policy import RankingPolicy
from slowave_site.bench import baselines as bl
from slowave_site.bench import overrides
from slowave_site.bench.longmemeval_data import (
    Document,
    HaystackSession,
    Question,
    documents,
)
from slowave_site.bench.longmemeval_metrics import MAX_ITEMS, LmeResult
from slowave_site.bench.results import RankedItem
from slowave_site.bench.store import Kept, ingested

Log = Callable[[str], None]
SCOPE = "project:lme-pooled"
POOL = "pooled"  # the one item a pooled store holds
SESSION_BASELINE = "bm25-sessions"


def pooled_sessions(questions: Sequence[Question]) -> list[HaystackSession]:
    """Every haystack session once (the first copy of an id), by date; ties in file order."""
    seen: dict[str, HaystackSession] = {}
    for question in questions:
        for session in question.sessions:
            seen.setdefault(session.session_id, session)
    return sorted(seen.values(), key=lambda s: s.occurred_at)


def pooled_documents(sessions: Sequence[HaystackSession], roles: str) -> list[Document]:
    return [d for s in sessions for d in documents(s, roles)]


def _items(docs: Sequence[Document], order: Sequence[int], method: str) -> list[RankedItem]:
    return [
        RankedItem.from_content(
            docs[i].text,
            docs[i].occurred_at,
            (docs[i].turn.key,),
            ref=docs[i].turn.key,
            pathway=method,
        )
        for i in order
    ]


def run_pooled_baselines(
    methods: Sequence[str],
    questions: Sequence[Question],
    sessions: Sequence[HaystackSession],
    roles: str,
    encode: bl.Encode | None,
    seconds: dict[str, float],
) -> dict[str, list[LmeResult]]:
    """Each turn baseline over the pooled documents (indexed once), and BM25 over sessions."""
    docs = pooled_documents(sessions, roles)
    queries = [q.question for q in questions]
    out: dict[str, list[LmeResult]] = {}
    if methods:
        ranked = bl.rank_documents(
            methods, [d.text for d in docs], queries, encode, MAX_ITEMS, seconds
        )
        for method in methods:
            out[method] = [
                LmeResult(q, _items(docs, order, method), {"search": [spent]})
                for q, (order, spent) in zip(questions, ranked[method], strict=True)
            ]
    out[SESSION_BASELINE] = _session_baseline(questions, sessions, roles, seconds)
    return out


def _session_baseline(
    questions: Sequence[Question],
    sessions: Sequence[HaystackSession],
    roles: str,
    seconds: dict[str, float],
) -> list[LmeResult]:
    """BM25 with one document per session (its indexed turns joined): session figures only."""
    held = [(s, documents(s, roles)) for s in sessions]
    held = [(s, docs) for s, docs in held if docs]
    texts = ["\n".join(d.text for d in docs) for _, docs in held]
    ranked = bl.rank_documents(
        ["bm25"], texts, [q.question for q in questions], None, MAX_ITEMS, seconds
    )
    seconds[SESSION_BASELINE] = seconds.pop("bm25")
    out = []
    for question, (order, spent) in zip(questions, ranked["bm25"], strict=True):
        items = [
            RankedItem.from_content(
                texts[i][:500],
                held[i][0].occurred_at,
                tuple(dict.fromkeys(d.turn.key for d in held[i][1])),
                ref=held[i][0].session_id,
                pathway=SESSION_BASELINE,
            )
            for i in order
        ]
        out.append(LmeResult(question, items, {"search": [spent]}, turn_level=False))
    return out


def run_pooled_slowave(
    path: str,
    questions: Sequence[Question],
    sessions: Sequence[HaystackSession],
    *,
    roles: str,
    consolidate: bool,
    store: str | None,
    rebuild: bool,
    ranking: RankingPolicy,
    log: Log,
) -> tuple[list[LmeResult], dict[str, Any]]:
    """Ingest the pool once (or reuse a kept store), then ask every question against it."""
    from slowave_site.bench import longmemeval_slowave as side

    spec = side.ingest_spec(
        path,
        "longmemeval-pooled",
        (POOL,),
        roles,
        consolidate,
        sessions=len(sessions),
        sessions_sha256=hashlib.sha256(
            "\n".join(s.session_id for s in sessions).encode()
        ).hexdigest(),
    )
    info: dict[str, Any] = {"store": os.path.abspath(store) if store else None, **spec.options}
    info["scope"] = SCOPE

    def ingest(items: Sequence[str]) -> Kept:
        start = time.perf_counter()
        log(f"slowave: ingest {len(sessions)} pooled sessions into {SCOPE}")
        behind = side.ingest_sessions(SCOPE, sessions, roles=roles, consolidate=consolidate)
        elapsed = time.perf_counter() - start
        turns = len({d.turn.key for d in pooled_documents(sessions, roles)})
        info.update(ingest_seconds=round(elapsed, 1), ingest_turns=turns)
        info["ingest_turns_per_second"] = round(turns / elapsed, 2) if elapsed else None
        return {POOL: behind}

    with ingested(spec, ingest, store=store, rebuild=rebuild, log=log) as kept:
        info["ingest_reused"] = "ingest_seconds" not in info
        start = time.perf_counter()
        results = []
        with overrides.installed(ranking):
            for n, question in enumerate(questions, 1):
                if n % 10 == 1:
                    log(f"slowave: asking {n}/{len(questions)}")
                results.append(side.ask_question(question, kept[POOL], scope=SCOPE))
        info["ask_seconds"] = round(time.perf_counter() - start, 1)
    return results, info
