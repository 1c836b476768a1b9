"""Which items a session's retrievals showed that still lack accepted feedback: the commit
preflight (memory.services.commit, closing) and the session detail page both read it."""

from __future__ import annotations

from typing import Any

from memory.models import Exposure, FeedbackEvent, Session
from memory.retrieval.render import latest_procedure_feedback


def feedback_gaps(*, session: Session) -> list[dict[str, Any]]:
    """One outstanding entry per retrieval whose shown items lack accepted feedback."""
    ids = list(session.retrievals.order_by("created_at", "id").values_list("id", flat=True))
    exposed: dict[str, set[tuple[str, str]]] = {}
    shown = Exposure.objects.filter(retrieval__session=session)
    for retrieval_id, kind, target in shown.values_list("retrieval_id", "target_kind", "target_id"):
        exposed.setdefault(retrieval_id, set()).add((kind, target))
    assessed: dict[str, set[tuple[str, str]]] = {}
    declared: set[str] = set()
    accepted = FeedbackEvent.objects.filter(
        retrieval__session=session, status=FeedbackEvent.Status.ACCEPTED
    )
    for retrieval_id, kind, target, coverage in accepted.values_list(
        "retrieval_id", "target_kind", "target_id", "coverage"
    ):
        if kind != "retrieval":
            assessed.setdefault(retrieval_id, set()).add((kind, target))
        elif coverage == "complete":
            declared.add(retrieval_id)
    outstanding = []
    for retrieval_id in ids:
        if retrieval_id not in exposed:
            continue
        missing = sorted(exposed[retrieval_id] - assessed.get(retrieval_id, set()))
        if missing or retrieval_id not in declared:
            outstanding.append(
                {
                    "retrieval_id": retrieval_id,
                    "memory_ids": [t for k, t in missing if k == "memory"],
                    "procedure_ids": [t for k, t in missing if k == "procedure"],
                    "coverage_declared_complete": retrieval_id in declared,
                }
            )
    return outstanding


TRACK_EFFECTS = ("helped", "no_effect", "harmed")


def procedure_track_record(*, procedure_id: str) -> dict[str, Any]:
    """How a procedure fared when agents used it: helped / no effect / harmed counts from the
    latest accepted feedback per retrieval, and whether harm dominates (more harmed than
    helped), for people reading its page beside the outcome of the commit that taught it."""
    # The latest accepted row per retrieval, as the agent's full procedure view counts them.
    used = [row.effect for row in latest_procedure_feedback(procedure_id) if row.use == "used"]
    counts = {key: used.count(key) for key in TRACK_EFFECTS}
    return {**counts, "harm_dominates": counts["harmed"] > counts["helped"]}

