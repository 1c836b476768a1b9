"""API tokens (memory/services/tokens.py) on the real database: the secret is shown once and
stored only as its hash; it authenticates its user until revoked; revoking names what it
revoked, and a revoke or a label that matches nothing is an error, not a silent success."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.utils import timezone

from memory.errors import InvalidInput, NotFound
from memory.models import ApiToken
from memory.services.accounts import admin_create
from memory.services.tokens import (
    TOKEN_PREFIX,
    Forbidden,
    Unauthorized,
    caller_authenticate,
    caller_require_staff,
    token_create,
    token_list,
    token_revoke,
)

pytestmark = pytest.mark.django_db
OFF_LOOPBACK = "192.0.2.7"


@pytest.fixture
def admin() -> str:
    return admin_create(username="ann", email="ann@example.org", password="a long passphrase")


def _agent() -> str:
    get_user_model().objects.create_user(username="bot", password="another long phrase")
    return "bot"


def test_create_returns_the_secret_once_and_stores_only_its_hash(admin):
    now = timezone.now()

    row, secret = token_create(username=admin, name="  laptop ", now=now)

    assert secret.startswith(TOKEN_PREFIX) and len(secret) > len(TOKEN_PREFIX) + 32
    stored = ApiToken.objects.get(pk=row.pk)
    assert stored.token_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {str(v) for v in vars(stored).values()}
    assert (stored.name, stored.created_at, stored.revoked_at) == ("laptop", now, None)
    listed = token_list()
    assert [(t["user"], t["name"]) for t in listed] == [("ann", "laptop")]
    assert secret not in repr(listed)
    _, other = token_create(username=admin, name="laptop", now=now)
    assert other != secret


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_create_needs_a_label_of_one_to_a_hundred_characters(admin, name):
    with pytest.raises(InvalidInput) as refused:
        token_create(username=admin, name=name, now=timezone.now())

    assert refused.value.field_errors[0]["path"] == "name"
    assert not ApiToken.objects.exists()


def test_create_for_an_unknown_user_is_not_found():
    with pytest.raises(NotFound, match="no user 'nobody'"):
        token_create(username="nobody", name="laptop", now=timezone.now())


def test_a_token_authenticates_its_user_and_records_its_use(admin):
    created = timezone.now()
    row, secret = token_create(username=admin, name="laptop", now=created)
    used = created + timedelta(minutes=5)

    caller = caller_authenticate(token=secret, remote_addr=OFF_LOOPBACK, now=used)

    assert (caller.via, caller.name, caller.is_staff) == ("token", "ann", True)
    assert caller.client_identity == "ann"
    caller_require_staff(caller)
    assert ApiToken.objects.get(pk=row.pk).last_used_at == used


def test_a_non_staff_token_authenticates_but_is_kept_from_staff_controls():
    _, secret = token_create(username=_agent(), name="ci", now=timezone.now())

    caller = caller_authenticate(token=secret, remote_addr=OFF_LOOPBACK, now=timezone.now())

    assert (caller.name, caller.is_staff) == ("bot", False)
    with pytest.raises(Forbidden):
        caller_require_staff(caller)


@pytest.mark.parametrize("token", ["swt_not-a-token", "", None])
def test_an_unknown_malformed_or_missing_token_is_unauthorized(admin, token):
    token_create(username=admin, name="laptop", now=timezone.now())

    with pytest.raises(Unauthorized):
        caller_authenticate(token=token, remote_addr=OFF_LOOPBACK, now=timezone.now())


def test_a_revoked_token_stops_working_even_from_loopback(admin):
    row, secret = token_create(username=admin, name="laptop", now=timezone.now())
    revoked_at = timezone.now()

    (revoked,) = token_revoke(token_id=row.pk, now=revoked_at)

    assert revoked.pk == row.pk
    assert ApiToken.objects.get(pk=row.pk).revoked_at == revoked_at
    with override_settings(SLOWAVE_ALLOW_ANONYMOUS_LOCAL=True):
        with pytest.raises(Unauthorized, match="revoked"):
            caller_authenticate(token=secret, remote_addr="127.0.0.1", now=timezone.now())
        # Without a token, loopback is still let in anonymously: the refusal above is the
        # token's, not the address's.
        anonymous = caller_authenticate(token=None, remote_addr="127.0.0.1", now=timezone.now())
        assert anonymous.via == "loopback"


def test_revoke_by_label_takes_every_active_token_of_that_label_for_the_user(admin):
    agent = _agent()
    now = timezone.now()
    mine = [token_create(username=admin, name="ci", now=now)[0].pk for _ in range(2)]
    theirs, _ = token_create(username=agent, name="ci", now=now)

    revoked = token_revoke(name="ci", username=admin, now=now)

    assert sorted(r.pk for r in revoked) == mine
    assert ApiToken.objects.get(pk=theirs.pk).revoked_at is None
    with pytest.raises(NotFound):
        token_revoke(name="ci", username=admin, now=now)  # nothing active is left to revoke


def test_revoke_that_matches_nothing_or_names_nothing_is_an_error(admin):
    row, _ = token_create(username=admin, name="laptop", now=timezone.now())

    with pytest.raises(NotFound):
        token_revoke(token_id=row.pk + 1000, now=timezone.now())
    with pytest.raises(NotFound):
        token_revoke(name="lapt0p", now=timezone.now())
    with pytest.raises(InvalidInput):
        token_revoke(now=timezone.now())
    assert ApiToken.objects.get(pk=row.pk).revoked_at is None


def test_env_tokens_are_accepted_as_non_staff_without_a_row():
    with override_settings(SLOWAVE_API_TOKENS=["shared-secret-for-agents"]):
        caller = caller_authenticate(
            token="shared-secret-for-agents", remote_addr=OFF_LOOPBACK, now=timezone.now()
        )
        with pytest.raises(Unauthorized):
            caller_authenticate(token="shared-secret", remote_addr=OFF_LOOPBACK, now=timezone.now())

    assert (caller.via, caller.is_staff) == ("env_token", False)
