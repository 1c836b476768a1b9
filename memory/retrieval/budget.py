"""Pages packed to an agent's token budget (`max_tokens` of activate and recall).

Tokens are the contract's estimate, ceil(chars / 4) of each item's serialised payload: the
figure `accessible_field.approx_extra_tokens` sums over later pages, so what "fits" a page
here and what the contract announces agree. Without a budget `paging.build_pages` alone
decides; this module only runs when an agent asked for one.

A page fills in rank order, each list stopping at its first item that does not fit (that
item opens the next page): direct memories, then procedures in what they leave, then
associated memories of the page's direct ones. A page's first memory is never skipped for
being long: it is cut to its best-matching sentences, marked `content_truncated`, with the
length it had in `content_chars`. A procedure is never cut (its steps and caveats only read
whole): one larger than the whole budget travels alone on a page of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from memory.retrieval.paging import (
    CHARS_PER_TOKEN,
    CONTENT_LIMIT,
    Entry,
    Page,
    excerpt,
    page_neighbours,
    size,
)
from memory.retrieval.policy import Paging

T = TypeVar("T", bound=Mapping[str, Any])


@dataclass(frozen=True)
class Budget:
    """A page's allowance, and the cue a cut memory keeps the best-matching sentences of."""

    max_tokens: int
    query: str

    @property
    def chars(self) -> int:
        return self.max_tokens * CHARS_PER_TOKEN


def build_budget_pages(
    direct: list[Entry],
    procedures: list[Entry],
    associated: dict[str, list[Entry]],
    paging: Paging,
    budget: Budget,
) -> list[Page]:
    direct = [_marked(e) for e in direct]
    associated = {ref: [_marked(e) for e in found] for ref, found in associated.items()}
    pages: list[Page] = []
    m_at = p_at = 0
    shown = {e.ref for e in direct}
    while True:
        page = Page(memory_offset=m_at, procedure_offset=p_at)
        room = budget.chars
        memories = _fill(direct, m_at, paging.memory_items, paging.memory_chars, room, budget)
        room -= sum(e.chars for e in memories)
        procs = _fill(
            procedures,
            p_at,
            paging.procedure_items,
            paging.procedure_chars,
            room,
            budget if not memories else None,
        )
        room -= sum(e.chars for e in procs)
        near = page_neighbours(memories, associated, shown, paging.associated_per_page, room)
        page.memories = [e.as_json() for e in [*memories, *near]]
        page.procedures = [e.as_json() for e in procs]
        pages.append(page)
        m_at, p_at = m_at + len(memories), p_at + len(procs)
        if m_at >= len(direct) and p_at >= len(procedures):
            return pages


def _fill(
    entries: list[Entry],
    start: int,
    max_items: int,
    max_chars: int,
    room: int,
    lead: Budget | None,
) -> list[Entry]:
    """Entries from `start`, in order, while they fit `room` and the policy's page caps.

    `lead`: the page is still empty, so a first entry larger than the room is shown anyway
    (a memory cut to fit it) rather than pushed on forever."""
    chosen: list[Entry] = []
    used = 0
    for entry in entries[start : start + max_items]:
        if used + entry.chars <= room and (not chosen or used + entry.chars <= max_chars):
            chosen.append(entry)
            used += entry.chars
            continue
        if lead is not None and not chosen:
            cuttable = entry.kind in ("memory", "episode")
            chosen.append(_cut(entry, room, lead.query) if cuttable else entry)
        break
    return chosen


def _marked(entry: Entry) -> Entry:
    """Under a budget every shortened memory says how long it was (`content_chars`)."""
    if not entry.payload.get("content_truncated") or "content_chars" in entry.payload:
        return entry
    payload = {**entry.payload, "content_chars": len(entry.source or entry.payload["content"])}
    return replace(entry, payload=payload, _chars=None)


def _cut(entry: Entry, room: int, query: str) -> Entry:
    """The memory with its content cut to its best-matching sentences so it fits `room`."""
    source = entry.source or entry.payload["content"]
    base = {**entry.payload, "content": "", "content_truncated": True}
    base["content_chars"] = len(source)
    limit = min(room - size(base), CONTENT_LIMIT)
    while True:
        content, _ = excerpt(source, query, max(limit, 0))
        payload = {**base, "content": content}
        over = size(payload) - room
        # JSON escapes (quotes, newlines) make content longer serialised than as text.
        if over <= 0 or limit <= 0:
            return replace(entry, payload=payload, _chars=None)
        limit -= over


def evidence_within(items: list[T], room: int) -> tuple[list[T], bool]:
    """Recall's evidence, in order, while it fits what page one's items left of the budget;
    True when some was left out."""
    kept: list[T] = []
    for item in items:
        cost = size(item)
        if cost > room:
            break
        kept.append(item)
        room -= cost
    return kept, len(kept) < len(items)
