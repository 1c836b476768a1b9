"""What ranking works on: the prepared cue, and one candidate with every contribution to its score.

A Scored item's score is the sum of its recorded signals, in the order they were applied; the
snapshot a Retrieval keeps (`details`) holds them with the raw inputs of the winning facet, so
`slowave explain` can say why an item ranks where it does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from memory.models import Procedure
from memory.retrieval.candidates import EpisodeRow, MemoryRow
from memory.retrieval.scoring import FacetTerms
from memory.retrieval.temporal import Window

T = TypeVar("T", MemoryRow, EpisodeRow, Procedure)


@dataclass
class Cue:
    """A cue ready to rank with: facets, their vectors and query terms, the request scope."""

    scope: str
    facets: list[str]
    vectors: np.ndarray | None
    window: Window | None
    terms: list[FacetTerms]
    words: frozenset[str] = frozenset()
    # Vectors of the facets without speaker names: they order items, `vectors` admit them.
    rank_vectors: np.ndarray | None = None
    named: frozenset[str] = frozenset()  # speakers of the scope the cue names
    imported: bool = False  # the scope holds an imported history (its turns rank as history)
    # Session id -> how well the session as a whole matches (1.0 = best; sessions.py).
    session_strength: dict[str, float] = field(default_factory=dict)
    # Some cue term is found in few enough items to tell them apart (magnitude fusion).
    discriminative: bool = True
    long_history: bool = False  # the scope holds enough sessions to spread over (sessions.py)
    past: bool = False  # the cue asks what happened, not how things stand (tense.py)
    many: bool = False  # the cue asks for a list ("which decorators ...", tense.py)
    expects: str | None = None  # the kind of answer it asks for ("duration", answers.py)


@dataclass
class Scored(Generic[T]):
    obj: T
    vector: np.ndarray | None
    facet: int = -1
    score: float = 0.0
    topical: float = 0.0  # best-facet absolute relevance: what admission reads
    facet_topical: list[float] = field(default_factory=list)
    inputs: dict[str, float] = field(default_factory=dict)  # raw values of the winning facet
    signals: list[tuple[str, float]] = field(default_factory=list)
    context: float = 0.0  # best topical of a neighbouring turn (recall only)
    reply: float = 0.0  # how far the question just before it matched beyond reply_from

    def add(self, name: str, value: float) -> None:
        """Record one contribution; nothing is added to the score unrecorded."""
        if value:
            self.signals.append((name, value))
            self.score += value

    def add_all(self, contributions: list[tuple[str, float]]) -> None:
        """`add` each (name, value) in order."""
        for name, value in contributions:
            if value:
                self.signals.append((name, value))
                self.score += value

    @property
    def details(self) -> dict[str, object]:
        """The snapshot kept per exposure: inputs, contributions in order, the final score."""
        return {
            "inputs": {k: round(v, 4) for k, v in self.inputs.items()},
            "signals": [[name, round(value, 4)] for name, value in self.signals],
            "score": round(self.score, 4),
        }
