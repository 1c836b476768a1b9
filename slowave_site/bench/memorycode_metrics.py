"""MemoryCode's gold and figures: recall of an instruction's current version, and how often a
superseded version ranks above it (README-memorycode.md, "How to score").

The file is LoCoMo's layout, so locomo_data.py reads the conversations and each question's
``evidence``; what LoCoMo has no place for (the sessions of the current and the older versions,
the turns of the older ones, the kind of instruction) is read here, keyed like a LoCoMo question
(``sample_id#index``). The runner lives in memorycode.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slowave_site.bench.data_file import load_records
from slowave_site.bench.locomo_data import normalise_evidence

RECALL_KS = (1, 5, 10)
ABOVE_KS = (10, 20)
UPDATED = frozenset({41, 42, 45, 46})
CATEGORY_NAMES = {
    40: "code, never updated",
    41: "code, updated once",
    42: "code, updated 2+",
    43: "code, merged list",
    44: "workplace, never updated",
    45: "workplace, updated once",
    46: "workplace, updated 2+",
}
HALVES = ("tune", "confirm")


@dataclass(frozen=True)
class Gold:
    """One question's gold beyond LoCoMo's: turn gold for code, session gold for workplace."""

    category: int
    kind: str
    evidence: tuple[str, ...]
    sessions: frozenset[int]
    superseded: tuple[str, ...]
    superseded_sessions: frozenset[int]

    @property
    def turn_level(self) -> bool:
        return bool(self.evidence)


def half_of(sample_id: str) -> str:
    """The tuning or the confirming half, by a hash of the id (never by its contents)."""
    return HALVES[hashlib.sha256(sample_id.encode()).digest()[0] % 2]


def _gold_of(sample_id: str, raw: Mapping[str, Any]) -> dict[str, Gold]:
    return {
        f"{sample_id}#{i}": Gold(
            category=int(q["category"]),
            kind=str(q.get("kind", "")),
            evidence=normalise_evidence(q.get("evidence")),
            sessions=frozenset(int(s) for s in q.get("evidence_sessions") or ()),
            superseded=normalise_evidence(q.get("superseded")),
            superseded_sessions=frozenset(int(s) for s in q.get("superseded_sessions") or ()),
        )
        for i, q in enumerate(raw.get("qa") or [])
    }


def load_gold(path: str | Path) -> dict[str, Gold]:
    """Every question's gold, keyed ``sample_id#index``."""
    out: dict[str, Gold] = {}

    def parse(raw: dict[str, Any]) -> dict[str, Gold]:
        return _gold_of(str(raw["sample_id"]), raw)

    for part in load_records(path, layout="MemoryCode", noun="sample", parse=parse, single=True):
        out.update(part)
    return out


def session_of(dia_id: str) -> int:
    return int(dia_id[1:].partition(":")[0])


def _positions(items: Sequence[Iterable[str]], gold: Gold) -> tuple[list[int], list[int]]:
    """Ranks (0-based) of items stating the current version and of those stating only an
    older one: an item behind both (a consolidated episode) counts as current."""
    current: list[int] = []
    older: list[int] = []
    for rank, ids in enumerate(items):
        ids = list(ids)
        if gold.turn_level:
            is_current = any(d in gold.evidence for d in ids)
            is_older = any(d in gold.superseded for d in ids)
        else:
            sessions = {session_of(d) for d in ids}
            is_current = bool(sessions & gold.sessions)
            is_older = bool(sessions & gold.superseded_sessions)
        if is_current:
            current.append(rank)
        elif is_older:
            older.append(rank)
    return current, older


def question_figures(items: Sequence[Iterable[str]], gold: Gold) -> dict[str, Any]:
    """One question's figures from the turn ids behind each ranked item, best first."""
    items = [list(ids) for ids in items]
    out: dict[str, Any] = {}
    for k in RECALL_KS:
        top = items[:k]
        if gold.turn_level:
            found = {d for ids in top for d in ids}
            out[f"cur@{k}"] = len(set(gold.evidence) & found) / len(gold.evidence)
        else:
            hit = {session_of(d) for ids in top for d in ids}
            out[f"cur@{k}"] = len(gold.sessions & hit) / len(gold.sessions)
    hit5 = {session_of(d) for ids in items[:5] for d in ids}
    out["sess_all@5"] = float(gold.sessions <= hit5) if gold.sessions else None
    if gold.category in UPDATED:
        current, older = _positions(items, gold)
        first_current = current[0] if current else len(items)
        for k in ABOVE_KS:
            out[f"sup_above@{k}"] = float(bool(older) and older[0] < min(first_current, k))
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Means of each figure over the rows that have it, with n."""
    names = [f"cur@{k}" for k in RECALL_KS] + ["sess_all@5"]
    names += [f"sup_above@{k}" for k in ABOVE_KS]
    out: dict[str, Any] = {"n": len(rows)}
    for name in names:
        out[name] = _mean([r[name] for r in rows if r.get(name) is not None])
    out["n_updated"] = sum(1 for r in rows if r.get("sup_above@10") is not None)
    return out


def summary_by_category(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    categories = sorted({int(r["category"]) for r in rows})
    return {
        "overall": summarise(rows),
        "updated": summarise([r for r in rows if r["category"] in UPDATED]),
        "categories": {
            str(c): summarise([r for r in rows if r["category"] == c]) for c in categories
        },
    }
