"""LoCoMo metrics of spec §13.1 steps 5-7 and 9: keyword hit, evidence recall, latency."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from slowave_site.bench.results import MAX_ITEMS, QuestionResult, RankedItem

TOKEN_RE = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "the a an is was were are i my me it its of in on at to for and or that this with be have "
    "has had".split()
)
HIT_THRESHOLD = 0.5
ADVERSARIAL_PREFIX_CHARS = 600
RECALL_KS = (5, 10, 20)
CATEGORIES = (1, 2, 3, 4, 5)
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


def keyword_tokens(text: Any) -> set[str]:
    """Lower-case ``[a-z0-9]+`` minus stopwords; one-letter tokens survive only if digits."""
    if text is None:
        return set()
    words = TOKEN_RE.findall(str(text).lower())
    return {w for w in words if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


def keyword_score(answer: Any, hypothesis: str) -> float:
    """|answer ∩ hypothesis| / |answer| over keyword tokens; 0 when the answer has none."""
    wanted = keyword_tokens(answer)
    if not wanted:
        return 0.0
    return len(wanted & keyword_tokens(hypothesis)) / len(wanted)


def hypothesis(items: Sequence[RankedItem]) -> str:
    """The first 20 rendered items, space-joined (spec §13.1 step 5)."""
    return " ".join(item.text for item in items[:MAX_ITEMS])


def keyword_hit(result: QuestionResult, text: str | None = None) -> tuple[bool, float]:
    """(hit, score). Adversarial questions hit when the planted answer is *not* retrieved."""
    text = hypothesis(result.items) if text is None else text
    q = result.question
    if q.is_adversarial:
        score = keyword_score(q.adversarial_answer, text[:ADVERSARIAL_PREFIX_CHARS])
        return score < HIT_THRESHOLD, score
    score = keyword_score(q.answer, text)
    return score >= HIT_THRESHOLD, score


def recall_all_at(gold: Iterable[str], items: Sequence[RankedItem], k: int) -> float | None:
    """Share of the gold dia_ids behind the first k items; None when there is no gold id."""
    wanted = set(gold)
    if not wanted:
        return None
    found: set[str] = set()
    for item in items[:k]:
        found.update(item.dia_ids)
    return len(wanted & found) / len(wanted)


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile: the smallest value with at least pct% of values at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def percentile_of(values: Sequence[float], pct: float) -> float:
    """`percentile` of values the caller knows are not empty."""
    found = percentile(values, pct)
    if found is None:
        raise ValueError("percentile of no values")
    return found


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def question_row(result: QuestionResult) -> dict[str, Any]:
    """Everything measured for one question; aggregation and ``--details`` both start here."""
    text = hypothesis(result.items)
    hit, score = keyword_hit(result, text)
    q = result.question
    return {
        "sample_id": q.sample_id,
        "index": q.index,
        "category": q.category,
        "question": q.question,
        "answer": q.adversarial_answer if q.is_adversarial else q.answer,
        "evidence": list(q.evidence),
        "hit": hit,
        "keyword_score": round(score, 4),
        **{f"recall@{k}": recall_all_at(q.evidence, result.items, k) for k in RECALL_KS},
        "hypothesis_chars": len(text),
        "latency_ms": {kind: list(v) for kind, v in result.latency_ms.items()},
        "items": [
            {"ref": i.ref, "dia_ids": list(i.dia_ids), "pathway": i.pathway, "text": i.text}
            for i in result.items
        ],
    }


def _summary(rows: list[dict[str, Any]], primary: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    out["hit_pct"] = 100.0 * sum(r["hit"] for r in rows) / len(rows) if rows else None
    for k in RECALL_KS:
        scored = [r[f"recall@{k}"] for r in rows if r[f"recall@{k}"] is not None]
        out[f"recall@{k}"] = _mean(scored)
    out["n_with_evidence"] = sum(1 for r in rows if r["recall@5"] is not None)
    out["mean_hypothesis_chars"] = _mean([r["hypothesis_chars"] for r in rows])
    calls = [ms for r in rows for ms in r["latency_ms"].get(primary or "", [])]
    out["p50_ms"] = percentile(calls, 50)
    out["p95_ms"] = percentile(calls, 95)
    return out


def aggregate(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """Per-category (1..5) and overall summaries plus p50/p95 for every latency kind."""
    rows = [question_row(r) for r in results]
    kinds: list[str] = []
    for r in results:
        kinds.extend(kind for kind in r.latency_ms if kind not in kinds)
    primary = kinds[0] if kinds else None
    categories = {
        str(c): _summary([r for r in rows if r["category"] == c], primary) for c in CATEGORIES
    }
    extra = sorted({r["category"] for r in rows} - set(CATEGORIES))
    for c in extra:  # unknown categories are still reported, and always counted in overall
        categories[str(c)] = _summary([r for r in rows if r["category"] == c], primary)
    latency = latency_summary(rows, kinds)
    return {
        "categories": categories,
        "overall": _summary(rows, primary),
        "primary_latency": primary,
        "latency": latency,
        "rows": rows,
    }


def latency_summary(rows: Sequence[dict[str, Any]], kinds: Sequence[str]) -> dict[str, Any]:
    """Per latency kind over every row's calls: how many, p50 and p95 (nearest rank, ms)."""
    out: dict[str, Any] = {}
    for kind in kinds:
        calls = [ms for r in rows for ms in r["latency_ms"].get(kind, [])]
        out[kind] = {
            "calls": len(calls),
            "p50_ms": percentile(calls, 50),
            "p95_ms": percentile(calls, 95),
        }
    return out
