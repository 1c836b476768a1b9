"""Cosines of a cue against a batch of memories: whole text and sentence passages alike."""

from __future__ import annotations

import numpy as np

from memory import embeddings, passages
from memory.retrieval import signals
from memory.retrieval.candidates import MemoryRow
from memory.retrieval.policy import RankingPolicy
from memory.retrieval.scored import Cue
from memory.retrieval.scoring import coverage
from memory.text import stems

Cosines = tuple[list[float], list[float]]  # per facet: (admission cosines, ordering cosines)


def memory_cosines(cue: Cue, rows: list[MemoryRow]) -> list[Cosines]:
    """Per memory, the best cosine of its whole text and its passages for each facet, for
    admission and for ordering: four matrix products for the whole batch."""
    n, width = len(rows), len(cue.facets)
    # rank_vectors is set whenever vectors are (engine._encode); checked for the type checker.
    if cue.vectors is None or cue.rank_vectors is None or not n:
        return [([0.0] * width, [0.0] * width)] * n
    whole = np.zeros((n, embeddings.DIMENSIONS), dtype=np.float32)
    parts, owners = [], []
    for i, row in enumerate(rows):
        if row.embedding is not None:
            whole[i] = embeddings.from_blob(row.embedding)
        if (matrix := passages.from_blob(row.passages)) is not None:
            parts.append(matrix)
            owners.extend([i] * len(matrix))
    admit, order = whole @ cue.vectors.T, whole @ cue.rank_vectors.T
    if parts:
        stacked, at = np.concatenate(parts), np.asarray(owners)
        np.maximum.at(admit, at, stacked @ cue.vectors.T)
        np.maximum.at(order, at, stacked @ cue.rank_vectors.T)
    unembedded = [0.0] * width
    return [
        (a, o) if row.embedding is not None else (unembedded, unembedded)
        for row, a, o in zip(rows, admit.tolist(), order.tolist(), strict=True)
    ]


def topicals_against(cue: Cue, rows: list[MemoryRow], policy: RankingPolicy) -> dict[int, float]:
    """Best-facet topical relevance of memories that no channel returned (associations), by
    pk, from one batch of cosines."""
    out: dict[int, float] = {}
    for row, (admit, _) in zip(rows, memory_cosines(cue, rows), strict=True):
        content = stems(row.content, full=policy.stemming.snowball)
        out[row.pk] = max(
            (
                signals.topical(cos, coverage(cue.terms[i], content), policy)
                for i, cos in enumerate(admit)
            ),
            default=0.0,
        )
    return out
