"""The retrieval cue and its facets (spec §7.1), and how much of a long cue retrieval reads."""

from __future__ import annotations

import re
from typing import Any

from memory.text import tokens

MAX_FACETS = 32
MIN_FACET_TOKENS = 3
# A cue up to HEAVY_CUE_CHARS is ranked as it always was. A longer one (a pasted document as
# the task) is heavy: its facets are embedded in small batches that let a short call's embedding
# go first (memory.embeddings), and retrieval reads only its first WORKING_CUE_CHARS. The
# fields' limits (memory.schemas, spec §14) stay the hard bound on what a call may send; past
# the first 32 facets and the model's 256 tokens a text, the rest of a long cue only added query
# terms, each one more index lookup and a longer coverage sum for every candidate.
HEAVY_CUE_CHARS = 2_000
WORKING_CUE_CHARS = 8_000
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\(?\d+[.)]|\(?[a-z][.)])\s+", re.IGNORECASE)
_INLINE_LIST = re.compile(r"\s(?=\(?\d+[.)]\s)")


def flatten_context(context: dict[str, Any] | None) -> str:
    """`key: value` lines for a task_context, nested keys dotted."""
    lines: list[str] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, list):
            lines.append(f"{prefix}: " + ", ".join(str(v) for v in value))
        elif value is not None:
            lines.append(f"{prefix}: {value}")

    walk("", context or {})
    return "\n".join(lines)


def build_cue(*parts: str | None) -> str:
    return "\n".join(p.strip() for p in parts if p and p.strip())


def working_cue(cue: str) -> tuple[str, bool]:
    """The part of a cue retrieval reads, and whether anything was left out: the first
    WORKING_CUE_CHARS characters, cut at a space or line break so no word is halved."""
    if len(cue) <= WORKING_CUE_CHARS:
        return cue, False
    head = cue[:WORKING_CUE_CHARS]
    space = max(head.rfind(" "), head.rfind("\n"))
    return (head[:space] if space > WORKING_CUE_CHARS // 2 else head).strip(), True


def split_facets(cue: str) -> tuple[list[str], bool]:
    """Facets of a cue, whole cue last; True when facets were capped."""
    fragments: list[str] = []
    for line in cue.splitlines():
        for piece in _INLINE_LIST.split(line):
            piece = _LIST_MARKER.sub("", piece)
            for part in re.split(r"(?<=\?)|;", piece):
                if part.strip():
                    fragments.append(part.strip())
    facets: list[str] = []
    for fragment in fragments:
        if facets and len(tokens(fragment)) < MIN_FACET_TOKENS:
            facets[-1] = f"{facets[-1]} {fragment}"
        else:
            facets.append(fragment)
    truncated = len(facets) > MAX_FACETS
    facets = facets[:MAX_FACETS]
    whole = cue.strip()
    if len(facets) <= 1:
        return [whole], truncated
    return [*facets, whole], truncated
