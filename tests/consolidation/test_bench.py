"""The clustering benchmark runs on its own scratch database and reports a rate and peak RSS."""

from __future__ import annotations

from django.db import connections

from slowave_site.bench.clustering import run, synthetic_vectors


def test_it_reports_the_clustering_rate_on_a_scratch_database(django_db_blocker):
    with django_db_blocker.unblock():
        before = connections["default"].settings_dict["NAME"]
        report = run(400, scopes=2)
        assert connections["default"].settings_dict["NAME"] == before
    assert (report["episodes"], report["scopes"], report["pass_runs"]) == (400, 2, 1)
    assert report["episodes_per_second"] > 0 and report["peak_rss_mb"] > 0
    # 20 topics (two scopes of ten) of near-duplicates become multi-member prototypes.
    assert report["prototypes_with_several_members"] == 20


def test_it_draws_topics_of_near_duplicates_and_unrelated_loners():
    import numpy as np

    vectors = synthetic_vectors(200, np.random.default_rng(1))
    sims = vectors @ vectors.T
    assert vectors.shape == (200, 384) and np.allclose(
        np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5
    )
    assert (sims > 0.75).sum() > 200 * 3  # each topic member has several close neighbours
