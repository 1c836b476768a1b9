"""Procedure order (spec §7.5.5, reshaped by issue 15): relevance weighed with what feedback
said of each procedure, so one that harmed does not keep leading one that helped.

The estimate is the smoothed share of helpful outcomes, Beta(prior, prior) over the latest
accepted feedback per retrieval, a harm counting `harm_weight` times; a procedure with no
feedback sits at ½ and so gets nothing.
"""

from __future__ import annotations

from collections import Counter

from memory.models import FeedbackEvent, Procedure
from memory.retrieval.policy import RankingPolicy
from memory.retrieval.scored import Scored


def outcomes(procedure_ids: list[str]) -> dict[str, Counter[str]]:
    """procedure id → counts of effects over the latest accepted row per retrieval."""
    rows = (
        FeedbackEvent.objects.filter(
            target_kind="procedure",
            target_id__in=procedure_ids,
            status=FeedbackEvent.Status.ACCEPTED,
        )
        .order_by("target_id", "retrieval_id", "-created_at", "-pk")
        .values_list("target_id", "retrieval_id", "effect")
    )
    latest: dict[tuple[str, str], str] = {}
    for target, retrieval, effect in rows:
        latest.setdefault((target, retrieval), effect or "")
    out: dict[str, Counter[str]] = {pid: Counter() for pid in procedure_ids}
    for (target, _), effect in latest.items():
        if effect:
            out[target][effect] += 1
    return out


def feedback_estimate(helped: int, harmed: int, policy: RankingPolicy) -> float:
    """Smoothed helped share minus ½: 0 without feedback, negative once harm outweighs help."""
    p = policy.procedures
    harm = p.harm_weight * harmed
    return (helped + p.feedback_prior) / (helped + harm + 2 * p.feedback_prior) - 0.5


def order(items: list[Scored[Procedure]], policy: RankingPolicy) -> list[Scored[Procedure]]:
    """By relevance plus the feedback signal (recorded as `feedback`), then newest first."""
    counts = outcomes([it.obj.pk for it in items])
    weight = policy.procedures.feedback_weight
    for it in items:
        seen = counts[it.obj.pk]
        it.add("feedback", weight * feedback_estimate(seen["helped"], seen["harmed"], policy))
    return sorted(items, key=lambda it: (-it.score, -it.obj.created_at.timestamp(), it.obj.pk))
