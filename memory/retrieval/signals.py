"""The signals that make up a score, as small named functions, in the order they apply.

- TERMS score one facet of one item (spec §7.2); the best facet's terms are the item's base.
- SIGNALS then adjust every candidate's score, each recorded under its name. Those marked
  `after_admission` read the admitted set (a session's support), so they apply once the floor
  has been checked; `recall_only` ones need session context that activate does not gather.

To add a signal: write a function here, give it its weight in policy.py, put it in the tuple
where it belongs, and add a test that fails without it (tests/memory/test_retrieval_signals.py).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from memory.models import Memory
from memory.retrieval import answers, context, speakers, updates
from memory.retrieval.candidates import MemoryRow
from memory.retrieval.policy import RankingPolicy
from memory.retrieval.scored import Cue, Scored


@dataclass(slots=True)
class FacetEvidence:
    """What one facet of the cue found in one item. Built for every candidate and facet of a
    ranking and never changed (not frozen: a frozen dataclass took 20 times as long to build,
    ~0.6 ms of a recall at 100k memories)."""

    cos: float  # ordering cosine (name-free cue when it names a speaker)
    coverage: float
    rrf: float
    salience: float
    temporal: float  # in/out of the cue's window, or recency when the cue names no time
    fusion: float = 0.0  # magnitude fusion of the channels' scores (magnitude_fusion)


def topical(cos: float, cov: float, policy: RankingPolicy) -> float:
    """Spec §7.2: absolute relevance, what floors read."""
    share = policy.admission.topical_cos_share
    return max(cos, share * cos + (1 - share) * cov)


def rrf(dense_rank: int | None, lexical_rank: int | None, policy: RankingPolicy) -> float:
    """Reciprocal-rank fusion of the two channels, 1.0 for first in both (spec §7.2)."""
    k = policy.terms.rrf_k
    total = 0.0  # summed in channel order, as sum() over the ranks present would
    if dense_rank is not None:
        total += 1 / (k + dense_rank)
    if lexical_rank is not None:
        total += 1 / (k + lexical_rank)
    return total / (2 / (k + 1))


def magnitude_fusion(
    dense: float, lexical: float, discriminative: bool, policy: RankingPolicy
) -> float:
    """Normalised dense and lexical scores mixed by magnitude, not rank: the dense share rises
    when the cue shares no discriminative term with the store (lexical ranks are then noise)."""
    rule = policy.fusion
    share = rule.dense_share if discriminative else rule.blind_dense_share
    return share * dense + (1 - share) * lexical


_LOG_21 = math.log(21)


def salience_prior(salience: float) -> float:
    return math.log(1 + salience) / _LOG_21


def recency(weight: float, moment: datetime, now: datetime, half_life_days: float) -> float:
    age_days = max(0.0, (now - moment).total_seconds() / 86_400)
    return weight * 2 ** (-age_days / half_life_days)


Term = Callable[[FacetEvidence, RankingPolicy], float]

TERMS: tuple[tuple[str, Term], ...] = (
    ("topical", lambda e, p: topical(e.cos, e.coverage, p)),
    ("coverage", lambda e, p: p.terms.coverage_weight * e.coverage),
    ("rrf", lambda e, p: p.terms.rrf_weight * e.rrf),
    ("fusion", lambda e, p: p.fusion.weight * e.fusion),
    ("salience", lambda e, p: p.terms.salience_weight * salience_prior(e.salience)),
    ("temporal", lambda e, p: e.temporal),
)


def base(evidence: FacetEvidence, policy: RankingPolicy) -> list[tuple[str, float]]:
    return [(name, term(evidence, policy)) for name, term in TERMS]


Items = list[Scored[MemoryRow]]


def scope_factor(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """Spec §7.1.3: a contextual (stage 2) memory from another scope ranks at 0.70."""
    factor = policy.terms.contextual_scope_factor
    return [
        it.score * (factor - 1)
        if it.obj.scope != cue.scope and it.obj.generalization_stage == 2
        else 0.0
        for it in items
    ]


def stale(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """Spec §7.2: a replaced claim ranks at half."""
    factor = policy.terms.stale_factor
    return [
        it.score * (factor - 1) if it.obj.status == Memory.Status.STALE else 0.0 for it in items
    ]


def neighbour_context(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """A turn next to a strong match ranks higher by a share of the match's topical."""
    return [policy.recall.context_weight * it.context for it in items]


def reply(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """The turn right after a question that matches the cue well is its likely answer."""
    return [policy.recall.reply_weight * max(0.0, it.reply) for it in items]


def said(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """A line said by a speaker the cue names."""
    weight = policy.speakers.said_weight
    return [weight if speakers.speaker(it.obj.content) in cue.words else 0.0 for it in items]


def answer(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """An item stating the kind of answer the cue asks for (a duration for "how long")."""
    shape, weight = cue.expects, policy.answers.weight
    if not shape or not weight:
        return [0.0] * len(items)
    return [weight if answers.holds(shape, it.obj.content) else 0.0 for it in items]


def session(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """A turn of a session whose other admitted turns match well ranks higher."""
    support = context.session_support(items, policy.recall.session_top)
    return [policy.recall.session_weight * support.get(it.obj.pk, 0.0) for it in items]


def _moment(row: MemoryRow) -> datetime:
    return row.occurred_at or row.created_at


def newer(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """Of current items saying nearly the same thing, the newer is lifted above every older one
    that outranks it: a knowledge update wins without feedback (a replaced claim is `stale`'s)."""
    rule = policy.updates
    out = [0.0] * len(items)
    current = [
        i
        for i, it in enumerate(items)
        if it.vector is not None and it.obj.status == Memory.Status.ACTIVE
    ]
    if not rule.weight or len(current) < 2:
        return out
    matrix = np.stack([items[i].vector for i in current])  # type: ignore[misc]
    when = np.array([_moment(items[i].obj).timestamp() for i in current])
    scores = np.array([items[i].score for i in current])
    older = (matrix @ matrix.T >= rule.cosine) & (when[None, :] < when[:, None])
    top = np.where(older, scores[None, :], -np.inf).max(axis=1)
    for a, i in enumerate(current):
        if top[a] >= scores[a]:
            out[i] = rule.weight * float(top[a] - scores[a] + rule.lift)
    return out


def session_evidence(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """A session that matches the cue as a whole lends its strength to its best turns (by
    topical), so it is found even when no single turn matches well (sessions.py)."""
    rule = policy.sessions
    out = [0.0] * len(items)
    if not rule.evidence_weight or not cue.session_strength:
        return out
    members: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        if it.obj.session_id in cue.session_strength:
            members.setdefault(it.obj.session_id, []).append(i)
    for session_id, found in members.items():
        found.sort(key=lambda i: -items[i].topical)
        for i in found[: rule.turns]:
            out[i] = rule.evidence_weight * cue.session_strength[session_id]
    return out


def spread(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """In a long history, placed greedily by score, each item ranks `spread_weight` lower per
    item of its session already placed: the next places favour other sessions that also
    match. The penalties only grow as items are placed, so the adjusted scores keep the greedy
    order."""
    weight = policy.sessions.spread_weight
    out = [0.0] * len(items)
    if not weight or not cue.long_history:
        return out
    order = sorted(range(len(items)), key=lambda i: (-items[i].score, items[i].obj.pk))
    # A lazy heap: an entry popped with a stale count of its session is pushed back with the
    # penalty it has now; ties go to the higher raw score, as in a plain greedy pass.
    heap = [(-items[i].score, at, i, 0) for at, i in enumerate(order)]
    heapq.heapify(heap)
    placed: dict[str, int] = {}
    while heap:
        _, at, i, seen = heapq.heappop(heap)
        session_id = items[i].obj.session_id
        count = placed.get(session_id, 0) if session_id is not None else 0
        if count != seen:
            heapq.heappush(heap, (-(items[i].score - weight * count), at, i, count))
            continue
        out[i] = -weight * count
        if session_id is not None:
            placed[session_id] = count + 1
    return out


def superseded(items: Items, cue: Cue, policy: RankingPolicy) -> list[float]:
    """An older version of a newer item (same cue terms, nearly the same best sentence) is
    placed just below it when that costs at most max_drop: newest first, so a chain of updates
    ends in date order. Nothing is lifted (updates.py says how versions are found)."""
    rule = policy.supersession
    out = [0.0] * len(items)
    if not rule.weight or len(items) < 2 or (rule.present_only and cue.past):
        return out
    if (rule.single_only and cue.many) or (rule.undated_only and cue.window is not None):
        return out
    newer_of = updates.versions(items, cue, rule, policy.stemming.snowball)
    if rule.session_mates:
        newer_of = updates.with_session_mates(
            newer_of, items, cue, rule, policy.stemming.snowball
        )
    score = [it.score for it in items]
    for a in sorted(range(len(items)), key=lambda i: updates.moment(items[i].obj), reverse=True):
        below = [score[b] for b in newer_of[a] if score[a] - score[b] <= rule.max_drop]
        if below and min(below) - rule.step < score[a]:
            target = min(below) - rule.step
            out[a] = rule.weight * (target - score[a])
            score[a] += out[a]
    return out


def depth_fill(
    under: list[Scored[Any]], admitted: list[Scored[Any]], cue: Cue, policy: RankingPolicy
) -> list[Scored[Any]]:
    """Recall only: when the best admitted item clearly passes the floor, the next-best
    candidates under it (of the cue's own scope; down to depth.min_topical) fill the page, each
    placed below every admitted item (`depth`), best first."""
    rule = policy.depth
    room = rule.items - len(admitted)
    best = max((it.topical for it in admitted), default=0.0)
    if room <= 0 or best < policy.admission.floor + rule.clear:
        return []

    def deep_enough(it: Scored[Any]) -> bool:
        floor = rule.min_topical if isinstance(it.obj, MemoryRow) else rule.min_topical_history
        return it.topical >= floor

    extra = sorted(
        (it for it in under if deep_enough(it)),
        key=lambda it: (-it.score, str(it.obj.pk)),
    )[:room]
    lowest = min(it.score for it in admitted)
    for at, it in enumerate(extra, 1):
        it.add("depth", min(0.0, lowest - at * 1e-3 - it.score))
    return extra


@dataclass(frozen=True)
class Signal:
    name: str
    apply: Callable[[Items, Cue, RankingPolicy], list[float]]
    recall_only: bool = False
    after_admission: bool = False


SIGNALS: tuple[Signal, ...] = (
    Signal("scope", scope_factor),
    Signal("stale", stale),
    Signal("context", neighbour_context, recall_only=True),
    Signal("reply", reply, recall_only=True),
    Signal("said", said),
    Signal("answer", answer),
    Signal("session", session, recall_only=True, after_admission=True),
    Signal("newer", newer, after_admission=True),
    Signal("session_evidence", session_evidence),
    Signal("spread", spread, after_admission=True),
    Signal("superseded", superseded, after_admission=True),
)


def apply(
    items: Items, cue: Cue, policy: RankingPolicy, *, recall: bool, after_admission: bool
) -> None:
    """Apply the signals of one stage, in order, each recorded on every item it moves."""
    for signal in SIGNALS:
        if signal.after_admission != after_admission or (signal.recall_only and not recall):
            continue
        for item, value in zip(items, signal.apply(items, cue, policy), strict=True):
            if value:  # what `add` records; most signals move few items
                item.add(signal.name, value)


# What each name a score records means, in the order ranking applies them: the gloss that
# `slowave explain`, the admin and the REST explanation show beside the numbers. After TERMS and
# SIGNALS come ordering.py's two and procedures.py's one.
MEANINGS: dict[str, str] = {
    "topical": "absolute relevance: max(cos, ½·cos + ½·coverage), what the floor reads",
    "coverage": "share of the cue's query terms (idf-weighted) the item contains",
    "rrf": "reciprocal-rank fusion of its dense and lexical ranks (1.0 = first in both)",
    "fusion": "its dense and BM25 scores over each channel's best, mixed (dense-heavy when the "
    "cue shares no rare term with the store)",
    "salience": "prior from the item's salience, shaped by past feedback",
    "temporal": "inside (+) or outside (−) the cue's time window, or recency without one",
    "scope": "a contextual (stage 2) memory from another scope ranks at 0.70",
    "stale": "a replaced (historical) claim ranks at half",
    "context": "a turn next to a strong match gets a share of that match",
    "reply": "the turn right after a question that matches the cue well",
    "said": "a line said by a speaker the cue names",
    "answer": "it states the kind of answer the cue asks for (a duration for \"how long\")",
    "session": "a turn of a session whose other admitted turns match well",
    "newer": "lifted above an older item saying nearly the same thing (a knowledge update)",
    "session_evidence": "its session matches the cue as a whole (BM25 over the session's turns)",
    "spread": "lowered per item of its session already placed above it (favours other sessions)",
    "superseded": "placed below a newer version of it (same cue terms, nearly the same sentence)",
    "depth": "recall filling its page under the floor, placed after every admitted item",
    "lead": "a named speaker's own account moved to the top",
    "placed": "lowered to sit below the item ordered above it",
    "feedback": "procedures: what accepted feedback said (helped raises, harmed lowers)",
}
