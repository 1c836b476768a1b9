"""Batch remember on the real database: exact-duplicate matching read once per call, forgotten
text flagged when it comes back, and one contiguous run of event seqs per call."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memory.models import Event, Memory
from memory.schemas import ActivateIn, RememberIn
from memory.services.activate import session_activate
from memory.services.forgetting import memory_forget
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo

pytestmark = pytest.mark.django_db
SCOPE = "project:batch"


def _session() -> str:
    return session_activate(
        data=ActivateIn(task="record facts", initial_goal="g", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )["session_id"]


def _remember(session_id: str, *contents: str) -> list[dict]:
    reply = memory_remember(
        data=RememberIn(
            scope=SCOPE,
            session_id=session_id,
            memories=[{"content": c, "type": "fact"} for c in contents],
        ),
        now=timezone.now(),
    )
    assert all(r["ok"] for r in reply["results"])
    return [r["data"] for r in reply["results"]]


def test_it_matches_earlier_calls_and_earlier_items_of_the_same_call():
    session_id = _session()
    (first,) = _remember(session_id, "The cache is flushed at midnight")
    again, fresh, twin = _remember(
        session_id,
        "the cache is flushed at  midnight",  # same normalized text as the earlier call
        "Deploys happen on Tuesdays",
        "DEPLOYS happen on Tuesdays",  # same as the item before it in this call
    )
    assert (again["disposition"], again["memory_id"]) == ("matched", first["memory_id"])
    assert fresh["disposition"] == "created"
    assert (twin["disposition"], twin["memory_id"]) == ("matched", fresh["memory_id"])
    assert Memory.objects.filter(scope=SCOPE).count() == 2


def test_forgotten_text_remembered_again_is_a_new_flagged_row():
    session_id = _session()
    (old, other) = _remember(session_id, "The admin password rotates weekly", "Logs live in S3")
    memory_forget(memory_id=old["memory_id"], reason="wrong", actor="admin", now=timezone.now())
    back, plain = _remember(session_id, "The admin password rotates weekly", "Alerts go to Slack")
    assert back["disposition"] == "created" and back["memory_id"] != old["memory_id"]
    flags = {m.pk: m.flags for m in Memory.objects.filter(scope=SCOPE)}
    assert flags[int(back["memory_id"][4:])] == {"reremembered_forgotten": True}
    assert flags[int(plain["memory_id"][4:])] == {}
    assert flags[int(other["memory_id"][4:])] == {}


def test_one_call_appends_one_contiguous_run_of_event_seqs():
    session_id = _session()
    _remember(session_id, "Fact one about billing", "Fact two about billing")
    _remember(session_id, "Fact three about billing", "Fact one about billing", "Fact four")
    seqs = list(
        Event.objects.filter(session_id=session_id, kind=Event.Kind.REMEMBER)
        .order_by("seq")
        .values_list("seq", flat=True)
    )
    assert len(seqs) == 5 and seqs == list(range(seqs[0], seqs[0] + 5))
    assert len(set(Event.objects.filter(session_id=session_id).values_list("seq", flat=True))) == (
        Event.objects.filter(session_id=session_id).count()
    )
