"""Which items a session's retrievals showed that still lack accepted feedback: the commit
preflight (memory.services.commit, closing) and the session detail page both read it."""

from __future__ import annotations

from typing import Any

from memory.models import Exposure, FeedbackEvent, Session


def feedback_gaps(*, session: Session) -> list[dict[str, Any]]:
    """One outstanding entry per retrieval whose shown items lack accepted feedback."""
    outstanding = []
    for retrieval in session.retrievals.order_by("created_at", "id"):
        exposed = set(
            Exposure.objects.filter(retrieval=retrieval).values_list("target_kind", "target_id")
        )
        if not exposed:
            continue
        accepted = FeedbackEvent.objects.filter(
            retrieval=retrieval, status=FeedbackEvent.Status.ACCEPTED
        )
        assessed = set(
            accepted.exclude(target_kind="retrieval").values_list("target_kind", "target_id")
        )
        declared = accepted.filter(target_kind="retrieval", coverage="complete").exists()
        missing = sorted(exposed - assessed)
        if missing or not declared:
            outstanding.append(
                {
                    "retrieval_id": retrieval.id,
                    "memory_ids": [t for k, t in missing if k == "memory"],
                    "procedure_ids": [t for k, t in missing if k == "procedure"],
                    "coverage_declared_complete": declared,
                }
            )
    return outstanding
