"""`GET /api/retrievals/{id}` explains its ranking: every item's signal contributions and final
score, as `slowave explain` shows them, on an activation ranked by the real model."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.api.support import err, fresh_scope, ok, post, seed

pytestmark = pytest.mark.django_db
FACTS = [
    "The web server listens on port 8443 behind the load balancer",
    "The web server's TLS certificate renews every sixty days",
    "Customer data is stored in PostgreSQL 16",
]


def _activated(client: Client) -> dict[str, Any]:
    scope = fresh_scope("explain")
    for fact in FACTS:
        seed(client, scope, fact)
    body = {"task": "Which port does the web server listen on?", "initial_goal": "answer"}
    return ok(post(client, "activate", body | {"scope": scope}))


def test_it_explains_each_exposed_item_by_its_signals(client: Client) -> None:
    opened = _activated(client)
    detail = ok(client.get(f"/api/retrievals/{opened['retrieval_id']}"))
    explanation = detail["explanation"]
    assert explanation["retrieval_id"] == opened["retrieval_id"]
    assert explanation["kind"] == "activate"
    assert explanation["policy_version"] == opened["retrieval_policy_version"]
    items = explanation["items"]
    assert [i["ref"] for i in items] == [m["memory_id"] for m in opened["memories"]]
    assert [i["rank"] for i in items] == [e["rank"] for e in detail["exposures"]]
    scores = [i["score"] for i in items]
    assert scores == sorted(scores, reverse=True) and len(scores) >= 1
    for item in items:
        names = [c["signal"] for c in item["signals"]]
        assert names[:2] == ["topical", "coverage"], names
        assert abs(sum(c["value"] for c in item["signals"]) - item["score"]) < 1e-3
        assert item["exposed"] and item["feedback"] is None and item["shape"] == "signals"
        assert item["inputs"]["topical"] >= explanation["policy"]["admission"]["floor"]
    assert set(explanation["signal_meanings"]) == set(explanation["signal_names"])
    assert "port 8443" in items[0]["preview"]


def test_it_explains_every_catalogued_item_when_asked(client: Client) -> None:
    opened = _activated(client)
    everything = ok(client.get(f"/api/retrievals/{opened['retrieval_id']}", {"all": "true"}))
    explanation = everything["explanation"]
    assert explanation["all_items"] is True
    assert len(explanation["items"]) == explanation["catalogued"]


def test_it_says_how_to_find_an_unknown_retrieval(client: Client) -> None:
    error = err(client.get("/api/retrievals/rec_nope"), 404, "not_found")
    assert "GET /api/sessions/" in error["message"]


def test_it_documents_the_explanation_in_the_openapi_document(client: Client) -> None:
    document = client.get("/api/openapi.json").json()
    operation = document["paths"]["/api/retrievals/{retrieval_id}"]["get"]
    assert "all" in {p["name"] for p in operation["parameters"]}
    schemas = document["components"]["schemas"]
    detail = schemas["RetrievalDetailOut"]
    assert "explanation" in detail["required"]
    item = schemas["ExplainedItemOut"]
    assert item["additionalProperties"] is False
    assert {"rank", "signals", "score", "inputs", "exposed", "feedback"} <= set(item["required"])
    assert "sum to `score`" in item["properties"]["signals"]["description"]
