"""Recall's session checks (one read before ranking, one guarded claim inside the write): each
refusal names its field and writes no retrieval, exposure or event for the refused call."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.errors import InvalidInput
from memory.models import Event, Exposure, Retrieval, Session
from memory.schemas import RecallIn
from memory.services.recall import retrieval_recall
from tests.factories import open_session

pytestmark = pytest.mark.django_db
SCOPE = "project:recall-checks"


def _open() -> str:
    return open_session(SCOPE, "look things up", goal="g")["session_id"]


def _refused(session_id: str, scope: str, *, later: timedelta = timedelta()) -> InvalidInput:
    before = (Retrieval.objects.count(), Exposure.objects.count())
    events = Event.objects.filter(kind=Event.Kind.RECALL_QUERY).count()
    with pytest.raises(InvalidInput) as refused:
        retrieval_recall(
            data=RecallIn(session_id=session_id, scope=scope, query="where are the logs?"),
            now=timezone.now() + later,
        )
    assert (Retrieval.objects.count(), Exposure.objects.count()) == before
    assert Event.objects.filter(kind=Event.Kind.RECALL_QUERY).count() == events
    return refused.value


def test_an_unknown_session_is_refused():
    error = _refused("sess_0000000000000000", SCOPE)
    assert error.message == "unknown session_id: sess_0000000000000000"
    assert error.field_errors == [{"path": "session_id", "message": error.message}]


def test_a_session_of_another_scope_is_refused():
    error = _refused(_open(), "project:elsewhere")
    assert error.message == "session_id and scope do not match"
    assert error.field_errors[0]["path"] == "scope"


def test_an_idle_session_is_reaped_first_and_then_refused(settings):
    settings.SLOWAVE_SESSION_IDLE_TIMEOUT = 60
    session_id = _open()
    error = _refused(session_id, SCOPE, later=timedelta(minutes=5))
    assert error.message == f"session is already ended: {session_id}"
    assert Session.objects.get(pk=session_id).ended_by == Session.EndedBy.REAPER


def test_an_open_session_is_claimed_and_touched():
    session_id = _open()
    later = timezone.now() + timedelta(seconds=30)
    reply = retrieval_recall(
        data=RecallIn(session_id=session_id, scope=SCOPE, query="where are the logs?"), now=later
    )
    assert reply["retrieval_id"].startswith("rec")
    assert Session.objects.get(pk=session_id).last_activity_at == later
