"""Rendering and page packing of a frozen catalog (spec §6.7)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from memory.retrieval.policy import DEFAULT_POLICY, Paging
from memory.text import stems

if TYPE_CHECKING:
    from memory.replies.verbs import AccessibleField

# Rendering, not ranking: an excerpt is the same whatever policy ranked the item.
CONTENT_LIMIT = DEFAULT_POLICY.paging.content_limit
# The contract's token estimate (accessible_field, max_tokens budgets): serialised chars / 4.
CHARS_PER_TOKEN = 4
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def size(payload: Mapping[str, Any]) -> int:
    return len(json.dumps(payload, ensure_ascii=False, sort_keys=True))


def approx_tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def excerpt(content: str, query: str, limit: int = CONTENT_LIMIT) -> tuple[str, bool]:
    """Content ≤ `limit` chars: the sentences sharing most query terms, in original order."""
    if len(content) <= limit:
        return content, False
    wanted = stems(query)
    sentences = _SENTENCE.split(content)
    ranked = sorted(range(len(sentences)), key=lambda i: (-len(stems(sentences[i]) & wanted), i))
    chosen: list[int] = []
    used = 0
    for i in ranked:
        cost = len(sentences[i]) + (1 if chosen else 0)
        if used + cost <= limit:
            chosen.append(i)
            used += cost
    if not chosen:
        return sentences[ranked[0]][:limit], True
    return " ".join(sentences[i] for i in sorted(chosen)), True


@dataclass
class Entry:
    """One catalog item: its reference, ranking facts and rendered payload."""

    ref: str
    kind: str
    pathway: str
    currency: str
    scores: dict[str, object]
    payload: dict[str, Any]
    parent: str | None = None
    weight: float = 0.0
    # A memory's whole text, for cutting it to a token budget; never frozen in the catalog.
    source: str = ""
    _chars: int | None = None

    @property
    def chars(self) -> int:
        """Serialised payload size, computed once (pages and accessible_field both need it)."""
        if self._chars is None:
            self._chars = size(self.payload)
        return self._chars

    def as_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "kind": self.kind,
            "pathway": self.pathway,
            "currency": self.currency,
            "scores": self.scores,
            "payload": self.payload,
            "parent": self.parent,
            "chars": self.chars,
        }


@dataclass
class Page:
    memories: list[dict[str, Any]] = field(default_factory=list)
    procedures: list[dict[str, Any]] = field(default_factory=list)
    memory_offset: int = 0
    procedure_offset: int = 0


def _pack(entries: list[Entry], start: int, max_items: int, max_chars: int) -> int:
    """Index after the last entry that fits a page starting at start."""
    end, used = start, 0
    while end < len(entries) and end - start < max_items:
        cost = entries[end].chars
        if end > start and used + cost > max_chars:
            break
        used += cost
        end += 1
    return end


def build_pages(
    direct: list[Entry],
    procedures: list[Entry],
    associated: dict[str, list[Entry]],
    paging: Paging = DEFAULT_POLICY.paging,
) -> list[Page]:
    pages: list[Page] = []
    m_at = p_at = 0
    shown = {e.ref for e in direct}
    while True:
        m_end = _pack(direct, m_at, paging.memory_items, paging.memory_chars)
        p_end = _pack(procedures, p_at, paging.procedure_items, paging.procedure_chars)
        page = Page(memory_offset=m_at, procedure_offset=p_at)
        page.memories = [e.as_json() for e in direct[m_at:m_end]]
        near = page_neighbours(direct[m_at:m_end], associated, shown, paging.associated_per_page)
        page.memories += [e.as_json() for e in near]
        page.procedures = [e.as_json() for e in procedures[p_at:p_end]]
        pages.append(page)
        m_at, p_at = m_end, p_end
        if m_at >= len(direct) and p_at >= len(procedures):
            return pages


def page_neighbours(
    page: list[Entry],
    associated: dict[str, list[Entry]],
    shown: set[str],
    per_page: int,
    room: int | None = None,
) -> list[Entry]:
    """Associated memories of a page's direct ones, best first; with `room` (chars left of a
    token budget) only while they fit."""
    # The parent's final score (spec §7.5.4: weight × parent score).
    parent_score = {e.ref: cast(float, e.scores.get("score", 0.0)) for e in page}
    options = [n for e in page for n in associated.get(e.ref, [])]
    # Associated entries always carry the ref of the entry they hang off.
    options.sort(key=lambda n: (-(n.weight * parent_score[cast(str, n.parent)]), n.ref))
    chosen: list[Entry] = []
    for entry in options:
        if entry.ref in shown:
            continue
        if room is not None:
            if entry.chars > room:
                break
            room -= entry.chars
        shown.add(entry.ref)
        chosen.append(entry)
        if len(chosen) == per_page:
            break
    return chosen


def accessible_field(pages: list[dict[str, Any]], index: int) -> AccessibleField:
    rest = pages[index + 1 :]
    memories = [m for p in rest for m in p["memories"]]
    procedures = [p for page in rest for p in page["procedures"]]
    if not memories and not procedures:
        return {}
    kinds = sorted({m["pathway"] for m in memories}) + (["procedure"] if procedures else [])
    chars = sum(item.get("chars") or size(item["payload"]) for item in memories + procedures)
    return {
        "extra_candidates": len(memories) + len(procedures),
        "kinds": kinds,
        "approx_extra_tokens": approx_tokens(chars),
    }
