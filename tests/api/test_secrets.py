"""Secrets never stored, over REST: the same refusal (400 invalid_input naming the field and
the kind) and, under SLOWAVE_SECRETS=redact, the same replacement as over MCP."""

from __future__ import annotations

import json

import pytest

from memory.models import Event, Memory
from tests.api.support import err, fresh_scope, ok, post

pytestmark = pytest.mark.django_db
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
CLAIM = f"The nightly backup job uploads to S3 as {AWS_ID} from the build box"


def _open(client) -> tuple[str, str]:
    scope = fresh_scope("secrets")
    opened = ok(
        post(
            client,
            "activate",
            {"task": "Fix the nightly backup", "initial_goal": "backups run", "scope": scope},
        )
    )
    return scope, opened["session_id"]


def test_a_remember_holding_an_aws_key_is_refused(client, settings) -> None:
    settings.SLOWAVE_SECRETS = "reject"
    scope, session_id = _open(client)
    events = Event.objects.count()
    response = post(
        client,
        "remember",
        {
            "scope": scope,
            "session_id": session_id,
            "memories": [
                {"content": "Backups run at 02:00 UTC", "type": "fact"},
                {"content": CLAIM, "type": "fact"},
            ],
        },
    )
    error = err(response, 400, "invalid_input")
    assert [fe["path"] for fe in error["field_errors"]] == ["memories[1].content"]
    assert "AWS access key at characters 41–60" in error["message"]
    assert AWS_ID not in response.content.decode()
    assert Memory.objects.count() == 0 and Event.objects.count() == events


def test_with_redact_it_is_stored_and_recalled_without_the_key(client, settings) -> None:
    settings.SLOWAVE_SECRETS = "redact"
    scope, session_id = _open(client)
    stored = ok(
        post(
            client,
            "remember",
            {"scope": scope, "session_id": session_id, "content": CLAIM, "type": "fact"},
        )
    )
    assert stored["redacted"] == {"AWS access key": 1}
    recalled = ok(
        post(
            client,
            "recall",
            {"scope": scope, "session_id": session_id, "query": "nightly backup upload to S3"},
        )
    )
    assert [m["content"] for m in recalled["memories"]] == [
        "The nightly backup job uploads to S3 as [REDACTED:AWS access key] from the build box"
    ]
    assert Memory.objects.get().redactions == {"content": {"AWS access key": 1}}
    assert AWS_ID not in json.dumps(list(Event.objects.values_list("content", flat=True)))
