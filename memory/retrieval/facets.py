"""The retrieval cue and its facets (spec §7.1)."""

from __future__ import annotations

import re
from typing import Any

from memory.text import tokens

MAX_FACETS = 32
MIN_FACET_TOKENS = 3
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
