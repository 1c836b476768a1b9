"""The pure clustering maths: incremental joins, agglomerative groups, medoids, determinism."""

from __future__ import annotations

import numpy as np

from consolidation import clustering


def _unit(*rows: list[float]) -> np.ndarray:
    return clustering.normalise(np.array(rows, dtype=np.float64)).astype(np.float32)


def test_it_joins_the_nearest_prototype_above_the_threshold_and_moves_its_centroid():
    sums = _unit([1, 0, 0], [0, 1, 0]).astype(np.float64)
    vectors = _unit([0.95, 0.05, 0], [0.1, 0.9, 0], [0, 0, 1])
    result = clustering.assign_incremental(vectors, sums, np.array([1, 1]))
    assert result.joined == {0: 0, 1: 1} and result.rest == [2]
    assert list(result.counts) == [2, 2]
    assert np.allclose(result.sums[0], sums[0] + vectors[0])


def test_it_sees_centroids_move_within_one_pass():
    # The second vector is below 0.80 to the original centroid but above it once the first joined.
    sums = _unit([1, 0, 0]).astype(np.float64)
    vectors = _unit([0.8, 0.6, 0], [0.6, 0.8, 0])
    direct = clustering.normalise(sums)[0] @ clustering.normalise(vectors[1:])[0]
    assert direct < clustering.JOIN_COSINE
    result = clustering.assign_incremental(vectors, sums, np.array([1]))
    assert result.joined == {0: 0, 1: 0}


def test_it_leaves_everything_over_when_there_are_no_prototypes():
    result = clustering.assign_incremental(_unit([1, 0], [0, 1]), np.zeros((0, 2)), np.zeros(0))
    assert result.joined == {} and result.rest == [0, 1]


def test_it_clusters_by_cosine_distance_with_singletons_and_canonical_order():
    vectors = _unit([0, 0, 1], [1, 0, 0], [0.98, 0.02, 0], [0.97, 0.03, 0.01])
    assert clustering.cluster(vectors) == [[0], [1, 2, 3]]
    assert clustering.cluster(vectors[:1]) == [[0]] and clustering.cluster(vectors[:0]) == []


def test_it_is_deterministic_for_the_same_data():
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(5, 16))
    vectors = clustering.normalise(
        np.repeat(centres, 20, axis=0) + rng.normal(scale=0.15, size=(100, 16))
    )
    first, second = clustering.cluster(vectors), clustering.cluster(vectors.copy())
    assert first == second and len(first) == 5


def test_it_picks_the_medoid_nearest_the_centroid_with_ties_to_the_lowest_id():
    vectors = _unit([1, 0], [0.9, 0.1], [0.9, 0.1])
    centroid = np.array([0.9, 0.1])
    assert clustering.medoid(vectors, centroid, [30, 20, 10]) == 2
    assert clustering.medoid(vectors, np.array([1.0, 0.0]), [30, 20, 10]) == 0


def test_it_keeps_zero_vectors_apart_instead_of_failing():
    vectors = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 0]], dtype=np.float32)
    assert clustering.cluster(vectors) == [[0], [1, 2]]
