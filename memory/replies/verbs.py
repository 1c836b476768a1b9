"""The `data` of the five agent verbs' replies (spec §6.2–§6.7), as the services build it.

Times shown to agents are Unix epoch seconds. `NotRequired` keys are left out when they do
not apply.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from memory.replies.base import closed
from memory.schemas import MemoryTypeName

# The model's choices, spelled out in memory.schemas (a test keeps the two equal).
MemoryTypeOut = MemoryTypeName
OriginScope = Annotated[str, Field(description="only when it differs from the request's scope")]
Cursor = Annotated[str, Field(description="cursor for the next page, when there is one")]


# SLOWAVE_SECRETS=redact: what was replaced before storing, per field.
RedactedPerField = Annotated[
    dict[str, dict[str, int]],
    Field(description="SLOWAVE_SECRETS=redact: credentials replaced, per field (kind → count)"),
]


@closed
class WarningOut(TypedDict):
    code: Literal["cold_start", "scope_fragmentation", "lexical_only"]
    message: str


@closed
class ProvenanceOut(TypedDict):
    source_kind: Literal["explicit_remember", "consolidated", "imported"]
    integration: NotRequired[str]
    integration_version: NotRequired[str]
    observed: Annotated[int, Field(description="when the memory was stored (epoch seconds)")]
    occurred_at: NotRequired[int]
    origin_scope: NotRequired[OriginScope]
    superseded_by: NotRequired[str]


@closed
class MemoryShownOut(TypedDict):
    memory_id: str
    type: MemoryTypeOut
    content: Annotated[
        str,
        Field(
            description="≤1,024 chars: the best-matching sentences when longer (or, under "
            "`max_tokens`, when the whole memory does not fit the page's budget)"
        ),
    ]
    pathway: Literal["direct", "associated"]
    currency: Literal["current", "historical"]
    content_truncated: NotRequired[
        Annotated[
            Literal[True],
            Field(description="content shows only part of the memory (see `content`)"),
        ]
    ]
    content_chars: NotRequired[
        Annotated[
            int,
            Field(description="under `max_tokens`, a truncated memory's full length in characters"),
        ]
    ]
    provenance: ProvenanceOut


@closed
class EpisodeProvenanceOut(TypedDict):
    source_kind: Literal["imported_session"]
    session_id: Annotated[str, Field(description="the imported session the turn belongs to")]
    observed: Annotated[int, Field(description="when the turn was imported (epoch seconds)")]
    occurred_at: NotRequired[int]


@closed
class EpisodeShownOut(TypedDict):
    """A turn of imported history ranked among the memories. No feedback is owed for it: it
    is not an exposure, and feedback naming it is rejected."""

    episode_id: str
    type: Literal["episode"]
    content: Annotated[str, Field(description="≤1,024 chars, as a memory's")]
    pathway: Literal["direct"]
    content_truncated: NotRequired[Literal[True]]
    content_chars: NotRequired[int]
    provenance: EpisodeProvenanceOut


ShownOut = MemoryShownOut | EpisodeShownOut


@closed
class TrackRecordOut(TypedDict):
    """How the procedure fared since: the latest feedback of each later retrieval that used it."""

    helped: int
    no_effect: int
    harmed: int
    harm_dominates: Annotated[
        bool, Field(description="more harmed than helped: a caveat then says so first")
    ]


@closed
class ProcedurePreviewOut(TypedDict):
    procedure_id: str
    goal: str
    summary: str
    outcome: Annotated[str, Field(description="how the task that taught it went")]
    outcome_summary: str
    track_record: TrackRecordOut
    caveats: Annotated[list[str], Field(description="never truncated")]
    origin_scope: NotRequired[OriginScope]


@closed
class OutcomeContributionOut(TypedDict):
    """How one use of the procedure turned out."""

    effect: str
    contribution: str
    outcome: str
    outcome_summary: str
    occurred_at: int


@closed
class ProcedureFullOut(ProcedurePreviewOut):
    context: dict[str, Any]
    steps: list[dict[str, Any]]
    created_at: int
    evidence: Annotated[
        dict[str, int],
        Field(description="nonzero counts of used, not_used, helped, no_effect, harmed, unknown"),
    ]
    contributions: Annotated[list[OutcomeContributionOut], Field(max_length=3)]


@closed
class FieldLeftOut(TypedDict):
    """What later pages hold (never their content)."""

    extra_candidates: int
    kinds: list[str]
    approx_extra_tokens: Annotated[
        int,
        Field(
            description="ceil(serialised chars of the later pages' items / 4): the estimate "
            "`max_tokens` budgets are counted in"
        ),
    ]


@closed
class NothingLeftOut(TypedDict):
    """Nothing remains beyond this page."""


AccessibleField = FieldLeftOut | NothingLeftOut


@closed
class ActivateOut(TypedDict):
    retrieval_id: str
    session_id: str
    retrieval_policy_version: str
    memory_state: Literal["cold_start", "available"]
    warnings: list[WarningOut]
    continuity_id: str
    continuity_state: Literal["started", "continued"]
    relevant_total: int
    catalog_truncated: bool
    memories: list[ShownOut]
    procedures: list[ProcedurePreviewOut]
    more_available: bool
    accessible_field: AccessibleField
    continue_from: NotRequired[Cursor]
    redacted: NotRequired[RedactedPerField]


@closed
class EvidenceRefOut(TypedDict):
    kind: Literal["memory", "session"]
    id: str


@closed
class EvidenceOut(TypedDict):
    evidence_id: str
    source_kind: Literal["episode", "event"]
    recorded_at: int
    occurred_at: int | None
    source_ref: EvidenceRefOut
    content: NotRequired[Annotated[str, Field(description="evidence `full` only; ≤1,000 chars")]]
    truncated: NotRequired[Annotated[bool, Field(description="evidence `full` only")]]


@closed
class RecallOut(TypedDict):
    """A fresh recall, or (with `continue_from`) the next page of an earlier retrieval, which
    carries only the page's own keys and shows procedures as its retrieval first did."""

    retrieval_id: str
    memories: list[ShownOut]
    procedures: list[ProcedureFullOut | ProcedurePreviewOut]
    more_available: bool
    accessible_field: AccessibleField
    continue_from: NotRequired[Cursor]
    evidence: NotRequired[Annotated[list[EvidenceOut], Field(max_length=8)]]
    evidence_mode: NotRequired[Literal["references", "full"]]
    evidence_truncated: NotRequired[bool]
    retrieval_policy_version: NotRequired[str]
    relevant_total: NotRequired[int]
    catalog_truncated: NotRequired[bool]
    warnings: NotRequired[list[WarningOut]]
    redacted: NotRequired[RedactedPerField]


@closed
class StoredOut(TypedDict):
    stored: Literal[True]
    memory_id: str
    disposition: Literal["created", "matched"]
    type: MemoryTypeOut
    scope: str
    source_event_id: str
    redacted: NotRequired[
        Annotated[
            dict[str, int],
            Field(
                description="SLOWAVE_SECRETS=redact: credentials replaced in the content "
                "(kind → count)"
            ),
        ]
    ]


@closed
class ItemErrorOut(TypedDict):
    code: Literal["storage_error"]
    message: str
    retryable: Literal[False]


@closed
class StoredItemOut(TypedDict):
    index: int
    ok: Literal[True]
    data: StoredOut


@closed
class FailedItemOut(TypedDict):
    index: int
    ok: Literal[False]
    error: ItemErrorOut


@closed
class RememberBatchOut(TypedDict):
    """Reply to `memories`: one result per item, in order."""

    results: list[StoredItemOut | FailedItemOut]


RememberOut = StoredOut | RememberBatchOut


@closed
class OutstandingOut(TypedDict):
    memory_ids: list[str]
    procedure_ids: list[str]


@closed
class RejectedOut(TypedDict):
    target_id: str
    reason: str


@closed
class AppliedOut(TypedDict):
    reinforced: int
    weakened: int
    marked_stale: int
    unchanged: int


@closed
class FeedbackRecordOut(TypedDict):
    retrieval_id: str
    coverage: Literal["partial", "complete"]
    outstanding: OutstandingOut
    accepted_event_ids: list[str]
    rejected: list[RejectedOut]
    applied: AppliedOut


@closed
class FeedbackItemOut(TypedDict):
    ok: Literal[True]
    data: FeedbackRecordOut


@closed
class FeedbackBatchOut(TypedDict):
    """Reply to `items`: one result per record, in order."""

    results: list[FeedbackItemOut]


FeedbackOut = FeedbackRecordOut | FeedbackBatchOut


@closed
class CommitOut(TypedDict):
    session_id: str
    episodes_formed: int
    committed: Literal[True]
    outcome: Literal["success", "partial", "failure"]
    feedback_status: Literal["complete", "incomplete", "not_required", ""]
    verification_status: Literal["verified", "partially_verified", "unverified"]
    operation: Literal["closed", "updated"]
    trajectory_lifecycle_filtered: NotRequired[
        Annotated[
            int, Field(description="trajectory entries dropped for narrating Slowave's own calls")
        ]
    ]
    session_note: NotRequired[str]
    already_ended: NotRequired[
        Annotated[Literal[True], Field(description="the session had ended (e.g. reaped)")]
    ]
    redacted: NotRequired[RedactedPerField]
