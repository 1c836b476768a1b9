"""Salience learning from accepted feedback (spec §8.2); replays change nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.ids import memory_pk
from memory.models import FeedbackEvent, LearningApplication, Memory
from memory.replies.verbs import AppliedOut

DELTAS = {
    ("used", "helped"): 0.30,
    ("used", ""): 0.30,
    ("used", "no_effect"): 0.0,
    ("used", "harmed"): -0.50,
    ("irrelevant", ""): -0.05,
    ("irrelevant", "unknown"): -0.05,
}
MIN_SALIENCE, MAX_SALIENCE = 0.01, 20.0


@dataclass
class Applied:
    reinforced: int = 0
    weakened: int = 0
    marked_stale: int = 0
    unchanged: int = 0
    touched: list[int] = field(default_factory=list)

    def as_dict(self) -> AppliedOut:
        return {
            "reinforced": self.reinforced,
            "weakened": self.weakened,
            "marked_stale": self.marked_stale,
            "unchanged": self.unchanged,
        }


def desired_delta(row: FeedbackEvent) -> float:
    return DELTAS.get((row.assessment, row.effect), 0.0)


def reinforce_target(*, row: FeedbackEvent, applied: Applied) -> None:
    """Bring one (retrieval, memory) to the delta its latest accepted row asks for."""
    pk = memory_pk(row.target_id)
    memory = Memory.objects.select_for_update().filter(pk=pk).first() if pk is not None else None
    if memory is None or memory.status not in (Memory.Status.ACTIVE, Memory.Status.STALE):
        applied.unchanged += 1
        return
    ledger, _ = LearningApplication.objects.get_or_create(
        retrieval_id=row.retrieval_id,
        target_kind="memory",
        target_id=row.target_id,
        defaults={"applied_event": row, "applied_delta": 0.0},
    )
    change = desired_delta(row) - ledger.applied_delta
    fields = []
    if (
        row.assessment == "stale"
        and memory.status == Memory.Status.ACTIVE
        and not _stale_applied(memory)
    ):
        memory.status = Memory.Status.STALE
        memory.stale_reason = row.stale_reason
        memory.superseded_by_id = (
            memory_pk(row.replacement_memory_id) if row.replacement_memory_id else None
        )
        memory.salience = max(MIN_SALIENCE, memory.salience / 2)
        memory.flags = {**memory.flags, "stale_applied": True}
        fields += ["status", "stale_reason", "superseded_by", "salience", "flags"]
        applied.marked_stale += 1
    if change:
        memory.salience = min(MAX_SALIENCE, max(MIN_SALIENCE, memory.salience + change))
        fields.append("salience")
        if change > 0:
            applied.reinforced += 1
        else:
            applied.weakened += 1
    elif not fields:
        applied.unchanged += 1
    if fields:
        memory.save(update_fields=sorted(set(fields)))
        applied.touched.append(memory.pk)
    LearningApplication.objects.filter(pk=ledger.pk).update(
        applied_event=row, applied_delta=desired_delta(row)
    )


def _stale_applied(memory: Memory) -> bool:
    return bool(memory.flags.get("stale_applied"))
