"""Ranking of one cue over a scope (spec §7): candidates, scores, floor, margin, order."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Max

from memory import embeddings, lexical, passages
from memory.models import Memory, Procedure
from memory.retrieval import context, ordering, scoring, speakers
from memory.retrieval.candidates import (
    POOL,
    Pool,
    dense_hits,
    load_episodes,
    load_memories,
    pool_for,
    scope_factor,
    searchable_scopes,
    stage_visible,
    whole_cue_pool,
)
from memory.retrieval.context import add_context
from memory.retrieval.facets import split_facets
from memory.retrieval.scope_facts import scope_facts
from memory.retrieval.temporal import Window, parse_window, temporal_bonus
from memory.text import stems, tokens

CROSS_SCOPE_TOPICAL = 0.40
EPISODE_RECENCY = 0.05
# Spec §7.3 gives memories no recency; a small, fast-fading one lets an untimed question prefer
# the newer of two comparable memories (scenario 25) without outweighing relevance.
MEMORY_RECENCY = 0.05
MEMORY_RECENCY_HALF_LIFE_DAYS = 7


@dataclass
class Scored:
    obj: Any
    vector: np.ndarray | None
    facet: int = -1
    score: float = float("-inf")
    topical: float = 0.0
    details: dict[str, float] = field(default_factory=dict)
    facet_topical: list[float] = field(default_factory=list)
    context: float = 0.0  # best topical of a neighbouring turn (recall only)
    reply: float = 0.0  # how far the question just before it matched beyond REPLY_FROM


@dataclass
class _Cue:
    facets: list[str]
    vectors: np.ndarray | None
    window: Window | None
    terms: list[scoring.FacetTerms]
    words: frozenset[str] = frozenset()
    # Vectors of the facets without speaker names: they order items, `vectors` admit them.
    rank_vectors: np.ndarray | None = None


@dataclass
class Ranking:
    facets: list[str]
    truncated: bool
    lexical_only: bool
    memories: list[Scored]
    procedures: list[Scored]
    cue: _Cue | None = None


def rank(*, scope: str, cue: str, kind: str, now: datetime) -> Ranking:
    facets, truncated = split_facets(cue)
    floor = settings.SLOWAVE_MIN_RELEVANCE
    scopes = searchable_scopes(scope)
    facts = scope_facts(scope)
    idf_of = _idf_table(cue, scope, facts.eligible)
    words = frozenset(tokens(cue))
    named = speakers.scope_speakers(scope, facts) & words
    vectors, rank_vectors = _encode(facets, named)
    prepared = _Cue(
        facets=facets,
        vectors=vectors,
        window=_window(cue, scope, now, facts.imported),
        terms=[scoring.facet_terms(f, idf_of) for f in facets],
        words=words,
        rank_vectors=rank_vectors,
    )
    memories, capped = _rank_memories(
        prepared, scope, scopes, floor, now, with_context=kind == "recall"
    )
    if kind == "activate":
        memories = ordering.apply_margin(memories, len(facets), settings.SLOWAVE_RELATIVE_MARGIN)
    memories = ordering.order(memories)
    memories = speakers.lead_with_named(memories, named, ordering.current_line)
    procedures = _rank_procedures(prepared, scope, floor)
    return Ranking(
        facets=facets,
        truncated=truncated or capped,
        lexical_only=vectors is None,
        memories=memories,
        procedures=procedures,
        cue=prepared,
    )


def _encode(
    facets: list[str], names: frozenset[str]
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Facet vectors, and the vectors that order items when the cue names a speaker."""
    nameless = [speakers.without_speakers(f, names) for f in facets]
    if nameless == facets:
        vectors = embeddings.encode(facets)
        return vectors, vectors
    both = embeddings.encode(facets + nameless)
    if both is None:
        return None, None
    return both[: len(facets)], both[len(facets) :]


def topicals_against(cue: _Cue, memories: list) -> dict[int, float]:
    """Best-facet topical relevance of memories that no channel returned (associations), by
    pk, from one batch of cosines."""
    out: dict[int, float] = {}
    for memory, (cosines, _) in zip(memories, _memory_cosines(cue, memories), strict=True):
        content = stems(memory.content)
        out[memory.pk] = max(
            (
                scoring.topical(cos, scoring.coverage(cue.terms[i], content))
                for i, cos in enumerate(cosines)
            ),
            default=0.0,
        )
    return out


def _window(cue: str, scope: str, now: datetime, imported: bool) -> Window | None:
    # Imported histories are read relative to their own latest moment, not the wall clock; a
    # live scope always reads "yesterday" from today.
    anchor = now
    if imported:
        latest = Memory.objects.filter(scope=scope).aggregate(latest=Max("occurred_at"))["latest"]
        if latest is not None and (now - latest).total_seconds() > 86_400:
            anchor = latest
    return parse_window(cue, anchor)


def _idf_table(cue: str, scope: str, n_items: int) -> dict[str, float]:
    frequencies = lexical.document_frequencies("memory", sorted(set(tokens(cue))), [scope])
    return {term: scoring.idf(n_items, df) for term, df in frequencies.items()}


def _score_item(
    item: Scored,
    cue: _Cue,
    pools: list[Pool],
    row_id: int,
    text_stems: frozenset[str],
    salience: float,
    moment: datetime | None,
    factor: float,
    stale: bool,
    recency: float = 0.0,
    known: tuple[list[float], list[float]] | None = None,
) -> None:
    """`known`: the item's (admission, ordering) cosines per facet, computed for a batch."""
    temporal = temporal_bonus(cue.window, moment) if cue.window else recency
    if known is not None:
        cosines, ordering = known
    elif cue.vectors is not None and item.vector is not None:
        cosines = (cue.vectors @ item.vector).tolist()
        ordering = (cue.rank_vectors @ item.vector).tolist()
    else:
        cosines = ordering = [0.0] * len(cue.facets)
    best = None
    for i, cos in enumerate(cosines):
        cov = scoring.coverage(cue.terms[i], text_stems)
        top = scoring.topical(cos, cov)
        fused = scoring.rrf(pools[i].dense.get(row_id), pools[i].lexical.get(row_id))
        score = scoring.combined(
            topical_score=scoring.topical(ordering[i], cov),
            rrf_score=fused,
            salience=salience,
            temporal=temporal,
            scope_factor=factor,
            stale=stale,
            coverage_score=cov,
        )
        item.facet_topical.append(top)
        if score > item.score:
            item.score, item.facet = score, i
            best = (cos, cov, top, fused)
    item.topical = max(item.facet_topical, default=0.0)
    if best is not None:
        cos, cov, top, fused = best
        item.details = {
            "cos": round(cos, 4),
            "coverage": round(cov, 4),
            "topical": round(top, 4),
            "rrf": round(fused, 4),
            "temporal": round(temporal, 4),
            "score": round(item.score, 4),
        }


def _gather(cue: _Cue, kind: str, scopes: list[str]) -> list[Pool]:
    pools = []
    last = len(cue.facets) - 1
    # Set only when the cue names a speaker (its name-free vectors differ from `vectors`).
    name_free = cue.rank_vectors if cue.rank_vectors is not cue.vectors else None
    for i, facet in enumerate(cue.facets):
        vector = cue.vectors[i] if cue.vectors is not None else None
        limit = whole_cue_pool(facet) if i == last else POOL
        pool = pool_for(kind, facet, vector, scopes, limit)
        if name_free is not None and kind == "memory":
            # A cue naming a speaker pulls in every line of theirs by the name alone; the
            # name-free cue finds what was said about the subject (LoCoMo recall@20 +0.006
            # tuning, +0.005 held out, once memories had passages).
            found = dense_hits(kind, name_free[i], limit, scopes)
            pool.related = {pk for pk, _ in found} - set(pool.dense)
        pools.append(pool)
    return pools


def _recency(weight: float, moment: datetime, now: datetime, half_life_days: float = 30) -> float:
    age_days = max(0.0, (now - moment).total_seconds() / 86_400)
    return weight * 2 ** (-age_days / half_life_days)


def _memory_cosines(cue: _Cue, rows: list) -> list[tuple[list[float], list[float]]]:
    """Per memory, the best cosine of its whole text and its passages for each facet, for
    admission and for ordering: four matrix products for the whole batch."""
    n, width = len(rows), len(cue.facets)
    # rank_vectors is set whenever vectors are (_encode); checked for the type checker.
    if cue.vectors is None or cue.rank_vectors is None or not n:
        return [([0.0] * width, [0.0] * width)] * n
    whole = np.zeros((n, embeddings.DIMENSIONS), dtype=np.float32)
    parts, owners = [], []
    for i, row in enumerate(rows):
        if row.embedding is not None:
            whole[i] = embeddings.from_blob(row.embedding)
        if (matrix := passages.from_blob(row.passages)) is not None:
            parts.append(matrix)
            owners.extend([i] * len(matrix))
    admit, order = whole @ cue.vectors.T, whole @ cue.rank_vectors.T
    if parts:
        stacked, at = np.concatenate(parts), np.asarray(owners)
        np.maximum.at(admit, at, stacked @ cue.vectors.T)
        np.maximum.at(order, at, stacked @ cue.rank_vectors.T)
    unembedded = [0.0] * width
    return [
        (a, o) if row.embedding is not None else (unembedded, unembedded)
        for row, a, o in zip(rows, admit.tolist(), order.tolist(), strict=True)
    ]


def _score_memory(
    cue: _Cue,
    pools: list[Pool],
    memory,
    scope: str,
    now: datetime,
    known: tuple[list[float], list[float]] | None = None,
) -> Scored:
    item = Scored(obj=memory, vector=embeddings.from_blob(memory.embedding))
    moment = memory.occurred_at or memory.created_at
    _score_item(
        item,
        cue,
        pools,
        memory.pk,
        stems(memory.content),
        memory.salience,
        moment,
        scope_factor(memory, scope),
        memory.status == Memory.Status.STALE,
        recency=_recency(MEMORY_RECENCY, moment, now, MEMORY_RECENCY_HALF_LIFE_DAYS),
        known=known,
    )
    return item


def _rank_memories(
    cue: _Cue, scope: str, scopes: list[str], floor: float, now: datetime, with_context: bool
) -> tuple[list[Scored], bool]:
    pools = _gather(cue, "memory", scopes)
    ids = set().union(*(p.ids for p in pools)) if pools else set()

    def score_rows(rows) -> list[Scored]:
        visible = [m for m in rows if stage_visible(m, scope)]
        return [
            _score_memory(cue, pools, m, scope, now, known)
            for m, known in zip(visible, _memory_cosines(cue, visible), strict=True)
        ]

    items = score_rows(load_memories(ids))
    if with_context:
        items = add_context(items, score_rows)
    scored: list[Scored] = []
    for item in items:
        memory = item.obj
        if item.context:
            item.score += context.CONTEXT_WEIGHT * item.context
            item.details["context"] = round(item.context, 4)
        if item.reply > 0:
            item.score += context.REPLY_WEIGHT * item.reply
            item.details["reply"] = round(item.reply, 4)
        if said := speakers.bonus(memory.content, cue.words):
            item.score += said
            item.details["speaker"] = said
        lent = (
            context.CONTEXT_SHARE * item.context if item.topical >= context.CONTEXT_MIN_OWN else 0.0
        )
        admitted = max(item.topical, lent)
        needed = max(floor, CROSS_SCOPE_TOPICAL) if memory.scope != scope else floor
        if admitted >= needed:
            scored.append(item)
    if with_context:
        support = context.session_support(scored)
        for item in scored:
            item.score += context.SESSION_WEIGHT * support.get(item.obj.pk, 0.0)
    capped = any(p.capped for p in pools) and len(scored) >= scoring_pool_floor(pools)
    return scored, capped


def scoring_pool_floor(pools: list[Pool]) -> int:
    return max((max(len(p.dense), len(p.lexical)) for p in pools), default=0)


def _rank_procedures(cue: _Cue, scope: str, floor: float) -> list[Scored]:
    pools = _gather(cue, "procedure", [scope])
    keys = set().union(*(p.ids for p in pools)) if pools else set()
    if not keys:
        return []
    rows = list(
        Procedure.objects.filter(index_key__in=keys, scope=scope, status=Procedure.Status.ACTIVE)
    )
    doc_stems = {p.pk: stems(f"{p.goal} {p.summary}") for p in rows}
    admitted = []
    for proc in rows:
        item = Scored(obj=proc, vector=embeddings.from_blob(proc.embedding))
        _score_item(
            item, cue, pools, proc.index_key, doc_stems[proc.pk], 1.0, proc.created_at, 1.0, False
        )
        if item.topical >= floor or _discriminative(cue, proc.pk, doc_stems):
            admitted.append(item)
    return admitted


def _discriminative(cue: _Cue, proc_pk: str, doc_stems: Mapping[str, AbstractSet[str]]) -> bool:
    query = set().union(*(set(t.stems) for t in cue.terms))
    shared = query & doc_stems[proc_pk]
    if len(shared) >= 2:
        return True
    half = len(doc_stems) / 2
    return any(sum(term in s for s in doc_stems.values()) <= half for term in shared)


def rank_episodes(*, ranking: Ranking, scope: str, now: datetime) -> list[Scored]:
    """Episodes matching the cue directly (recall evidence), by the same floor."""
    if ranking.cue is None:
        return []
    return _rank_episodes(ranking.cue, scope, settings.SLOWAVE_MIN_RELEVANCE, now)


def _rank_episodes(cue: _Cue, scope: str, floor: float, now: datetime) -> list[Scored]:
    pools = _gather(cue, "episode", [scope])
    ids = set().union(*(p.ids for p in pools)) if pools else set()
    out = []
    for episode in load_episodes(ids, scope):
        item = Scored(obj=episode, vector=embeddings.from_blob(episode.embedding))
        moment = episode.occurred_at or episode.recorded_at
        _score_item(
            item,
            cue,
            pools,
            episode.pk,
            stems(episode.content),
            episode.salience,
            moment,
            1.0,
            False,
            recency=_recency(EPISODE_RECENCY, moment, now),
        )
        if item.topical >= floor:
            out.append(item)
    out.sort(key=lambda it: (-it.score, it.obj.pk))
    return out
