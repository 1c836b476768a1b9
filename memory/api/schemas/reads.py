"""The `data` of the read-only routes' replies, as memory/api/read_data.py shapes it.

Rows are database records (records.py), with datetimes as ISO 8601 strings; a list answers
one page of rows with its `total`, `limit` and `offset`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from memory.api.schemas.base import Out
from memory.api.schemas.records import (
    EpisodeRecord,
    EventRecord,
    ForgetLogRecord,
    MemoryRecord,
    MemoryRow,
    ProcedureRecord,
    RetrievalRecord,
    SessionRecord,
)
from memory.models import Exposure, Retrieval, Support

# The models' choices as Literals; a type checker reads them as plain strings.
if TYPE_CHECKING:
    SupportKind = str
    RetrievalKind = str
    ExposurePathway = str
    ExposureCurrency = str
else:
    SupportKind = Literal[tuple(Support.Kind.values)]
    RetrievalKind = Literal[tuple(Retrieval.Kind.values)]
    ExposurePathway = Literal[tuple(Exposure.Pathway.values)]
    ExposureCurrency = Literal[tuple(Exposure.Currency.values)]


class MemoriesOut(Out):
    memories: list[MemoryRow]
    total: int = Field(description="rows matching the filters, over all pages")
    limit: int
    offset: int


class SupportOut(Out):
    kind: SupportKind
    event: EventRecord | None
    episode: EpisodeRecord | None
    session: SessionRecord | None
    scope: str
    weight: float
    created_at: datetime


class ExposureSeenOut(Out):
    """One time a retrieval showed the memory, and what the agent said about it."""

    retrieval_id: str
    retrieval_kind: RetrievalKind
    session_id: str
    pathway: ExposurePathway
    currency: ExposureCurrency
    rank: int
    exposed_at: datetime
    feedback: str = Field(description="e.g. `used / helped`, or `unknown (no accepted feedback)`")
    rejected: list[str] = Field(description="rejection reasons of refused feedback")


class AssociationOut(Out):
    kind: str
    weight: float
    other: str = Field(description="sch_N id of the associated memory")


class GeneralizationOut(Out):
    stage: int
    stage_name: str
    evidence_scopes: list[str]
    evidence_sessions: int
    scope_kinds: list[str]


class MemoryEvidenceOut(Out):
    """One memory with its evidence chain, in the order a person reads it."""

    memory: MemoryRecord
    supports: list[SupportOut]
    sessions: list[SessionRecord]
    exposures: list[ExposureSeenOut]
    superseded_by: str | None
    duplicate_of: str | None
    supersedes: list[str]
    duplicates: list[str]
    associations: list[AssociationOut] = Field(max_length=50)
    generalization: GeneralizationOut
    forget_log: list[ForgetLogRecord]


class SessionsOut(Out):
    sessions: list[SessionRecord]
    total: int = Field(description="rows matching the filters, over all pages")
    limit: int
    offset: int


class GapOut(Out):
    retrieval_id: str
    memory_ids: list[str]
    procedure_ids: list[str]
    coverage_declared_complete: bool


class SessionRetrievalOut(Out):
    id: str
    kind: RetrievalKind
    exposed: int
    gap: GapOut | None = Field(description="what still lacks feedback; null when complete")


class SessionDetailOut(Out):
    session: SessionRecord
    events: list[EventRecord]
    retrievals: list[SessionRetrievalOut]
    feedback_complete: bool
    memories: list[str] = Field(description="sch_N ids of the memories this session stored")
    procedure: str | None


class RetrievalExposureOut(Out):
    target_kind: Literal["memory", "procedure"]
    target_id: str
    pathway: ExposurePathway
    rank: int
    feedback: str
    missing: bool = Field(description="no accepted feedback yet")


class ContributionOut(Out):
    signal: str = Field(description="a ranking signal; what each means: `signal_meanings`")
    value: float = Field(description="what it added to the score (negative: took away)")


class ItemFeedbackOut(Out):
    event_id: str = Field(description="fbe_… id of the latest accepted feedback on the item")
    label: str = Field(description="e.g. `used / helped`, `stale / outdated`, `used / harmed`")
    created_at: datetime


class ExplainedItemOut(Out):
    """One catalogued item: where it ranked and every contribution to its score."""

    rank: int = Field(description="1-based position in the frozen catalog (the exposure's rank)")
    page: int = Field(description="0-based page index, as exposures and cursors count")
    ref: str = Field(description="sch_N or proc_… id")
    kind: Literal["memory", "procedure"]
    pathway: ExposurePathway
    currency: ExposureCurrency
    parent: str | None = Field(description="associated: the direct memory whose edge added it")
    preview: str = Field(description="the rendered content (or a procedure's goal), ≤120 chars")
    shape: Literal["signals", "flat", "associated"] = Field(
        description="signals: contributions itemised; flat: an older retrieval that kept only "
        "inputs and a score; associated: ordered by edge weight, so no score"
    )
    signals: list[ContributionOut] = Field(
        description="contributions in the order ranking applied them; they sum to `score`"
    )
    score: float | None = Field(description="the final score; null for associated items")
    inputs: dict[str, float] = Field(
        description="raw values of the winning facet (cos, coverage, rrf, temporal, topical, "
        "facet: an index into `facets`); associated items: weight and topical"
    )
    exposed: bool = Field(description="the agent was shown it (an exposure exists)")
    feedback: ItemFeedbackOut | None = Field(description="null when no accepted feedback")


class RetrievalExplanationOut(Out):
    """Why each item ranks where it does, from what the retrieval recorded (nothing re-ranked):
    page one in full and every item shown later, in rank order (per page: direct memories,
    associated ones, procedures); `?all=true` adds items of pages never shown."""

    retrieval_id: str
    kind: RetrievalKind
    scope: str
    session_id: str
    query: str
    cue: str = Field(description="the text ranked against (activate joins task and context)")
    facets: list[str]
    policy_version: str
    policy: dict[str, dict[str, float | int | str | bool]] | None = Field(
        description="the ranking policy's groups and values; null on older retrievals"
    )
    created_at: datetime
    pages: int
    catalogued: int = Field(description="items in the frozen catalog, over all pages")
    exposed: int = Field(description="items the agent was shown")
    all_items: bool
    items: list[ExplainedItemOut]
    signal_names: list[str] = Field(description="signals seen in `items`, in the order applied")
    signal_meanings: dict[str, str] = Field(description="signal name → what it means")


class RetrievalDetailOut(Out):
    retrieval: RetrievalRecord
    exposures: list[RetrievalExposureOut]
    missing_count: int
    explanation: RetrievalExplanationOut


class ProceduresOut(Out):
    procedures: list[ProcedureRecord]
    total: int = Field(description="rows matching the filters, over all pages")
    limit: int
    offset: int


class StatsOut(Out):
    scope: str | None
    memories: int
    memories_by_status: dict[str, int]
    memories_by_stage: dict[str, int]
    memories_by_scope: dict[str, int]
    sessions: int
    open_sessions: int
    events: int
    episodes: int
    prototypes: int
    procedures: int
    retrievals: int
    feedback_events: int
    forget_log: int


class HealthOut(Out):
    status: Literal["ok"]
