"""Secrets never stored, over REST, for what the guard used to miss: JSON member names, the
credentials coding agents see most, identifiers under `redact`, and history imports; and the
scan stays linear on text that repeats a secret's name."""

from __future__ import annotations

import json
import time

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory.models import Event, Session
from memory.services.tokens import token_create
from tests.api.support import err, fresh_scope, ok, post

pytestmark = pytest.mark.django_db
GHP = "ghp_" + "Zq8Lm2Xv4Ns6Pt0Rw3Ky5Hb7Jc9Df1Ga3Ue5Vo"
SAMPLES = {
    "Anthropic key": "The key is sk-ant-api03-" + "Kq7Lm2Xv4Ns6Pt0Rw3Ky5Hb7Jc9Df1G" * 3 + "AA",
    "GitHub token": "Use github_pat_11ABCDEFG0" + "Zq8Lm2Xv4Ns6Pt0Rw3Ky5Hb7Jc9Df1Ga3Ue5Vo_" * 2,
    "Hugging Face token": "Log in with hf_Zq8Lm2Xv4Ns6Pt0Rw3Ky5Hb7Jc9Df1GaXy on the box",
    "Google API key": "Maps uses AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW in prod",
    "token assignment": "Run it with export SLACK_BOT_TOKEN=xoxq-8812-Kd93nQ0 first",
    "AWS secret key": "CI: AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lm2Xv4N",
    "redis password": "The cache is at redis://:s3cr3tPass9@cache.internal:6379/0",
    "bearer token": 'curl -H "Authorization: Bearer Kq7Lm2Xv4Ns6Pt0Rw3Ky5" https://api',
    "access token in URL": "Fetch https://graph.example.com/me?access_token=EAAB9xQ71kLm2 daily",
    "mysql password": "Connect with mysql -u deploy -pW1nter2026 orders",
}


def _open(client, scope: str | None = None, **extra) -> dict:
    scope = scope or fresh_scope("sec")
    body = {"task": "Fix the deploy", "initial_goal": "deploy works", "scope": scope}
    return post(client, "activate", {**body, **extra})


@pytest.mark.parametrize("label", list(SAMPLES))
def test_the_credentials_coding_agents_see_most_are_refused(client, settings, label) -> None:
    settings.SLOWAVE_SECRETS = "reject"
    scope = fresh_scope("kinds")
    session_id = ok(_open(client, scope))["session_id"]
    response = post(
        client,
        "remember",
        {"scope": scope, "session_id": session_id, "content": SAMPLES[label], "type": "fact"},
    )
    error = err(response, 400, "invalid_input")
    assert error["field_errors"][0]["path"] == "content"
    assert "holds a credential" in error["message"]


def test_a_json_member_name_holding_a_credential_is_refused_without_echoing_it(
    client, settings
) -> None:
    settings.SLOWAVE_SECRETS = "reject"
    sessions = Session.objects.count()
    response = _open(client, task_context={"repo": {"deploy": {GHP: "the CI token"}}})
    error = err(response, 400, "invalid_input")
    assert error["field_errors"][0]["path"] == "task_context.repo.deploy.<key 0>"
    assert "GitHub token" in error["message"]
    assert GHP not in response.content.decode()
    assert Session.objects.count() == sessions


def test_under_redact_a_member_name_is_stored_redacted(client, settings) -> None:
    settings.SLOWAVE_SECRETS = "redact"
    context = {"ci": {GHP: "one", "ghp_" + "Aa1" * 12: "two"}}
    opened = ok(_open(client, task_context=context))
    session = Session.objects.get(pk=opened["session_id"])
    assert GHP not in json.dumps(session.task_context)
    assert sorted(session.task_context["ci"]) == [
        "[REDACTED:GitHub token]",
        "[REDACTED:GitHub token] #2",
    ]
    assert session.redactions["activate.task_context.ci.<key 0>"] == {"GitHub token": 1}


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_an_identifier_holding_a_credential_is_refused_under_either_policy(
    client, settings, policy
) -> None:
    settings.SLOWAVE_SECRETS = policy
    sessions = Session.objects.count()
    for person in ("Alice", "Bobby"):
        response = _open(client, scope=f"user:ghp_{person}Zq8Lm2Xv4Ns6Pt0Rw3Ky5Hb7Jc9Df1G")
        error = err(response, 400, "invalid_input")
        assert error["field_errors"][0]["path"] == "scope"
        assert "never rewritten" in error["message"]
    assert Session.objects.count() == sessions


def _staff() -> dict[str, str]:
    get_user_model().objects.create_user(username="ops-staff", password="x", is_staff=True)
    token = token_create(username="ops-staff", name="importer", now=timezone.now())[1]
    return {"HTTP_AUTHORIZATION": f"Bearer {token}", "REMOTE_ADDR": "192.0.2.10"}


def _conversation(text: str) -> str:
    message = {
        "author": {"role": "assistant"},
        "create_time": 1775552400.0,
        "content": {"content_type": "text", "parts": [text]},
    }
    conversation = {
        "id": "conv-aws",
        "create_time": 1775552400.0,
        "current_node": "n1",
        "mapping": {"n1": {"id": "n1", "parent": None, "children": [], "message": message}},
    }
    return json.dumps([conversation])


def test_a_chatgpt_import_holding_a_key_is_refused_or_redacted(client, settings) -> None:
    staff = _staff()
    aws = "AKIAIOSFODNN7EXAMPLE"
    body = {
        "format": "chatgpt",
        "scope": fresh_scope("chatgpt"),
        "content": _conversation(f"Your deploy user is {aws}, keep it safe."),
    }
    settings.SLOWAVE_SECRETS = "reject"
    events = Event.objects.count()
    response = post(client, "import", body, **staff)
    error = err(response, 400, "invalid_input")
    assert error["message"].startswith("content:[0].mapping.n1.message holds a credential (AWS")
    assert aws not in response.content.decode()
    assert Event.objects.count() == events

    settings.SLOWAVE_SECRETS = "redact"
    assert ok(post(client, "import", body, **staff))["sessions_imported"] == 1
    session = Session.objects.get(scope=body["scope"])
    [event] = Event.objects.filter(session=session)
    assert aws not in event.content and "[REDACTED:AWS access key]" in event.content
    assert session.redactions == {"content:[0].mapping.n1.message": {"AWS access key": 1}}


def _remember_seconds(client, scope: str, session_id: str, content: str) -> float:
    started = time.perf_counter()
    response = post(
        client,
        "remember",
        {"scope": scope, "session_id": session_id, "content": content, "type": "fact"},
    )
    elapsed = time.perf_counter() - started
    assert response.status_code in (200, 400), response.content
    return elapsed


def test_text_repeating_a_secrets_name_scans_about_as_fast_as_prose(client, settings) -> None:
    settings.SLOWAVE_SECRETS = "reject"
    scope = fresh_scope("linear")
    session_id = ok(_open(client, scope))["session_id"]
    words = "the deploy ran late because the queue was slow on friday night".split()
    prose = " ".join(words[i % len(words)] for i in range(1400))[:8000]
    _remember_seconds(client, scope, session_id, "warm up the embedder and the scan")
    baseline = min(_remember_seconds(client, scope, session_id, prose + str(i)) for i in range(2))
    for name in ("secret", "pwd", "password"):
        repeated = (name * (8000 // len(name) + 1))[:8000]
        # Generous: on the unbounded patterns this took seconds against milliseconds.
        assert _remember_seconds(client, scope, session_id, repeated) < 10 * baseline + 0.5


def test_a_procedure_context_or_recall_context_member_name_is_scanned(client, settings) -> None:
    settings.SLOWAVE_SECRETS = "reject"
    scope = fresh_scope("member")
    session_id = ok(_open(client, scope))["session_id"]
    url = "postgres://deploy:Kd93nQ0vault@db/app"
    recall = post(
        client,
        "recall",
        {"session_id": session_id, "scope": scope, "query": "q", "task_context": {url: 1}},
    )
    assert err(recall, 400, "invalid_input")["field_errors"][0]["path"] == "task_context.<key 0>"
    assert url not in recall.content.decode()
    commit = {
        "session_id": session_id,
        "final_goal": "g",
        "outcome": "success",
        "outcome_summary": "done",
        "verification": {"status": "verified", "summary": "tests pass", "evidence_refs": []},
        "procedure": {"summary": "s", "steps": [{"summary": "a"}], "context": {url: "db"}},
    }
    response = post(client, "commit", commit)
    error = err(response, 400, "invalid_input")
    assert error["field_errors"][0]["path"] == "procedure.context.<key 0>"
    assert "password in URL" in error["message"] and url not in response.content.decode()
    assert Session.objects.get(pk=session_id).status == Session.Status.OPEN
