"""`GET /metrics`: who may scrape it, and that REST calls and stored rows show in it.

In-process (Django's test client, this process's own registry); tests/cli/test_up_metrics.py
scrapes a real `slowave up --workers 2`.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from tests.api.support import err, fresh_scope, ok, post, seed

pytestmark = pytest.mark.django_db
REMOTE = {"REMOTE_ADDR": "192.0.2.10"}


def _samples(response: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(response.content.decode())
        for s in family.samples
    }


def _value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_it_refuses_a_tokenless_scrape_off_loopback(client) -> None:
    response = client.get("/metrics", **REMOTE)
    err(response, 401, "unauthorized")
    assert response["WWW-Authenticate"] == "Bearer"


def test_it_refuses_a_token_it_does_not_know(client) -> None:
    err(client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope"), 401, "unauthorized")


@override_settings(SLOWAVE_ALLOW_ANONYMOUS_LOCAL=False)
def test_it_refuses_tokenless_loopback_when_anonymous_local_is_off(client) -> None:
    err(client.get("/metrics"), 401, "unauthorized")


@override_settings(SLOWAVE_METRICS_TOKEN="scrape-secret", SLOWAVE_API_TOKENS=["agent-secret"])
def test_it_takes_the_metrics_token_and_the_api_tokens(client) -> None:
    for token in ("scrape-secret", "agent-secret"):
        _samples(client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}", **REMOTE))
    err(client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape", **REMOTE), 401, "unauthorized")


@override_settings(SLOWAVE_METRICS_TOKEN="scrape-secret")
def test_the_metrics_token_opens_nothing_under_api(client) -> None:
    bearer = {"HTTP_AUTHORIZATION": "Bearer scrape-secret", **REMOTE}
    err(client.get("/api/stats", **bearer), 401, "unauthorized")


def test_it_applies_the_host_policy(client) -> None:
    err(client.get("/metrics", HTTP_HOST="rebound.example"), 421, "host_not_allowed")


def test_it_counts_rest_calls_by_tool_and_code(client) -> None:
    before = _samples(client.get("/metrics"))
    scope = fresh_scope("metrics")
    ok(post(client, "activate", {"task": "count me", "initial_goal": "g", "scope": scope}))
    err(post(client, "remember", {"scope": scope}), 400, "invalid_input")
    after = _samples(client.get("/metrics"))

    def grew(name: str, **labels: str) -> float:
        return _value(after, name, **labels) - _value(before, name, **labels)

    rest = {"surface": "rest"}
    assert grew("slowave_calls_total", **rest, tool="slowave_activate", code="ok") == 1
    assert grew("slowave_calls_total", **rest, tool="slowave_remember", code="invalid_input") == 1
    assert grew("slowave_call_duration_seconds_count", **rest, tool="slowave_activate") == 1
    inf = {**rest, "tool": "slowave_remember", "le": "+Inf"}
    assert grew("slowave_call_duration_seconds_bucket", **inf) == 1
    assert grew("slowave_embedding_duration_seconds_count") >= 1


def test_it_reports_memories_and_sessions_per_scope_kind(client) -> None:
    seed(client, fresh_scope("gauges"), "The gauges count this memory.")
    seed(client, "user:gauges", "The gauges count this one under user.")
    samples = _samples(client.get("/metrics"))
    assert _value(samples, "slowave_memories", scope_kind="project", status="active") >= 1
    assert _value(samples, "slowave_memories", scope_kind="user", status="active") == 1
    assert _value(samples, "slowave_sessions", scope_kind="user", status="ended") == 1


def test_invented_scope_kinds_share_one_other_series(client) -> None:
    # Issue 26, 15: a caller inventing kinds must not grow the number of series.
    invented = [f"kind{i}x:metrics" for i in range(12)]
    for scope in invented:
        ok(post(client, "activate", {"task": "invent a kind", "initial_goal": "g", "scope": scope}))
    samples = _samples(client.get("/metrics"))
    kinds = {dict(labels)["scope_kind"] for name, labels in samples if name == "slowave_sessions"}
    assert not any(kind.startswith("kind") for kind in kinds), kinds
    assert _value(samples, "slowave_sessions", scope_kind="other", status="open") >= 12
