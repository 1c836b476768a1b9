"""Per-target feedback checks of spec §6.5: each returns a rejection reason or None."""

from __future__ import annotations

from memory.ids import memory_pk
from memory.models import Memory, Retrieval
from memory.schemas import MemoryFeedback, ProcedureFeedback

ASSESSMENTS = ("used", "irrelevant", "stale")
RELEVANCE = ("relevant", "irrelevant", "uncertain")
USED_EFFECTS = ("helped", "no_effect", "harmed")
STALE_REASONS = ("contradicted", "superseded", "outdated", "unsupported", "withdrawn")
PROCEDURE_USES = ("used", "not_used")
PROCEDURE_EFFECTS = ("helped", "no_effect", "harmed", "unknown")


def memory_rejection(
    entry: MemoryFeedback, *, exposed: set[str], retrieval: Retrieval
) -> str | None:
    if entry.memory_id not in exposed:
        return "target_not_exposed"
    if entry.assessment not in ASSESSMENTS:
        return "invalid_memory_assessment"
    if entry.relevance is not None and entry.relevance not in RELEVANCE:
        return "invalid_relevance"
    if entry.assessment == "used" and entry.effect not in (None, *USED_EFFECTS):
        return "used_requires_helped_no_effect_or_harmed_effect"
    if entry.assessment == "irrelevant" and entry.effect not in (None, "unknown"):
        return "irrelevant_requires_unknown_or_absent_effect"
    if entry.assessment == "stale":
        if entry.effect not in (None, "unknown"):
            return "stale_requires_unknown_or_absent_effect"
        if entry.stale_reason not in STALE_REASONS:
            return "stale_requires_valid_stale_reason"
        if not (entry.reason or "").strip():
            return "stale_requires_reason"
        if entry.stale_reason == "superseded" and not entry.replacement_memory_id:
            return "superseded_requires_replacement_memory_id"
    elif entry.stale_reason is not None:
        return "stale_reason_requires_stale_assessment"
    if entry.replacement_memory_id is not None:
        return _replacement_rejection(entry, entry.replacement_memory_id, retrieval)
    return None


def _replacement_rejection(
    entry: MemoryFeedback, replacement_id: str, retrieval: Retrieval
) -> str | None:
    if entry.assessment != "stale":
        return "replacement_requires_stale_assessment"
    if replacement_id == entry.memory_id:
        return "replacement_matches_retired_memory"
    pk = memory_pk(replacement_id)
    if pk is None:
        return "invalid_replacement_memory_id"
    replacement = Memory.objects.filter(pk=pk).first()
    if replacement is None:
        return "replacement_not_found"
    if replacement.scope != retrieval.scope:
        return "replacement_scope_mismatch"
    if replacement.status != Memory.Status.ACTIVE:
        return "replacement_not_current"
    return None


def procedure_rejection(entry: ProcedureFeedback, *, exposed: set[str]) -> str | None:
    if entry.procedure_id not in exposed:
        return "target_not_exposed"
    if entry.use not in PROCEDURE_USES:
        return "invalid_procedure_use"
    if entry.effect not in PROCEDURE_EFFECTS:
        return "invalid_procedure_effect"
    contribution = (entry.contribution or "").strip()
    if entry.use == "used" and not contribution:
        return "used_procedure_requires_contribution"
    if entry.use == "not_used" and (entry.effect != "unknown" or contribution):
        return "not_used_requires_unknown_effect_and_no_contribution"
    return None
