"""LongMemEval retrieval metrics: session recall_any/recall_all/NDCG@k, turn recall_all@k.

Every method returns ranked items, each with the turn keys behind it (``<session_id>#<n>``).
"First k" is the first k returned items: each is mapped to its sessions, deduplicated in order
of first appearance, and that session list is scored against the answer sessions. (The official
script instead widens k until it has k distinct sessions; a store that returns one item per
turn cannot be widened past what it returned, so every method is scored on its first k items.)
Turn level scores the ``has_answer`` turns of the indexed roles. Aggregation is overall and per
question type, with n.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from slowave_site.bench.longmemeval_data import Question
from slowave_site.bench.metrics import latency_summary, percentile
from slowave_site.bench.results import RankedItem

SESSION_KS = (5, 10)
TURN_KS = (5, 10)
MAX_ITEMS = max(*SESSION_KS, *TURN_KS)  # each method returns this many items per question
DETAIL_CHARS = 500  # per item in --details rows: enough to read, not a copy of the haystack
METRICS = (
    *(f"session_recall_any@{k}" for k in SESSION_KS),
    *(f"session_recall_all@{k}" for k in SESSION_KS),
    *(f"session_ndcg@{k}" for k in SESSION_KS),
    *(f"turn_recall_all@{k}" for k in TURN_KS),
)


@dataclass
class LmeResult:
    """A method's answer to one question: up to MAX_ITEMS ranked items plus timed calls
    (``latency_ms`` as in results.QuestionResult: the first kind is the primary one)."""

    question: Question
    items: list[RankedItem]
    latency_ms: dict[str, list[float]] = field(default_factory=dict)
    # False when the items are whole sessions (the session-level anchor): no turn figures.
    turn_level: bool = True

    def __post_init__(self) -> None:
        self.items = list(self.items[:MAX_ITEMS])


def session_of(turn_key: str) -> str:
    return turn_key.rpartition("#")[0]


def ranked_sessions(items: Sequence[RankedItem], k: int) -> list[str]:
    """Sessions behind the first k items, deduplicated in order of first appearance."""
    out: dict[str, None] = {}
    for item in items[:k]:
        for key in item.dia_ids:
            out.setdefault(session_of(key), None)
    return list(out)


def ndcg(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Binary-relevance NDCG@k: Σ rel / log2(rank + 1), over the ideal of every gold first."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 1) for rank, s in enumerate(ranked[:k], 1) if s in wanted)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def question_metrics(result: LmeResult, roles: str) -> dict[str, float | None]:
    """Every metric of one question (the caller only scores questions with evidence)."""
    q = result.question
    gold_sessions = set(q.answer_session_ids)
    gold_turns = set(q.evidence_turns(roles))
    out: dict[str, float | None] = {}
    for k in SESSION_KS:
        found = set(ranked_sessions(result.items, k))
        out[f"session_recall_any@{k}"] = float(bool(found & gold_sessions))
        out[f"session_recall_all@{k}"] = float(gold_sessions <= found)
    for k in SESSION_KS:
        out[f"session_ndcg@{k}"] = ndcg(ranked_sessions(result.items, k), gold_sessions, k)
    for k in TURN_KS:
        turns = {key for item in result.items[:k] for key in item.dia_ids}
        whole = float(gold_turns <= turns) if gold_turns else 0.0
        out[f"turn_recall_all@{k}"] = whole if result.turn_level else None
    return out


def question_row(result: LmeResult, roles: str) -> dict[str, Any]:
    """Everything measured for one question; aggregation and ``--details`` both start here."""
    q = result.question
    return {
        "question_id": q.question_id,
        "question_type": q.question_type,
        "question": q.question,
        "answer": q.answer,
        "answer_sessions": list(q.answer_session_ids),
        "evidence_turns": list(q.evidence_turns(roles)),
        **question_metrics(result, roles),
        "latency_ms": {kind: list(v) for kind, v in result.latency_ms.items()},
        "items": [
            {"ref": i.ref, "turns": list(i.dia_ids), "pathway": i.pathway, "text": _cut(i.text)}
            for i in result.items
        ],
    }


def _cut(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + "…"


def _summary(rows: Sequence[dict[str, Any]], primary: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for name in METRICS:
        values = [r[name] for r in rows]
        out[name] = sum(values) / len(rows) if rows and None not in values else None
    calls = [ms for r in rows for ms in r["latency_ms"].get(primary or "", [])]
    out["p50_ms"], out["p95_ms"] = percentile(calls, 50), percentile(calls, 95)
    return out


def aggregate(results: Sequence[LmeResult], roles: str) -> dict[str, Any]:
    """Per question type (sorted) and overall, plus p50/p95 for every latency kind."""
    rows = [question_row(r, roles) for r in results]
    kinds = list(dict.fromkeys(kind for r in results for kind in r.latency_ms))
    primary = kinds[0] if kinds else None
    types = sorted({r["question_type"] for r in rows})
    latency = latency_summary(rows, kinds)
    return {
        "types": {
            t: _summary([r for r in rows if r["question_type"] == t], primary) for t in types
        },
        "overall": _summary(rows, primary),
        "primary_latency": primary,
        "latency": latency,
        "rows": rows,
    }
