"""Why each item of a retrieval ranks where it does: `retrieval_explain` (a read, for the CLI
`slowave explain`, the admin retrieval page and `GET /api/retrievals/{id}`).

Everything comes from what the retrieval froze: its catalog holds, per item, the ranking
inputs of the winning facet and each signal's contribution in the order ranking applied it
(memory/retrieval/scored.py `details`). Nothing is re-ranked here, so an explanation stays true
to what the agent was shown even after the store or the policy has moved on. What each signal
means is documented where it is computed (memory/retrieval/signals.py, ordering.py,
procedures.py); signals.MEANINGS is the one-line gloss people read next to the numbers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, cast

from memory.errors import NotFound
from memory.models import Exposure, Retrieval
from memory.retrieval.signals import MEANINGS as SIGNAL_MEANINGS
from memory.selectors.inspection import feedback_by_target, feedback_label

if TYPE_CHECKING:
    from memory.replies.reads import RetrievalExplanationOut

Shape = Literal["signals", "flat", "associated"]
# Policy values as JSON keeps them: numbers mostly, a few flags or names.
PolicyValue = float | int | str | bool

SIGNAL_ORDER = tuple(SIGNAL_MEANINGS)


@dataclass(frozen=True)
class Contribution:
    signal: str
    value: float


@dataclass(frozen=True)
class ItemFeedback:
    """The latest accepted feedback the retrieval got about one item."""

    event_id: str
    label: str  # e.g. "used / helped", "stale / outdated", "used / harmed" for a procedure
    created_at: datetime


@dataclass(frozen=True)
class ExplainedItem:
    rank: int  # position in the frozen catalog, 1-based across pages (the Exposure's rank)
    page: int  # 0-based page index, as Exposure.page and cursors count
    ref: str
    kind: str  # memory | procedure
    pathway: str  # direct | associated
    currency: str  # current | historical
    parent: str | None  # associated: the direct item whose edge brought it in
    preview: str
    shape: Shape  # signals: itemised; flat: recorded before itemising; associated: edge only
    signals: list[Contribution]
    score: float | None  # the final score; None for associated items (ordered by edge)
    inputs: dict[str, float]
    exposed: bool
    feedback: ItemFeedback | None

    def contribution(self, signal: str) -> float | None:
        """The item's total from one signal, None when it did not move it."""
        values = [c.value for c in self.signals if c.signal == signal]
        return sum(values) if values else None


@dataclass(frozen=True)
class RetrievalExplanation:
    retrieval_id: str
    kind: str  # activate | recall
    scope: str
    session_id: str
    query: str
    cue: str  # what was ranked against (activate: task, goal and context together)
    facets: list[str]
    policy_version: str
    policy: dict[str, dict[str, PolicyValue]] | None  # absent on retrievals before it was kept
    created_at: datetime
    pages: int
    catalogued: int
    exposed: int
    all_items: bool
    items: list[ExplainedItem]
    signal_names: list[str]  # every signal seen in `items`, in the order ranking applies them
    signal_meanings: dict[str, str]  # of those signals, what each means

    def as_data(self) -> RetrievalExplanationOut:
        # The fields are RetrievalExplanationOut's keys (tests/api/test_replies.py checks).
        return cast("RetrievalExplanationOut", asdict(self))

    def rows(self) -> list[tuple[ExplainedItem, list[float | None]]]:
        """Each item with its contribution per `signal_names` column (None: not moved by it),
        for a table with one column per signal (the admin's)."""
        return [(item, [item.contribution(n) for n in self.signal_names]) for item in self.items]


def retrieval_explain(*, retrieval_id: str, all_items: bool = False) -> RetrievalExplanation:
    """Every catalogued item of page one and every exposed item after it, in rank order (page
    by page: direct memories, then associated, then procedures); `all_items` adds the items of
    later pages the agent never paged to."""
    retrieval = Retrieval.objects.filter(pk=retrieval_id).first()
    if retrieval is None:
        raise NotFound(
            f"no retrieval {retrieval_id}; ids (ctx_… for activate, rec_… for recall) come "
            "back as retrieval_id from each call, and `slowave show sess_…` or the admin's "
            "Retrievals page lists them"
        )
    exposed = set(retrieval.exposures.values_list("target_kind", "target_id"))
    items = [
        item
        for item in _catalog_items(retrieval, exposed)
        if all_items or item.page == 0 or item.exposed
    ]
    policy = retrieval.params.get("policy")
    names = _signal_names(items)
    return RetrievalExplanation(
        retrieval_id=retrieval.pk,
        kind=retrieval.kind,
        scope=retrieval.scope,
        session_id=retrieval.session_id,
        query=retrieval.query,
        cue=str(retrieval.params.get("cue") or retrieval.query),
        facets=list(retrieval.facets),
        policy_version=retrieval.policy_version,
        policy=cast("dict[str, dict[str, PolicyValue]]", policy) if policy else None,
        created_at=retrieval.created_at,
        pages=len(retrieval.catalog.get("pages", [])),
        catalogued=_catalogued(retrieval),
        exposed=len(exposed),
        all_items=all_items,
        items=items,
        signal_names=names,
        signal_meanings={name: SIGNAL_MEANINGS.get(name, "") for name in names},
    )


def _catalogued(retrieval: Retrieval) -> int:
    pages = retrieval.catalog.get("pages", [])
    return sum(len(p.get("memories", [])) + len(p.get("procedures", [])) for p in pages)


def _catalog_items(retrieval: Retrieval, exposed: set[tuple[str, str]]) -> list[ExplainedItem]:
    feedback = feedback_by_target([retrieval.pk])
    out: list[ExplainedItem] = []
    for index, page in enumerate(retrieval.catalog.get("pages", [])):
        # Memories are stored direct first, then the page's associated neighbours.
        for entry in [*page.get("memories", []), *page.get("procedures", [])]:
            key = (entry["kind"], entry["ref"])
            out.append(
                _item(
                    entry, len(out) + 1, index, key in exposed, feedback.get((retrieval.pk, *key))
                )
            )
    return out


def _item(
    entry: dict[str, Any], rank: int, page: int, exposed: bool, feedback: dict[str, Any] | None
) -> ExplainedItem:
    shape, signals, score, inputs = _read_scores(entry)
    latest = feedback["latest"] if feedback else None
    return ExplainedItem(
        rank=rank,
        page=page,
        ref=entry["ref"],
        kind=entry["kind"],
        pathway=entry["pathway"],
        currency=entry.get("currency", Exposure.Currency.CURRENT),
        parent=entry.get("parent"),
        preview=_preview(entry.get("payload", {})),
        shape=shape,
        signals=signals,
        score=score,
        inputs=inputs,
        exposed=exposed,
        feedback=(
            ItemFeedback(latest.pk, feedback_label(feedback), latest.created_at)
            if latest is not None
            else None
        ),
    )


def _read_scores(
    entry: dict[str, Any],
) -> tuple[Shape, list[Contribution], float | None, dict[str, float]]:
    """The three shapes a catalog has held: itemised signals, the flat shape older retrievals
    kept (inputs and a score), and an associated item's edge weight and topical."""
    scores: dict[str, Any] = entry.get("scores") or {}
    if "signals" in scores:
        signals = [Contribution(str(name), float(value)) for name, value in scores["signals"]]
        return "signals", signals, float(scores["score"]), dict(scores.get("inputs", {}))
    if entry.get("pathway") == Exposure.Pathway.ASSOCIATED:
        return "associated", [], None, dict(scores)
    inputs = {k: v for k, v in scores.items() if k != "score"}
    score = scores.get("score")
    return "flat", [], float(score) if score is not None else None, inputs


PREVIEW_CHARS = 120


def _preview(payload: dict[str, Any]) -> str:
    """A memory's (rendered) content or a procedure's goal, on one line."""
    text = payload.get("content") or payload.get("goal") or payload.get("summary") or ""
    text = " ".join(str(text).split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _signal_names(items: list[ExplainedItem]) -> list[str]:
    seen = {c.signal for item in items for c in item.signals}
    # A signal added to ranking after SIGNAL_MEANINGS still shows, after the known ones.
    unknown = sorted(seen - set(SIGNAL_ORDER))
    return [name for name in SIGNAL_ORDER if name in seen] + unknown
