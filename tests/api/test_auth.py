"""Who may call: bearer tokens, tokenless loopback, revoked tokens, staff-only controls."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from memory.models import ApiToken, Memory
from memory.services.tokens import token_create, token_hash, token_revoke
from tests.api.support import err, fresh_scope, ok, post, seed

pytestmark = pytest.mark.django_db
REMOTE = {"REMOTE_ADDR": "192.0.2.10"}


def _token(*, staff: bool = False, name: str = "laptop") -> str:
    username = f"{'staff' if staff else 'agent'}-{name}"
    get_user_model().objects.create_user(username=username, password="x", is_staff=staff)
    return token_create(username=username, name=name, now=timezone.now())[1]


def _bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def test_it_refuses_tokenless_calls_off_loopback(client) -> None:
    err(client.get("/api/stats", **REMOTE), 401, "unauthorized")
    err(post(client, "activate", {}, **REMOTE), 401, "unauthorized")


def test_it_allows_tokenless_calls_from_loopback(client) -> None:
    ok(client.get("/api/stats", REMOTE_ADDR="127.0.0.1"))
    ok(client.get("/api/stats", REMOTE_ADDR="::1"))


@override_settings(SLOWAVE_ALLOW_ANONYMOUS_LOCAL=False)
def test_it_refuses_tokenless_loopback_when_anonymous_local_is_off(client) -> None:
    err(client.get("/api/stats"), 401, "unauthorized")


def test_it_serves_health_without_auth(client) -> None:
    assert ok(client.get("/api/health", **REMOTE)) == {"status": "ok"}


def test_it_accepts_a_user_token_and_records_its_use(client) -> None:
    token = _token()
    ok(client.get("/api/stats", **REMOTE, **_bearer(token)))
    row = ApiToken.objects.get(token_hash=token_hash(token))
    assert row.last_used_at is not None and token not in row.token_hash


@override_settings(SLOWAVE_API_TOKENS=["env-secret-1"])
def test_it_accepts_a_configured_env_token(client) -> None:
    ok(client.get("/api/stats", **REMOTE, **_bearer("env-secret-1")))
    err(client.get("/api/stats", **REMOTE, **_bearer("env-secret-2")), 401, "unauthorized")


def test_it_refuses_a_revoked_token_even_from_loopback(client) -> None:
    token = _token()
    token_revoke(name="laptop", now=timezone.now())
    err(client.get("/api/stats", **REMOTE, **_bearer(token)), 401, "unauthorized")
    err(client.get("/api/stats", **_bearer(token)), 401, "unauthorized")


def test_it_keeps_staff_controls_from_non_staff(client) -> None:
    memory_id = seed(client, fresh_scope(), "The staging database is rebuilt every Sunday")
    body = {"reason": "wrong"}
    err(post(client, f"memories/{memory_id}/forget", body), 403, "forbidden")
    err(post(client, f"memories/{memory_id}/forget", body, **_bearer(_token())), 403, "forbidden")
    assert Memory.objects.get(pk=int(memory_id[4:])).status == "active"


def test_it_lets_staff_forget_and_unforget(client) -> None:
    memory_id = seed(client, fresh_scope(), "The staging database is rebuilt every Sunday")
    staff = _bearer(_token(staff=True))
    err(post(client, f"memories/{memory_id}/forget", {}, **staff), 400, "invalid_input")
    done = ok(post(client, f"memories/{memory_id}/forget", {"reason": "wrong"}, **staff))
    assert done["new_status"] == "forgotten"
    assert ok(post(client, f"memories/{memory_id}/unforget", "", **staff))["new_status"] == "active"
    err(post(client, "memories/sch_999999/forget", {"reason": "x"}, **staff), 404, "not_found")


def test_it_creates_and_revokes_tokens_from_the_command_line(client) -> None:
    get_user_model().objects.create_user(username="ops", password="x")
    out = io.StringIO()
    call_command(
        "token", "create", "--user", "ops", "--name", "ci", stdout=out, stderr=io.StringIO()
    )
    token = out.getvalue().strip()
    ok(client.get("/api/stats", **REMOTE, **_bearer(token)))
    call_command("token", "revoke", "--name", "ci", stdout=io.StringIO())
    err(client.get("/api/stats", **REMOTE, **_bearer(token)), 401, "unauthorized")


def test_it_records_the_token_user_as_the_client_of_a_session(client) -> None:
    from memory.models import Session

    opened = ok(
        post(
            client,
            "activate",
            {"task": "t", "initial_goal": "g", "scope": fresh_scope()},
            HTTP_X_SLOWAVE_CLIENT="my-agent",
            **REMOTE,
            **_bearer(_token(name="desk")),
        )
    )
    session = Session.objects.get(pk=opened["session_id"])
    assert (session.client_name, session.client_identity) == ("my-agent", "agent-desk")


STAFF_ROUTES = (
    "memories/sch_1/forget",
    "memories/sch_1/unforget",
    "procedures/proc_sess_0000000000000000/forget",
    "procedures/proc_sess_0000000000000000/unforget",
    "import",
)


@override_settings(SLOWAVE_API_TOKENS=["env-secret-1"])
def test_it_keeps_every_staff_route_from_every_non_staff_caller(client) -> None:
    callers = {
        "loopback": {},
        "env token": {**REMOTE, **_bearer("env-secret-1")},
        "user token": {**REMOTE, **_bearer(_token())},
    }
    for route in STAFF_ROUTES:
        for who, extra in callers.items():
            response = post(client, route, {"reason": "x"}, **extra)
            assert response.status_code == 403, (route, who, response.content)
            err(response, 403, "forbidden")
        err(post(client, route, {"reason": "x"}, **REMOTE), 401, "unauthorized")


def test_it_never_echoes_or_logs_a_token(client, caplog) -> None:
    token = _token(staff=True, name="secret-holder")
    revoked = _token(name="gone")
    token_revoke(name="gone", now=timezone.now())
    caplog.set_level("DEBUG")
    answers = [
        client.get("/api/stats", **REMOTE, **_bearer(token)),
        client.get("/api/stats", **REMOTE, **_bearer(revoked)),
        client.get("/api/stats", **REMOTE, **_bearer(token + "x")),
        post(client, "import", {"bogus": True}, **REMOTE, **_bearer(token)),
    ]
    for response in answers:
        assert token not in response.content.decode() and revoked not in response.content.decode()
    logged = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert token not in logged and revoked not in logged


def test_it_shows_a_token_only_when_it_is_created(client) -> None:
    get_user_model().objects.create_user(username="ops", password="x", is_staff=True)
    out, err_out = io.StringIO(), io.StringIO()
    call_command("token", "create", "--user", "ops", "--name", "ci", stdout=out, stderr=err_out)
    token = out.getvalue().strip()
    assert token.startswith("swt_") and token not in err_out.getvalue()
    listed = io.StringIO()
    call_command("token", "list", stdout=listed)
    call_command("token", "list", "--json", stdout=listed)
    assert "ci" in listed.getvalue() and token not in listed.getvalue()
    row = ApiToken.objects.get(name="ci")
    stored = " ".join(str(getattr(row, f.attname)) for f in ApiToken._meta.concrete_fields)
    assert token not in stored and row.token_hash == token_hash(token)
    admin = get_user_model().objects.create_superuser(username="boss", password="x")
    client.force_login(admin)
    for page in ("/admin/memory/apitoken/", f"/admin/memory/apitoken/{row.pk}/change/"):
        response = client.get(page)
        assert response.status_code == 200 and token not in response.content.decode(), page
