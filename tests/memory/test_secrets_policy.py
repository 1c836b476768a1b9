"""SLOWAVE_SECRETS on the services that store text, on the real database: `reject` writes
nothing and names the field; `redact` stores the text with the span replaced, records the
kinds, and the secret is in no table: not the memories, events, sessions, procedures, FTS or
vectors."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.utils import timezone

from memory.errors import InvalidInput
from memory.models import Event, FeedbackEvent, Memory, Procedure, Session
from memory.schemas import ActivateIn, CommitIn, FeedbackIn, RecallIn, RememberIn
from memory.services.activate import session_activate
from memory.services.commit import session_commit
from memory.services.feedback import feedback_submit
from memory.services.recall import retrieval_recall
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo
from memory.services.transcripts import transcripts_import

pytestmark = pytest.mark.django_db
SCOPE = "project:secrets"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
CLAIM = f"The bastion upload user authenticates with {AWS_ID} from the build box"


def _tables_holding(needle: str) -> set[str]:
    """Every table (virtual tables' shadow tables included) with a cell containing `needle`."""
    found = set()
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        for (name,) in cursor.fetchall():
            try:
                cursor.execute(f'SELECT * FROM "{name}"')
            except Exception:  # a virtual table that cannot be read whole: its shadows are
                continue
            for row in cursor.fetchall():
                cells = (
                    v.decode("utf-8", "ignore") if isinstance(v, bytes) else str(v) for v in row
                )
                if any(needle in cell for cell in cells):
                    found.add(name)
                    break
    return found


def _session() -> str:
    return session_activate(
        data=ActivateIn(task="record the build setup", initial_goal="notes", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )["session_id"]


def _remember(session_id: str, *contents: str) -> dict:
    return memory_remember(
        data=RememberIn(
            scope=SCOPE,
            session_id=session_id,
            memories=[{"content": c, "type": "fact"} for c in contents],
        ),
        now=timezone.now(),
    )


def test_reject_refuses_the_batch_naming_the_item_and_writes_nothing(settings) -> None:
    settings.SLOWAVE_SECRETS = "reject"
    session_id = _session()
    events = Event.objects.count()
    with pytest.raises(InvalidInput) as caught:
        _remember(session_id, "Builds run on the blue box", CLAIM)
    error = caught.value.as_error()
    assert error["field_errors"][0]["path"] == "memories[1].content"
    assert "AWS access key at characters 44–63" in error["message"]
    assert AWS_ID not in json.dumps(error)
    assert Memory.objects.count() == 0 and Event.objects.count() == events
    assert _tables_holding("blue box") == set()


def test_redact_stores_the_text_without_the_secret_anywhere(settings) -> None:
    settings.SLOWAVE_SECRETS = "redact"
    reply = _remember(_session(), CLAIM)
    data = reply["results"][0]["data"]
    assert data["redacted"] == {"AWS access key": 1}
    memory = Memory.objects.get()
    assert memory.content == (
        "The bastion upload user authenticates with [REDACTED:AWS access key] from the build box"
    )
    assert memory.redactions == {"content": {"AWS access key": 1}}
    # The text around the secret reached the memory, its event and the FTS index...
    holding = _tables_holding("bastion upload user")
    assert {"memory_memory", "memory_event"} <= holding
    assert any("fts" in name for name in holding), holding
    # ...the secret reached none of them.
    assert _tables_holding(AWS_ID) == set()


def _commit_body(session_id: str, **extra) -> CommitIn:
    return CommitIn.model_validate(
        {
            "session_id": session_id,
            "final_goal": "publish the package",
            "outcome": "success",
            "outcome_summary": f"Published after exporting GITHUB_TOKEN={GITHUB}",
            "verification": {"status": "verified", "summary": "the release page lists it"},
            "procedure": {
                "summary": "publish a release",
                "steps": [{"summary": "tag it"}, {"summary": f"push with {GITHUB}"}],
            },
            **extra,
        }
    )


def test_commit_reject_names_the_first_field_and_leaves_the_session_open(settings) -> None:
    settings.SLOWAVE_SECRETS = "reject"
    session_id = _session()
    with pytest.raises(InvalidInput) as caught:
        session_commit(data=_commit_body(session_id), now=timezone.now())
    assert caught.value.field_errors[0]["path"] == "outcome_summary"
    assert "GitHub token" in caught.value.message and GITHUB not in caught.value.message
    assert Session.objects.get(pk=session_id).status == Session.Status.OPEN
    assert Procedure.objects.count() == 0
    assert _tables_holding(GITHUB) == set()


def test_commit_redact_records_the_fields_on_the_session(settings) -> None:
    settings.SLOWAVE_SECRETS = "redact"
    session_id = _session()
    reply = session_commit(data=_commit_body(session_id), now=timezone.now())
    expected = {
        "outcome_summary": {"GitHub token": 1},
        "procedure.steps[1].summary": {"GitHub token": 1},
    }
    assert reply["redacted"] == expected
    session = Session.objects.get(pk=session_id)
    assert session.redactions == expected
    assert session.outcome_summary == (
        "Published after exporting GITHUB_TOKEN=[REDACTED:GitHub token]"
    )
    assert Procedure.objects.get().steps[1] == {"summary": "push with [REDACTED:GitHub token]"}
    assert _tables_holding(GITHUB) == set()


TRANSCRIPT = [
    {"session_key": "chat-1", "role": "user", "content": "Set up the deploy for me"},
    {
        "session_key": "chat-1",
        "role": "user",
        "content": f"The key is {AWS_ID}, region eu-west-1",
        "metadata": {"api_key": "f83kd92jd83kf0s"},
    },
]


def test_transcript_import_reject_names_the_line_and_imports_nothing(settings) -> None:
    settings.SLOWAVE_SECRETS = "reject"
    with pytest.raises(InvalidInput) as caught:
        transcripts_import(
            lines=[json.dumps(t) for t in TRANSCRIPT], scope="project:chat", now=timezone.now()
        )
    assert caught.value.field_errors[0]["path"] == "line 2.content"
    assert Session.objects.count() == 0 and Event.objects.count() == 0


def test_transcript_import_redact_records_the_lines_on_the_session(settings) -> None:
    settings.SLOWAVE_SECRETS = "redact"
    report = transcripts_import(
        lines=[json.dumps(t) for t in TRANSCRIPT], scope="project:chat", now=timezone.now()
    )
    expected = {
        "line 2.content": {"AWS access key": 1},
        "line 2.metadata.api_key": {"secret assignment": 1},
    }
    assert report["redacted"] == {"chat-1": expected}
    assert Session.objects.get(import_key="chat-1").redactions == expected
    event = Event.objects.get(content__startswith="The key is")
    assert event.content == "The key is [REDACTED:AWS access key], region eu-west-1"
    assert event.metadata == {"api_key": "[REDACTED:secret assignment]"}
    assert _tables_holding(AWS_ID) == set() and _tables_holding("f83kd92jd83kf0s") == set()


def test_activate_and_recall_refuse_a_credential_in_the_cue(settings) -> None:
    settings.SLOWAVE_SECRETS = "reject"
    sessions = Session.objects.count()
    with pytest.raises(InvalidInput) as caught:
        session_activate(
            data=ActivateIn(task=f"Why does {AWS_ID} get 403?", initial_goal="g", scope=SCOPE),
            client=ClientInfo(),
            now=timezone.now(),
        )
    assert caught.value.field_errors[0]["path"] == "task"
    assert Session.objects.count() == sessions
    session_id = _session()
    events = Event.objects.count()
    with pytest.raises(InvalidInput) as caught:
        retrieval_recall(
            data=RecallIn(
                session_id=session_id,
                scope=SCOPE,
                query="why 403",
                task_context={"aws": {"api_key": "f83kd92jd83kf0s"}},
            ),
            now=timezone.now(),
        )
    assert caught.value.field_errors[0]["path"] == "task_context.aws.api_key"
    assert Event.objects.count() == events
    assert _tables_holding(AWS_ID) == set() and _tables_holding("f83kd92jd83kf0s") == set()


def test_activate_and_recall_redact_and_add_up_on_the_session(settings) -> None:
    settings.SLOWAVE_SECRETS = "redact"
    opened = session_activate(
        data=ActivateIn(task=f"Why does {AWS_ID} get 403?", initial_goal="g", scope=SCOPE),
        client=ClientInfo(),
        now=timezone.now(),
    )
    assert opened["redacted"] == {"task": {"AWS access key": 1}}
    for _ in range(2):
        recalled = retrieval_recall(
            data=RecallIn(session_id=opened["session_id"], scope=SCOPE, query=f"403 for {GITHUB}"),
            now=timezone.now(),
        )
        assert recalled["redacted"] == {"query": {"GitHub token": 1}}
    session = Session.objects.get(pk=opened["session_id"])
    assert session.task == "Why does [REDACTED:AWS access key] get 403?"
    assert session.redactions == {
        "activate.task": {"AWS access key": 1},
        "recall.query": {"GitHub token": 2},
    }
    assert _tables_holding(AWS_ID) == set() and _tables_holding(GITHUB) == set()


def test_feedback_notes_are_refused_or_redacted_onto_the_session(settings) -> None:
    session_id = _session()
    retrieval_id = retrieval_recall(
        data=RecallIn(session_id=session_id, scope=SCOPE, query="build box"), now=timezone.now()
    )["retrieval_id"]
    note = {"retrieval_id": retrieval_id, "retrieval_quality": f"fine, but {GITHUB} leaked"}
    settings.SLOWAVE_SECRETS = "reject"
    accepted = FeedbackEvent.objects.count()
    with pytest.raises(InvalidInput) as caught:
        feedback_submit(data=FeedbackIn.model_validate({"items": [note]}), now=timezone.now())
    assert caught.value.field_errors[0]["path"] == "items[0].retrieval_quality"
    assert FeedbackEvent.objects.count() == accepted
    settings.SLOWAVE_SECRETS = "redact"
    feedback_submit(data=FeedbackIn.model_validate({"items": [note]}), now=timezone.now())
    assert Session.objects.get(pk=session_id).redactions == {
        "feedback.items[0].retrieval_quality": {"GitHub token": 1}
    }
    assert _tables_holding(GITHUB) == set()
