"""Exact top-k over float32 matrices, shared by the numpy backend and sqlite-vec's copy."""

from __future__ import annotations

import numpy as np


def units(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; a zero row becomes NaN, which `top` never returns: it has no
    cosine, as sqlite-vec, answering NULL, says."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, np.nan).astype(np.float32)


def top(keys: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k highest scores, best first, ties broken by the smaller key (the
    sqlite-vec order). Every score equal to the k-th is a candidate, so the tie break holds
    at the cut too. A score that is not finite (NaN: a stored vector holding NaN) is never
    among them."""
    finite = np.isfinite(scores)
    if not finite.all():
        kept = np.flatnonzero(finite)
        return kept[top(keys[kept], scores[kept], k)]
    if len(scores) > k:
        cut = len(scores) - k
        candidates = np.flatnonzero(scores >= np.partition(scores, cut)[cut])
        order = np.lexsort((keys[candidates], -scores[candidates]))[:k]
        return candidates[order]
    return np.lexsort((keys, -scores))
