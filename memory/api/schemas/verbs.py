"""The `data` of the five agent verbs' replies (spec §6.2–§6.7), as the services build it.

Times shown to agents are Unix epoch seconds. Fields defaulting to None are keys the service
leaves out when they do not apply.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from memory.api.schemas.base import ABSENT, Out
from memory.schemas import MemoryTypeName

# The model's choices, spelled out in memory.schemas (a test keeps the two equal).
MemoryTypeOut = MemoryTypeName


class WarningOut(Out):
    code: Literal["cold_start", "scope_fragmentation", "lexical_only"]
    message: str


class ProvenanceOut(Out):
    source_kind: Literal["explicit_remember", "consolidated", "imported"]
    integration: str = ABSENT
    integration_version: str = ABSENT
    observed: int = Field(description="when the memory was stored (epoch seconds)")
    occurred_at: int = ABSENT
    origin_scope: str = Field(ABSENT, description="only when it differs from the request's scope")
    superseded_by: str = ABSENT


class MemoryShownOut(Out):
    memory_id: str
    type: MemoryTypeOut
    content: str = Field(description="≤1,024 chars: the best-matching sentences when longer")
    pathway: Literal["direct", "associated"]
    currency: Literal["current", "historical"]
    content_truncated: Literal[True] = ABSENT
    provenance: ProvenanceOut


class ProcedurePreviewOut(Out):
    procedure_id: str
    goal: str
    summary: str
    outcome: str
    outcome_summary: str
    caveats: list[str] = Field(description="never truncated")
    origin_scope: str = Field(ABSENT, description="only when it differs from the request's scope")


class ContributionOut(Out):
    effect: str
    contribution: str
    outcome: str
    outcome_summary: str
    occurred_at: int


class ProcedureFullOut(ProcedurePreviewOut):
    context: dict[str, Any]
    steps: list[dict[str, Any]]
    created_at: int
    evidence: dict[str, int] = Field(
        description="nonzero counts of used, not_used, helped, no_effect, harmed, unknown"
    )
    contributions: list[ContributionOut] = Field(max_length=3)


class FieldLeftOut(Out):
    """What later pages hold (never their content)."""

    extra_candidates: int
    kinds: list[str]
    approx_extra_tokens: int


class NothingLeftOut(Out):
    """Nothing remains beyond this page."""


class ActivateOut(Out):
    retrieval_id: str
    session_id: str
    retrieval_policy_version: str
    memory_state: Literal["cold_start", "available"]
    warnings: list[WarningOut]
    continuity_id: str
    continuity_state: Literal["started", "continued"]
    relevant_total: int
    catalog_truncated: bool
    memories: list[MemoryShownOut]
    procedures: list[ProcedurePreviewOut]
    more_available: bool
    accessible_field: FieldLeftOut | NothingLeftOut
    continue_from: str = Field(ABSENT, description="cursor for the next page, when there is one")
    redacted: dict[str, dict[str, int]] = Field(
        ABSENT,
        description="SLOWAVE_SECRETS=redact: credentials replaced, per field (kind → count)",
    )


class EvidenceRefOut(Out):
    kind: Literal["memory", "session"]
    id: str


class EvidenceOut(Out):
    evidence_id: str
    source_kind: Literal["episode", "event"]
    recorded_at: int
    occurred_at: int | None
    source_ref: EvidenceRefOut
    content: str = Field(ABSENT, description="evidence `full` only; ≤1,000 chars")
    truncated: bool = Field(ABSENT, description="evidence `full` only")


class RecallOut(Out):
    """A fresh recall, or (with `continue_from`) the next page of an earlier retrieval, which
    carries only the page's own keys and shows procedures as its retrieval first did."""

    retrieval_id: str
    memories: list[MemoryShownOut]
    procedures: list[ProcedureFullOut | ProcedurePreviewOut]
    more_available: bool
    accessible_field: FieldLeftOut | NothingLeftOut
    continue_from: str = Field(ABSENT, description="cursor for the next page, when there is one")
    evidence: list[EvidenceOut] = Field(ABSENT, max_length=8)
    evidence_mode: Literal["references", "full"] = ABSENT
    evidence_truncated: bool = ABSENT
    retrieval_policy_version: str = ABSENT
    relevant_total: int = ABSENT
    catalog_truncated: bool = ABSENT
    warnings: list[WarningOut] = ABSENT
    redacted: dict[str, dict[str, int]] = Field(
        ABSENT,
        description="SLOWAVE_SECRETS=redact: credentials replaced, per field (kind → count)",
    )


class StoredOut(Out):
    stored: Literal[True]
    memory_id: str
    disposition: Literal["created", "matched"]
    type: MemoryTypeOut
    scope: str
    source_event_id: str
    redacted: dict[str, int] = Field(
        ABSENT,
        description="SLOWAVE_SECRETS=redact: credentials replaced in the content (kind → count)",
    )


class ItemErrorOut(Out):
    code: Literal["storage_error"]
    message: str
    retryable: Literal[False]


class StoredItemOut(Out):
    index: int
    ok: Literal[True]
    data: StoredOut


class FailedItemOut(Out):
    index: int
    ok: Literal[False]
    error: ItemErrorOut


class RememberBatchOut(Out):
    """Reply to `memories`: one result per item, in order."""

    results: list[StoredItemOut | FailedItemOut]


RememberOut = StoredOut | RememberBatchOut


class OutstandingOut(Out):
    memory_ids: list[str]
    procedure_ids: list[str]


class RejectedOut(Out):
    target_id: str
    reason: str


class AppliedOut(Out):
    reinforced: int
    weakened: int
    marked_stale: int
    unchanged: int


class FeedbackRecordOut(Out):
    retrieval_id: str
    coverage: Literal["partial", "complete"]
    outstanding: OutstandingOut
    accepted_event_ids: list[str]
    rejected: list[RejectedOut]
    applied: AppliedOut


class FeedbackItemOut(Out):
    ok: Literal[True]
    data: FeedbackRecordOut


class FeedbackBatchOut(Out):
    """Reply to `items`: one result per record, in order."""

    results: list[FeedbackItemOut]


FeedbackOut = FeedbackRecordOut | FeedbackBatchOut


class CommitOut(Out):
    session_id: str
    episodes_formed: int
    committed: Literal[True]
    outcome: Literal["success", "partial", "failure"]
    feedback_status: Literal["complete", "incomplete", "not_required", ""]
    verification_status: Literal["verified", "partially_verified", "unverified"]
    operation: Literal["closed", "updated"]
    trajectory_lifecycle_filtered: int = Field(
        ABSENT, description="trajectory entries dropped for narrating Slowave's own calls"
    )
    session_note: str = ABSENT
    already_ended: Literal[True] = Field(ABSENT, description="the session had ended (e.g. reaped)")
    redacted: dict[str, dict[str, int]] = Field(
        ABSENT,
        description="SLOWAVE_SECRETS=redact: credentials replaced, per field (kind → count)",
    )
