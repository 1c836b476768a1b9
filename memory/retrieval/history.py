"""Imported history read in its sessions: the episodes of imported sessions get recall's session
signals as remembered turns do (context.py: a strong match lends rank to the episodes beside it,
the episode after one ending in a question ranks as its answer; the session signal: an episode
of a session whose other admitted episodes match well). An episode's place in its session is
its ordinal (0 first, by its first event), where a memory's is its remember event's seq.

The signals are signals.py's own, read with the weights of policy.Recall; policy.History says
which apply to history. What is ranked, and how the page merges it with memories, is the
engine's and services/retrieval.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from memory import lexical
from memory.models import Episode, Session
from memory.retrieval import signals
from memory.retrieval.candidates import EPISODE_FIELDS, EpisodeRow
from memory.retrieval.context import Positions, add_context
from memory.retrieval.policy import RankingPolicy
from memory.retrieval.scored import Cue, Scored
from memory.retrieval.scoring import facet_terms, idf
from memory.text import tokens

Items = list[Scored[EpisodeRow]]


def _with_ordinals(rows: QuerySet[Episode]) -> QuerySet[Episode]:
    earlier = (
        Episode.objects.filter(
            session_id=OuterRef("session_id"), first_event__seq__lt=OuterRef("first_event__seq")
        )
        .order_by()
        .values("session_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return rows.annotate(
        ordinal=Coalesce(Subquery(earlier, output_field=IntegerField()), Value(0))
    )


def load_history(ids: set[int], scope: str) -> list[EpisodeRow]:
    """The episodes of imported sessions among `ids`, each with its place in its session."""
    if not ids:
        return []
    rows = Episode.objects.filter(
        pk__in=ids, scope=scope, session__ended_by=Session.EndedBy.IMPORT
    )
    ordered = _with_ordinals(rows).values_list(*EPISODE_FIELDS, "ordinal")
    return [EpisodeRow(*row) for row in ordered]


def around(positions: Positions) -> dict[tuple[str, int], int]:
    """(session, ordinal) → episode pk for the episodes next to the given positions."""
    wanted = {(s, o + d) for s, o in positions.values() for d in (-1, 1)}
    if not wanted:
        return {}
    rows = _with_ordinals(Episode.objects.filter(session_id__in={s for s, _ in wanted}))
    # `ordinal` is annotated by _with_ordinals, which django-stubs cannot follow.
    found = rows.filter(ordinal__in={o for _, o in wanted}).values_list(  # type: ignore[misc]
        "pk", "session_id", "ordinal"
    )
    return {(s, o): pk for pk, s, o in found if (s, o) in wanted}


def with_episode_terms(cue: Cue, policy: RankingPolicy) -> Cue:
    """The cue with its query terms weighed by idf over the scope's episodes, not its
    memories: in an imported scope the memories are the few consolidation made, whose
    frequencies say little about the turns."""
    if not policy.history.episode_idf:
        return cue
    words = sorted({t for facet in cue.facets for t in tokens(facet)})
    frequencies = lexical.document_frequencies("episode", words, [cue.scope])
    count = Episode.objects.filter(scope=cue.scope).count()
    idf_of = {term: idf(count, df) for term, df in frequencies.items()}
    full = policy.stemming.snowball
    return replace(cue, terms=[facet_terms(f, idf_of, full=full) for f in cue.facets])


def _apply(items: Items, cue: Cue, policy: RankingPolicy, *, after_admission: bool) -> None:
    chosen = {"context", "reply", "session"} if policy.history.session_signals else set()
    for signal in signals.SIGNALS:
        if signal.name in chosen and signal.after_admission == after_admission:
            for item, value in zip(items, signal.apply(items, cue, policy), strict=True):  # type: ignore[arg-type]
                item.add(signal.name, value)


def admits(item: Scored[EpisodeRow], policy: RankingPolicy) -> bool:
    """The floor, or a share of a strong neighbour's (engine._admitted's rule for memories)."""
    recall = policy.recall
    lent = recall.context_share * item.context if item.topical >= recall.context_min_own else 0.0
    return max(item.topical, lent) >= policy.admission.floor


def rank_in_sessions(
    items: Items,
    score_rows: Callable[[list[EpisodeRow]], Items],
    cue: Cue,
    policy: RankingPolicy,
) -> tuple[Items, Items]:
    """Recall's history: the candidates with their neighbours and session signals; the
    admitted, best first, and those under the floor."""
    if policy.history.session_signals:
        items = add_context(
            items,
            score_rows,
            policy.recall,
            around_of=around,
            load=lambda ids: load_history(ids, cue.scope),
        )
    _apply(items, cue, policy, after_admission=False)
    admitted = [it for it in items if admits(it, policy)]
    _apply(admitted, cue, policy, after_admission=True)
    chosen = {id(it) for it in admitted}
    under = [it for it in items if id(it) not in chosen]
    admitted.sort(key=lambda it: (-it.score, it.obj.pk))
    return admitted, under
