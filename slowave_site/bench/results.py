"""What every retrieval method hands back per question, so baselines and Slowave share metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from slowave_site.bench.locomo_data import Question

MAX_ITEMS = 20  # spec §13.1 step 5: the hypothesis is the first 20 returned items

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def render_date(moment: datetime) -> str:
    """``8 May 2023``: no zero padding, English month names regardless of locale."""
    return f"{moment.day} {_MONTHS[moment.month - 1]} {moment.year}"


def render_item(content: str, occurred_at: datetime | None) -> str:
    """``[D Month YYYY] content`` when the item has a date, else the bare content."""
    return f"[{render_date(occurred_at)}] {content}" if occurred_at else content


@dataclass(frozen=True)
class RankedItem:
    """One returned item, in rank order.

    ``dia_ids`` are the LoCoMo turns behind the item (a turn's memory → its turn; an episode or a
    consolidated memory → all turns it came from). ``text`` is already rendered for the hypothesis.
    """

    text: str
    dia_ids: tuple[str, ...] = ()
    ref: str = ""  # method-specific id: a dia_id for baselines, sch_N / episode id for Slowave
    pathway: str = ""  # Slowave: direct / associated / evidence; baselines: the method name
    score: float | None = None

    @classmethod
    def from_content(
        cls,
        content: str,
        occurred_at: datetime | None,
        dia_ids: tuple[str, ...] | list[str] = (),
        *,
        ref: str = "",
        pathway: str = "",
        score: float | None = None,
    ) -> RankedItem:
        return cls(
            text=render_item(content, occurred_at),
            dia_ids=tuple(dia_ids),
            ref=ref,
            pathway=pathway,
            score=score,
        )


@dataclass
class QuestionResult:
    """A method's answer to one question: up to 20 ranked items plus timed calls.

    ``latency_ms`` maps a call kind to every call's wall time in milliseconds, e.g.
    ``{"recall": [3.1, 2.4], "activate": [5.0]}`` for Slowave (one recall per page followed) or
    ``{"search": [1.2]}`` for a baseline. The first key is the method's primary latency (the one
    shown in the table); all kinds are reported in JSON.
    """

    question: Question
    items: list[RankedItem]
    latency_ms: dict[str, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Only the first 20 items count; trimming here keeps every method comparable.
        self.items = list(self.items[:MAX_ITEMS])
