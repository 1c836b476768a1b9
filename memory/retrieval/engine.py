"""Ranking of one cue over a scope (spec §7): candidates, scores, floor, margin, order, and what
hangs off the ranked memories (associated neighbours, procedures, recall's evidence episodes).

Every weight comes from one RankingPolicy (policy.py); every contribution to a score is one of
signals.TERMS or signals.SIGNALS, recorded on the item. The services only freeze, publish and
page what `rank` returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.db.models import Max

from memory import embeddings, lexical
from memory.models import Memory, Procedure
from memory.retrieval import associations, history, ordering, procedures, signals, speakers
from memory.retrieval.candidates import (
    EpisodeRow,
    MemoryRow,
    Pool,
    dense_hits,
    load_episodes,
    load_memories,
    pool_for,
    searchable_scopes,
    stage_visible,
    whole_cue_pool,
)
from memory.retrieval.context import add_context
from memory.retrieval.cosines import Cosines, memory_cosines
from memory.retrieval.facets import HEAVY_CUE_CHARS, split_facets, working_cue
from memory.retrieval.policy import RankingPolicy, active
from memory.retrieval.scope_facts import scope_facts
from memory.retrieval import answers
from memory.retrieval.scored import Cue, Scored
from memory.retrieval.scoring import coverage, facet_terms, idf
from memory.retrieval.sessions import session_admits, session_matches
from memory.retrieval.temporal import parse_window, temporal_bonus
from memory.retrieval.tense import asks_about_past, asks_for_many
from memory.text import stems, tokens

Neighbours = dict[int, list[tuple[MemoryRow, float, float]]]


@dataclass
class Ranking:
    facets: list[str]
    truncated: bool
    lexical_only: bool
    memories: list[Scored[MemoryRow]]
    procedures: list[Scored[Procedure]]
    cue: Cue
    policy: RankingPolicy
    now: datetime
    associated: Neighbours = field(default_factory=dict)
    # Episodes of the scope's imported sessions that pass the floor, best first (empty for a
    # scope without imported history, so its ranking is unchanged).
    history: list[Scored[EpisodeRow]] = field(default_factory=list)
    _episodes: list[Scored[EpisodeRow]] | None = None

    def episodes(self) -> list[Scored[EpisodeRow]]:
        """Episodes matching the cue directly (recall evidence), by the same floor; ranked on
        first use, since provenance events usually fill the evidence without them."""
        if self._episodes is None:
            self._episodes = _rank_episodes(self.cue, self.policy, self.now)[0]
        return self._episodes


def rank(
    *, scope: str, cue: str, kind: str, now: datetime, policy: RankingPolicy | None = None
) -> Ranking:
    policy = policy or active()
    cue, cut = working_cue(cue)
    facets, truncated = split_facets(cue)
    prepared = _prepare(scope, cue, facets, now, policy)
    recall = kind == "recall"
    memories, capped, under = _rank_memories(prepared, policy, now, with_context=recall)
    if kind == "activate":
        memories = ordering.apply_margin(memories, len(facets), policy.admission.relative_margin)
    memories = ordering.order(memories, prepared.named, policy)
    ranking = Ranking(
        facets=facets,
        truncated=truncated or capped or cut,
        lexical_only=prepared.vectors is None,
        memories=memories,
        procedures=_rank_procedures(prepared, policy, now),
        cue=prepared,
        policy=policy,
        now=now,
    )
    ranking.associated = associations.neighbours(memories, prepared, policy)
    if prepared.imported:
        paging = policy.paging
        cap = paging.history_recall if recall else paging.history_activate
        turns, unheard = _rank_episodes(
            prepared, policy, now, imported_only=True, in_sessions=recall
        )
        ranking.history = turns[:cap]
        under += unheard
    if recall:
        _fill_depth(ranking, under)
    return ranking


def _fill_depth(ranking: Ranking, under: list[Scored[Any]]) -> None:
    """Recall's page filled under the floor (signals.depth_fill): memories and imported turns
    alike, each placed below everything admitted, so the merge by score keeps them last."""
    # A neighbour already shown beside its parent (associations) keeps that place.
    shown = {row.pk for rows in ranking.associated.values() for row, _, _ in rows}
    under = [it for it in under if not (isinstance(it.obj, MemoryRow) and it.obj.pk in shown)]
    extra = signals.depth_fill(
        under, [*ranking.memories, *ranking.history], ranking.cue, ranking.policy
    )
    ranking.memories += [it for it in extra if isinstance(it.obj, MemoryRow)]
    ranking.history += [it for it in extra if not isinstance(it.obj, MemoryRow)]


def _prepare(scope: str, cue: str, facets: list[str], now: datetime, policy: RankingPolicy) -> Cue:
    spreads = bool(policy.sessions.spread_weight)
    spread_over = policy.sessions.spread_min_sessions
    facts = scope_facts(scope, session_cap=spread_over if spreads else 0)
    frequencies = lexical.document_frequencies("memory", sorted(set(tokens(cue))), [scope])
    idf_of = {term: idf(facts.eligible, df) for term, df in frequencies.items()}
    words = frozenset(tokens(cue))
    named = speakers.scope_speakers(scope, facts, policy.speakers) & words
    vectors, rank_vectors = _encode(facets, named, yielding=len(cue) > HEAVY_CUE_CHARS)
    cap = max(1.0, policy.fusion.discriminative_df_share * facts.eligible)
    return Cue(
        discriminative=any(0 < df <= cap for df in frequencies.values()),
        scope=scope,
        facets=facets,
        vectors=vectors,
        window=_window(cue, scope, now, facts.imported, policy.terms.report_lag_days),
        terms=[facet_terms(f, idf_of, full=policy.stemming.snowball) for f in facets],
        words=words,
        rank_vectors=rank_vectors,
        named=named,
        imported=facts.imported,
        long_history=spreads and facts.remembered_sessions >= spread_over,
        past=asks_about_past(cue),
        many=asks_for_many(cue),
        expects=answers.expected(cue) if policy.answers.weight else None,
    )


def _encode(
    facets: list[str], names: frozenset[str], *, yielding: bool
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Facet vectors, and the vectors that order items when the cue names a speaker;
    `yielding` for a heavy cue (embeddings.encode)."""
    nameless = [speakers.without_speakers(f, names) for f in facets]
    if nameless == facets:
        vectors = embeddings.encode(facets, yielding=yielding)
        return vectors, vectors
    both = embeddings.encode(facets + nameless, yielding=yielding)
    if both is None:
        return None, None
    return both[: len(facets)], both[len(facets) :]


def _window(cue: str, scope: str, now: datetime, imported: bool, lag_days: int):
    # Imported histories are read relative to their own latest moment, not the wall clock; a
    # live scope always reads "yesterday" from today.
    anchor = now
    if imported:
        latest = Memory.objects.filter(scope=scope).aggregate(latest=Max("occurred_at"))["latest"]
        if latest is not None and (now - latest).total_seconds() > 86_400:
            anchor = latest
    return parse_window(cue, anchor, lag_days)


def score_facets(
    item: Scored,
    cue: Cue,
    pools: list[Pool],
    row_id: int,
    text_stems: frozenset[str],
    salience: float,
    time_term: float,
    policy: RankingPolicy,
    known: Cosines | None = None,
) -> None:
    """The item's base terms from its best facet (signals.TERMS), recorded in order.

    `known`: the item's (admission, ordering) cosines per facet, computed for a batch;
    `time_term`: its temporal bonus under the cue's window, or its recency without one."""
    if known is not None:
        admit, order = known
    elif cue.vectors is not None and cue.rank_vectors is not None and item.vector is not None:
        admit, order = (
            (cue.vectors @ item.vector).tolist(),
            (cue.rank_vectors @ item.vector).tolist(),
        )
    else:
        admit = order = [0.0] * len(cue.facets)
    # The winning facet's (total, terms, cos, coverage, rrf); its inputs are written once.
    best: tuple[float, list[tuple[str, float]], float, float, float] | None = None
    topicals = item.facet_topical
    for i, cos in enumerate(admit):
        pool = pools[i]
        cov = coverage(cue.terms[i], text_stems)
        topicals.append(signals.topical(cos, cov, policy))
        fused = signals.rrf(pool.dense.get(row_id), pool.lexical.get(row_id), policy)
        magnitude = signals.magnitude_fusion(
            pool.dense_share.get(row_id, 0.0),
            pool.lexical_share.get(row_id, 0.0),
            cue.discriminative,
            policy,
        )
        evidence = signals.FacetEvidence(order[i], cov, fused, salience, time_term, magnitude)
        terms = signals.base(evidence, policy)
        total = sum([value for _, value in terms])
        if best is None or total > best[0]:
            best, item.facet = (total, terms, cos, cov, fused), i
    item.topical = max(topicals, default=0.0)
    if best is not None:
        _, terms, cos, cov, fused = best
        item.inputs = {
            "cos": cos,
            "coverage": cov,
            "rrf": fused,
            "temporal": time_term,
            "topical": topicals[item.facet],
            "facet": item.facet,
        }
        item.add_all(terms)


def _gather(cue: Cue, kind: str, scopes: list[str], policy: RankingPolicy) -> list[Pool]:
    pools = []
    last = len(cue.facets) - 1
    # Set only when the cue names a speaker (its name-free vectors differ from `vectors`).
    name_free = cue.rank_vectors if cue.rank_vectors is not cue.vectors else None
    for i, facet in enumerate(cue.facets):
        vector = cue.vectors[i] if cue.vectors is not None else None
        limit = whole_cue_pool(facet, policy.candidates) if i == last else policy.candidates.pool
        pool = pool_for(kind, facet, vector, scopes, limit)
        if name_free is not None and kind == "memory":
            # A cue naming a speaker pulls in every line of theirs by the name alone; the
            # name-free cue finds what was said about the subject (LoCoMo recall@20 +0.006
            # tuning, +0.005 held out, once memories had passages).
            found = dense_hits(kind, name_free[i], limit, scopes)
            pool.related = {pk for pk, _ in found} - set(pool.dense)
        pools.append(pool)
    return pools


def _time_term(
    cue: Cue,
    moment: datetime,
    now: datetime,
    recency: tuple[float, float],
    policy: RankingPolicy,
) -> float:
    """In or out of the cue's window; without one, recency (weight, half-life in days)."""
    if cue.window is not None:
        return temporal_bonus(
            cue.window, moment, policy.terms.in_window, policy.terms.out_of_window
        )
    return signals.recency(recency[0], moment, now, recency[1])


def _memory_items(
    cue: Cue, pools: list[Pool], rows: list[MemoryRow], now: datetime, policy: RankingPolicy
) -> list[Scored[MemoryRow]]:
    visible = [m for m in rows if stage_visible(m, cue.scope)]
    terms = policy.terms
    recency = (terms.memory_recency, terms.memory_recency_half_life_days)
    full = policy.stemming.snowball
    items = []
    for memory, known in zip(visible, memory_cosines(cue, visible), strict=True):
        item = Scored(obj=memory, vector=embeddings.from_blob(memory.embedding))
        when = _time_term(cue, memory.occurred_at or memory.created_at, now, recency, policy)
        text_stems = stems(memory.content, full=full)
        score_facets(
            item, cue, pools, memory.pk, text_stems, memory.salience, when, policy, known
        )
        items.append(item)
    return items


def _rank_memories(
    cue: Cue, policy: RankingPolicy, now: datetime, with_context: bool
) -> tuple[list[Scored[MemoryRow]], bool, list[Scored[Any]]]:
    """The admitted memories, whether a pool was capped, and the scope's candidates under the
    floor."""
    scopes = searchable_scopes(cue.scope)
    pools = _gather(cue, "memory", scopes, policy)
    ids = set().union(*(p.ids for p in pools)) if pools else set()
    ids |= _session_turns(cue, scopes, policy)
    items = _memory_items(cue, pools, load_memories(ids), now, policy)
    if with_context:
        items = add_context(
            items, lambda rows: _memory_items(cue, pools, rows, now, policy), policy.recall
        )
    signals.apply(items, cue, policy, recall=with_context, after_admission=False)
    admitted = [it for it in items if _admitted(it, cue, policy, policy.admission.floor)]
    signals.apply(admitted, cue, policy, recall=with_context, after_admission=True)
    floor = max((max(len(p.dense), len(p.lexical)) for p in pools), default=0)
    capped = any(p.capped for p in pools) and len(admitted) >= floor
    chosen = {id(it) for it in admitted}
    # Recall's depth fill (signals.depth_fill) reads the cue's own scope only.
    under = [it for it in items if id(it) not in chosen and it.obj.scope == cue.scope]
    return admitted, capped, under


def _session_turns(cue: Cue, scopes: list[str], policy: RankingPolicy) -> set[int]:
    """Score whole sessions against the cue (sessions.py): their strength goes on the cue, their
    best turns join the candidates."""
    if not policy.sessions.evidence_weight:
        return set()
    found = session_matches(
        cue=" ".join(cue.facets),
        scopes=scopes,
        eligible=scope_facts(cue.scope).eligible,
        rule=policy.sessions,
    )
    cue.session_strength = found.strength
    return found.turn_ids()


def _admitted(item: Scored[MemoryRow], cue: Cue, policy: RankingPolicy, floor: float) -> bool:
    """Spec §7.5.1 and §7.1.3; a neighbour of a strong match may be lent a share of it."""
    recall, admission = policy.recall, policy.admission
    lent = recall.context_share * item.context if item.topical >= recall.context_min_own else 0.0
    needed = floor
    if item.obj.scope != cue.scope:
        needed = max(needed, admission.cross_scope_topical)
    return max(item.topical, lent) >= needed or session_admits(item, cue, policy.sessions)


def _rank_procedures(cue: Cue, policy: RankingPolicy, now: datetime) -> list[Scored[Procedure]]:
    pools = _gather(cue, "procedure", [cue.scope], policy)
    keys = set().union(*(p.ids for p in pools)) if pools else set()
    if not keys:
        return []
    rows = list(
        Procedure.objects.filter(
            index_key__in=keys, scope=cue.scope, status=Procedure.Status.ACTIVE
        )
    )
    full = policy.stemming.snowball
    doc_stems = {p.pk: stems(f"{p.goal} {p.summary}", full=full) for p in rows}
    terms = policy.terms
    admitted = []
    for proc in rows:
        item = Scored(obj=proc, vector=embeddings.from_blob(proc.embedding))
        when = temporal_bonus(cue.window, proc.created_at, terms.in_window, terms.out_of_window)
        score_facets(item, cue, pools, proc.index_key, doc_stems[proc.pk], 1.0, when, policy)
        if item.topical >= policy.admission.floor or _discriminative(
            cue, proc.pk, doc_stems, policy
        ):
            admitted.append(item)
    return procedures.order(admitted, policy)


def _discriminative(
    cue: Cue, proc_pk: str, doc_stems: Mapping[str, AbstractSet[str]], policy: RankingPolicy
) -> bool:
    query = set().union(*(set(t.stems) for t in cue.terms))
    shared = query & doc_stems[proc_pk]
    if len(shared) >= policy.procedures.discriminative_terms:
        return True
    most = len(doc_stems) * policy.procedures.discriminative_share
    return any(sum(term in s for s in doc_stems.values()) <= most for term in shared)


def _rank_episodes(
    cue: Cue,
    policy: RankingPolicy,
    now: datetime,
    *,
    imported_only: bool = False,
    in_sessions: bool = False,
) -> tuple[list[Scored[EpisodeRow]], list[Scored[Any]]]:
    """Episodes passing the floor, best first, and those under it. `in_sessions` (recall's
    imported history): read with recall's session signals (history.py)."""
    pools = _gather(cue, "episode", [cue.scope], policy)
    ids = set().union(*(p.ids for p in pools)) if pools else set()
    if in_sessions:
        rows = history.load_history(ids, cue.scope)
        weighed = history.with_episode_terms(cue, policy)
        score = lambda found: _episode_items(weighed, pools, found, now, policy)  # noqa: E731
        return history.rank_in_sessions(score(rows), score, cue, policy)
    out: list[Scored[EpisodeRow]] = []
    under: list[Scored[Any]] = []
    rows = load_episodes(ids, cue.scope, imported_only=imported_only)
    for item in _episode_items(cue, pools, rows, now, policy):
        (out if item.topical >= policy.admission.floor else under).append(item)
    out.sort(key=lambda it: (-it.score, it.obj.pk))
    return out, under


def _episode_items(
    cue: Cue, pools: list[Pool], rows: list[EpisodeRow], now: datetime, policy: RankingPolicy
) -> list[Scored[EpisodeRow]]:
    terms = policy.terms
    items = []
    for episode in rows:
        item = Scored(obj=episode, vector=embeddings.from_blob(episode.embedding))
        moment = episode.occurred_at or episode.recorded_at
        recency = (terms.episode_recency, terms.episode_recency_half_life_days)
        when = _time_term(cue, moment, now, recency, policy)
        score_facets(
            item,
            cue,
            pools,
            episode.pk,
            stems(episode.content, full=policy.stemming.snowball),
            episode.salience,
            when,
            policy,
        )
        items.append(item)
    return items
