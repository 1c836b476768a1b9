"""Salience learning from accepted feedback (spec §8.2); replays change nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memory.engines import bulk
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
    reinforce_targets(rows=[row], applied=applied)


def reinforce_targets(
    *, rows: Sequence[FeedbackEvent], applied: Applied | Sequence[Applied]
) -> None:
    """Apply each accepted memory row in order, as one row at a time would, in five queries.

    The caller holds the transaction. A memory that two rows touch (shown by two retrievals)
    takes both changes; a (retrieval, memory) that two rows name ends at the later one's delta.
    `applied`: one tally for all rows, or each row's own (a feedback call's records).
    """
    tallies = [applied] * len(rows) if isinstance(applied, Applied) else list(applied)
    pks = [memory_pk(row.target_id) for row in rows]
    memories = {
        m.pk: m
        for m in Memory.objects.select_for_update()
        .filter(pk__in={pk for pk in pks if pk is not None})
        .order_by("pk")
    }
    ledgers = {
        (ledger.retrieval_id, ledger.target_id): ledger
        for ledger in LearningApplication.objects.filter(
            target_kind="memory",
            retrieval_id__in={row.retrieval_id for row in rows},
            target_id__in={row.target_id for row in rows},
        )
    }
    created: list[LearningApplication] = []
    moved: dict[int, LearningApplication] = {}  # ledger rows that exist and change
    changed: dict[int, set[str]] = {}
    for row, pk, tally in zip(rows, pks, tallies, strict=True):
        memory = memories.get(pk) if pk is not None else None
        if memory is None or memory.status not in (Memory.Status.ACTIVE, Memory.Status.STALE):
            tally.unchanged += 1
            continue
        ledger = ledgers.get((row.retrieval_id, row.target_id))
        if ledger is None:
            ledger = LearningApplication(
                retrieval_id=row.retrieval_id, target_kind="memory", target_id=row.target_id
            )
            ledgers[(row.retrieval_id, row.target_id)] = ledger
            created.append(ledger)
        elif ledger.pk is not None:
            moved[ledger.pk] = ledger
        change = desired_delta(row) - ledger.applied_delta
        fields = _apply(memory, row, change=change, applied=tally)
        if fields:
            changed.setdefault(memory.pk, set()).update(fields)
            tally.touched.append(memory.pk)
        ledger.applied_event, ledger.applied_delta = row, desired_delta(row)
    if changed:
        bulk.update([memories[pk] for pk in changed], sorted(set().union(*changed.values())))
    bulk.insert(created)
    bulk.update(list(moved.values()), ["applied_event", "applied_delta"])


def _apply(memory: Memory, row: FeedbackEvent, *, change: float, applied: Applied) -> list[str]:
    """One row's effect on the loaded memory; returns the fields it changed."""
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
    return fields


def _stale_applied(memory: Memory) -> bool:
    return bool(memory.flags.get("stale_applied"))
