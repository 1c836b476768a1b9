"""Pure helpers: normalisation, tokens, facets, temporal windows, lexical query building."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.lexical import fts_query
from memory.retrieval.facets import flatten_context, split_facets
from memory.retrieval.policy import DEFAULT_POLICY
from memory.retrieval.scoring import coverage, facet_terms
from memory.retrieval.signals import rrf, topical
from memory.retrieval.temporal import parse_window
from memory.text import normalized_hash, stem

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_it_hashes_text_that_differs_only_in_case_and_spacing_alike():
    assert normalized_hash("Builds  use the ARM runners ") == normalized_hash(
        "builds use the arm runners"
    )
    assert normalized_hash("builds use ARM") != normalized_hash("builds use x86")


def test_it_stems_lightly():
    assert [
        stem(w) for w in ["policies", "running", "classes", "tokens", "bus", "painted", "used"]
    ] == ["policy", "runn", "class", "token", "bus", "paint", "used"]


def test_it_never_passes_query_syntax_to_fts():
    assert fts_query('C++ && (NOT) OR * "x') == '"c" OR "x"'
    assert fts_query("the and of") == ""


def test_it_splits_numbered_tasks_into_facets_plus_the_whole():
    facets, truncated = split_facets(
        "Runbook:\n1. Which port does the server use?\n2. Who owns payments today?"
    )
    assert facets[1:3] == ["Which port does the server use?", "Who owns payments today?"]
    assert facets[-1].startswith("Runbook:") and truncated is False


def test_it_caps_facets_at_thirty_two():
    facets, truncated = split_facets(
        "\n".join(f"Who owns component number {i}?" for i in range(40))
    )
    assert truncated is True and len(facets) == 33


def test_it_joins_short_fragments_to_the_previous_facet():
    facets, _ = split_facets("Which database stores customer data? Who owns payments on call; ok")
    assert facets[:2] == ["Which database stores customer data?", "Who owns payments on call ok"]


def test_it_flattens_task_context():
    assert flatten_context({"repo": "search", "ci": {"runner": "arm"}, "tags": [1, 2]}) == (
        "repo: search\nci.runner: arm\ntags: 1, 2"
    )


def test_it_reads_temporal_cues():
    last_week = parse_window("what broke last week?", NOW)
    assert last_week.contains(NOW - timedelta(days=7)) and not last_week.contains(
        NOW - timedelta(days=1)
    )
    assert parse_window("yesterday's deploy", NOW).contains(NOW - timedelta(days=1))
    assert parse_window("in March 2025", NOW).contains(datetime(2025, 3, 15, tzinfo=UTC))
    assert not parse_window("in March 2025", NOW).contains(datetime(2023, 3, 15, tzinfo=UTC))
    assert parse_window("camping in July", NOW).contains(datetime(2023, 7, 2, tzinfo=UTC))
    assert not parse_window("camping in July", NOW).contains(datetime(2023, 8, 2, tzinfo=UTC))
    assert parse_window("on 2026-08-19", NOW).contains(datetime(2026, 8, 19, 14, tzinfo=UTC))
    assert parse_window("3 days ago", NOW).contains(NOW - timedelta(days=3))
    assert parse_window("what may we deploy", NOW) is None
    assert parse_window("deploy the service", NOW) is None


def test_it_reads_weekdays_seasons_and_a_few_weeks_against_the_cue_time():
    # NOW is Monday 30 November 2026.
    saturday = parse_window("I got a necklace last Saturday from whom?", NOW)
    assert saturday.contains(datetime(2026, 11, 28, 15, tzinfo=UTC))
    assert not saturday.contains(datetime(2026, 11, 21, 15, tzinfo=UTC))
    monday = parse_window("what did I do last Monday", NOW)  # a week back, never today
    assert monday.contains(datetime(2026, 11, 23, 9, tzinfo=UTC)) and not monday.contains(NOW)
    spring = parse_window("where did we go last spring?", NOW)
    assert spring.contains(datetime(2026, 4, 10, tzinfo=UTC))
    assert not spring.contains(datetime(2026, 6, 10, tzinfo=UTC))
    winter = parse_window("the trip last winter", NOW)  # the winter of 2025/26, over by March
    assert winter.contains(datetime(2026, 1, 15, tzinfo=UTC))
    assert not winter.contains(datetime(2026, 12, 15, tzinfo=UTC))
    assert parse_window("this summer", NOW).contains(datetime(2026, 7, 1, tzinfo=UTC))
    assert parse_window("deploys are frozen on Friday", NOW) is None  # a habit, not a date
    few = parse_window("videos watched in the past few weeks", NOW)
    assert few.contains(NOW - timedelta(days=20)) and not few.contains(NOW - timedelta(days=40))


def test_it_scores_coverage_topical_and_fusion():
    terms = facet_terms("database timeout", {"database": 1.0, "timeout": 3.0})
    assert coverage(terms, {"timeout", "other"}) == 0.75
    assert topical(0.2, 0.8, DEFAULT_POLICY) == 0.5 and topical(0.6, 0.0, DEFAULT_POLICY) == 0.6
    assert rrf(1, 1, DEFAULT_POLICY) == 1.0 and rrf(None, None, DEFAULT_POLICY) == 0.0
