"""Clustering maths for the prototype pass (spec §8.3, pass 3): numpy and scikit-learn only.

Nothing here touches the database; the service in consolidation.services.prototypes loads
vectors, calls these functions and writes the result. Every function is deterministic for the
same input order, which the service fixes (episodes in id order, prototypes in id order).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

JOIN_COSINE = 0.80
DISTANCE_THRESHOLD = 0.25
MAX_NEW_PER_PASS = 2_000
BLOCK = 256


def normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero (they match nothing)."""
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


@dataclass
class Assignment:
    """Outcome of incremental assignment: who joined which prototype, and who is left over."""

    joined: dict[int, int] = field(default_factory=dict)  # episode row -> prototype row
    rest: list[int] = field(default_factory=list)  # episode rows that joined nothing
    sums: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def assign_incremental(
    vectors: np.ndarray, sums: np.ndarray, counts: np.ndarray, *, threshold: float = JOIN_COSINE
) -> Assignment:
    """Each vector, in order, joins its nearest prototype when cosine >= threshold.

    A join moves that prototype's centroid at once, so a later vector sees the updated centroid;
    this sequential rule is what makes the result depend only on the (fixed) input order.
    Similarities are computed a block at a time and only the moved centroid's column is
    refreshed after a join, which gives the sequential result at matrix-multiply speed.
    """
    sums = np.array(sums, dtype=np.float64, copy=True)  # shape (prototypes, dimensions)
    counts = np.array(counts, dtype=np.int64, copy=True)
    result = Assignment(sums=sums, counts=counts)
    if len(sums) == 0:
        result.rest = list(range(len(vectors)))
        return result
    centroids = normalise(sums)
    for start in range(0, len(vectors), BLOCK):
        # Block by block in float64: converting 100k float32 rows at once would double peak memory.
        block = np.asarray(vectors[start : start + BLOCK], dtype=np.float64)
        sims = block @ centroids.T
        for offset in range(len(block)):
            best = int(np.argmax(sims[offset]))  # first maximum: ties go to the older prototype
            if sims[offset, best] < threshold:
                result.rest.append(start + offset)
                continue
            sums[best] += block[offset]
            counts[best] += 1
            centroids[best] = normalise(sums[best])[0]
            sims[offset + 1 :, best] = block[offset + 1 :] @ centroids[best]
            result.joined[start + offset] = best
    return result


def cluster(vectors: np.ndarray, *, threshold: float = DISTANCE_THRESHOLD) -> list[list[int]]:
    """Average-linkage agglomerative clusters under a cosine distance threshold.

    Returns groups of row indexes, each sorted, the groups ordered by their first row, so the
    numbering of sklearn's labels (arbitrary) never leaks into what the caller creates.
    """
    count = len(vectors)
    if count == 0:
        return []
    if count == 1:
        return [[0]]
    # Imported here: scikit-learn (with scipy) takes seconds to import, and every process that
    # registers the tasks (mcp_serve included) imports this module without ever clustering.
    from sklearn.cluster import AgglomerativeClustering

    unit = normalise(vectors)
    # Precomputed distances: the same cosine distance sklearn would compute, but zero vectors
    # (which the cosine metric rejects) simply sit at distance 1 from everything.
    distances = np.clip(1.0 - unit @ unit.T, 0.0, 2.0)
    np.fill_diagonal(distances, 0.0)
    labels = AgglomerativeClustering(
        n_clusters=None, metric="precomputed", linkage="average", distance_threshold=threshold
    ).fit_predict(distances)
    groups: dict[int, list[int]] = {}
    for row, label in enumerate(labels):
        groups.setdefault(int(label), []).append(row)
    return sorted(groups.values(), key=lambda group: group[0])


def medoid(vectors: np.ndarray, centroid: np.ndarray, ids: list[int]) -> int:
    """Position of the member nearest the centroid; exact ties go to the lowest id."""
    sims = normalise(vectors) @ normalise(centroid)[0]
    order = np.lexsort((np.asarray(ids), -sims))
    return int(order[0])
