"""The `data` of the read-only routes' replies, as memory/api/read_data.py shapes it.

Rows are database records (records.py), with datetimes as ISO 8601 strings; a list answers
one page of rows with its `total`, `limit` and `offset`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from memory.models import Exposure, Retrieval, Support
from memory.replies.base import closed
from memory.replies.records import (
    EpisodeRecord,
    EventRecord,
    ForgetLogRecord,
    MemoryRecord,
    MemoryRow,
    ProcedureRecord,
    RetrievalRecord,
    SessionRecord,
)

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


@closed
class MemoriesOut(TypedDict):
    memories: list[MemoryRow]
    total: Annotated[int, Field(description="rows matching the filters, over all pages")]
    limit: int
    offset: int


@closed
class SupportOut(TypedDict):
    kind: SupportKind
    event: EventRecord | None
    episode: EpisodeRecord | None
    session: SessionRecord | None
    scope: str
    weight: float
    created_at: datetime


@closed
class ExposureSeenOut(TypedDict):
    """One time a retrieval showed the memory, and what the agent said about it."""

    retrieval_id: str
    retrieval_kind: RetrievalKind
    session_id: str
    pathway: ExposurePathway
    currency: ExposureCurrency
    rank: int
    exposed_at: datetime
    feedback: Annotated[
        str, Field(description="e.g. `used / helped`, or `unknown (no accepted feedback)`")
    ]
    rejected: Annotated[list[str], Field(description="rejection reasons of refused feedback")]


@closed
class AssociationOut(TypedDict):
    kind: str
    weight: float
    other: Annotated[str, Field(description="sch_N id of the associated memory")]


@closed
class GeneralizationOut(TypedDict):
    stage: int
    stage_name: str
    evidence_scopes: list[str]
    evidence_sessions: int
    scope_kinds: list[str]


@closed
class MemoryEvidenceOut(TypedDict):
    """One memory with its evidence chain, in the order a person reads it."""

    memory: MemoryRecord
    supports: list[SupportOut]
    sessions: list[SessionRecord]
    exposures: list[ExposureSeenOut]
    superseded_by: str | None
    duplicate_of: str | None
    supersedes: list[str]
    duplicates: list[str]
    associations: Annotated[list[AssociationOut], Field(max_length=50)]
    generalization: GeneralizationOut
    forget_log: list[ForgetLogRecord]


@closed
class SessionsOut(TypedDict):
    sessions: list[SessionRecord]
    total: Annotated[int, Field(description="rows matching the filters, over all pages")]
    limit: int
    offset: int


@closed
class GapOut(TypedDict):
    retrieval_id: str
    memory_ids: list[str]
    procedure_ids: list[str]
    coverage_declared_complete: bool


@closed
class SessionRetrievalOut(TypedDict):
    id: str
    kind: RetrievalKind
    exposed: int
    gap: Annotated[
        GapOut | None, Field(description="what still lacks feedback; null when complete")
    ]


@closed
class SessionDetailOut(TypedDict):
    session: SessionRecord
    events: list[EventRecord]
    retrievals: list[SessionRetrievalOut]
    feedback_complete: bool
    memories: Annotated[
        list[str], Field(description="sch_N ids of the memories this session stored")
    ]
    procedure: str | None


@closed
class RetrievalExposureOut(TypedDict):
    target_kind: Literal["memory", "procedure"]
    target_id: str
    pathway: ExposurePathway
    rank: int
    feedback: str
    missing: Annotated[bool, Field(description="no accepted feedback yet")]


@closed
class SignalContributionOut(TypedDict):
    signal: Annotated[
        str, Field(description="a ranking signal; what each means: `signal_meanings`")
    ]
    value: Annotated[float, Field(description="what it added to the score (negative: took away)")]


@closed
class ItemFeedbackOut(TypedDict):
    event_id: Annotated[
        str, Field(description="fbe_… id of the latest accepted feedback on the item")
    ]
    label: Annotated[
        str, Field(description="e.g. `used / helped`, `stale / outdated`, `used / harmed`")
    ]
    created_at: datetime


@closed
class ExplainedItemOut(TypedDict):
    """One catalogued item: where it ranked and every contribution to its score."""

    rank: Annotated[
        int, Field(description="1-based position in the frozen catalog (the exposure's rank)")
    ]
    page: Annotated[int, Field(description="0-based page index, as exposures and cursors count")]
    ref: Annotated[str, Field(description="sch_N, proc_… or (imported history) ep_N id")]
    kind: Literal["memory", "procedure", "episode"]
    pathway: ExposurePathway
    currency: ExposureCurrency
    parent: Annotated[
        str | None, Field(description="associated: the direct memory whose edge added it")
    ]
    preview: Annotated[
        str, Field(description="the rendered content (or a procedure's goal), ≤120 chars")
    ]
    shape: Annotated[
        Literal["signals", "flat", "associated"],
        Field(
            description="signals: contributions itemised; flat: an older retrieval that kept only "
            "inputs and a score; associated: ordered by edge weight, so no score"
        ),
    ]
    signals: Annotated[
        list[SignalContributionOut],
        Field(description="contributions in the order ranking applied them; they sum to `score`"),
    ]
    score: Annotated[float | None, Field(description="the final score; null for associated items")]
    inputs: Annotated[
        dict[str, float],
        Field(
            description="raw values of the winning facet (cos, coverage, rrf, temporal, topical, "
            "facet: an index into `facets`); associated items: weight and topical"
        ),
    ]
    exposed: Annotated[bool, Field(description="the agent was shown it (an exposure exists)")]
    feedback: Annotated[ItemFeedbackOut | None, Field(description="null when no accepted feedback")]


@closed
class RetrievalExplanationOut(TypedDict):
    """Why each item ranks where it does, from what the retrieval recorded (nothing re-ranked):
    page one in full and every item shown later, in rank order (per page: direct memories,
    associated ones, procedures); `?all=true` adds items of pages never shown."""

    retrieval_id: str
    kind: RetrievalKind
    scope: str
    session_id: str
    query: str
    cue: Annotated[
        str, Field(description="the text ranked against (activate joins task and context)")
    ]
    facets: list[str]
    policy_version: str
    policy: Annotated[
        dict[str, dict[str, float | int | str | bool]] | None,
        Field(description="the ranking policy's groups and values; null on older retrievals"),
    ]
    created_at: datetime
    pages: int
    catalogued: Annotated[int, Field(description="items in the frozen catalog, over all pages")]
    exposed: Annotated[int, Field(description="items the agent was shown")]
    all_items: bool
    items: list[ExplainedItemOut]
    signal_names: Annotated[
        list[str], Field(description="signals seen in `items`, in the order applied")
    ]
    signal_meanings: Annotated[dict[str, str], Field(description="signal name → what it means")]


@closed
class RetrievalDetailOut(TypedDict):
    retrieval: RetrievalRecord
    exposures: list[RetrievalExposureOut]
    missing_count: int
    explanation: RetrievalExplanationOut


@closed
class ProceduresOut(TypedDict):
    procedures: list[ProcedureRecord]
    total: Annotated[int, Field(description="rows matching the filters, over all pages")]
    limit: int
    offset: int


@closed
class StatsOut(TypedDict):
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


@closed
class HealthOut(TypedDict):
    status: Literal["ok"]
