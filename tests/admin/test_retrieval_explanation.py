"""The retrieval page renders every shape of recorded scores a database may hold: itemised
signals, an associated neighbour's edge, and the flat scores of retrievals made before."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from memory.models import Retrieval, Session
from memory.schemas import ActivateIn
from memory.services.activate import session_activate
from memory.services.sessions import ClientInfo

pytestmark = pytest.mark.django_db
SCOPE = "project:adm-explain"


def _entry(ref: str, pathway: str, scores: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "ref": ref,
        "kind": "memory",
        "pathway": pathway,
        "currency": "current",
        "scores": scores,
        "payload": {"memory_id": ref, "content": f"content of {ref}"},
        "parent": None,
    } | extra


def _retrieval(memories: list[dict[str, Any]], **params: Any) -> Retrieval:
    opened = session_activate(
        data=ActivateIn(task="notes", initial_goal="g", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )
    return Retrieval.objects.create(
        id=f"rec_{len(memories)}{'p' if params else 'f'}00000000",
        kind="recall",
        session=Session.objects.get(pk=opened["session_id"]),
        scope=SCOPE,
        query="which port?",
        facets=["which port?"],
        policy_version="slowave-hybrid-0123456789",
        catalog={"pages": [{"memories": memories, "procedures": []}]},
        params=params,
        embedder="sentence-transformers/all-MiniLM-L6-v2",
        created_at=datetime(2026, 1, 5, tzinfo=UTC),
    )


def _page(admin_client: Client, retrieval: Retrieval) -> str:
    reply = admin_client.get(f"/admin/memory/retrieval/{retrieval.pk}/change/")
    assert reply.status_code == 200
    return reply.content.decode()


def test_it_shows_signal_columns_and_an_associated_neighbours_edge(admin_client: Client) -> None:
    signals = {
        "inputs": {"cos": 0.7, "coverage": 0.5, "rrf": 1.0, "temporal": 0.0, "topical": 0.7},
        "signals": [["topical", 0.7], ["coverage", 0.4], ["placed", -0.05]],
        "score": 1.05,
    }
    edge = {"weight": 0.62, "topical": 0.41}
    retrieval = _retrieval(
        [_entry("sch_1", "direct", signals), _entry("sch_2", "associated", edge, parent="sch_1")],
        policy={"admission": {"floor": 0.35}},
    )
    html = _page(admin_client, retrieval)
    assert 'id="policy-version">slowave-hybrid-0123456789<' in html
    columns = re.findall(r'<th class="sw-signal" title="[^"]+">(\w+)</th>', html)
    assert columns == ["topical", "coverage", "placed"]  # the order ranking applies them
    assert "+0.700" in html and "-0.050" in html and "1.050" in html
    assert "edge 0.62 from sch_1 · topical 0.410" in html
    assert "content of sch_2" in html


def test_it_shows_the_flat_scores_of_an_older_retrieval(admin_client: Client) -> None:
    flat = {"cos": 0.7, "coverage": 0.5, "topical": 0.7, "rrf": 1.0, "temporal": 0.0, "score": 0.8}
    html = _page(admin_client, _retrieval([_entry("sch_1", "direct", flat)]))
    assert "recorded before signals were itemised" in html
    assert "cos 0.700" in html and "0.800" in html
    assert 'class="sw-signal"' not in html  # no signal was itemised
