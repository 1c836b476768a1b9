"""API tokens and caller authentication for the HTTP edges: REST `/api/`, MCP `/mcp` (§10, §12).

Lives here: token creation/revocation (only a sha256 hash is stored; the token is shown once),
and `caller_authenticate`, the one decision both HTTP edges make about who is calling.
Does not live here: header parsing per framework, HTTP status codes (the edges map errors).

Tokens from `SLOWAVE_API_TOKENS` count as *non-staff*: they are shared secrets handed to agents
and scripts, not to a person, so the staff controls (forget/unforget) need a staff user's own
ApiToken. Tokenless loopback callers are non-staff for the same reason.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from memory.errors import InvalidInput, NotFound, SlowaveError
from memory.models import ApiToken

TOKEN_PREFIX = "swt_"
NAME_MAX = 100


class Unauthorized(SlowaveError):
    code = "unauthorized"
    retryable = False


class Forbidden(SlowaveError):
    code = "forbidden"
    retryable = False


@dataclass(frozen=True)
class Caller:
    """Who is calling: `via` is `token`, `env_token` or `loopback`."""

    via: str
    name: str
    is_staff: bool = False
    user_id: int | None = None

    @property
    def client_identity(self) -> str:
        """Identity recorded on sessions: the token's user, else the server's configured one
        (so a continuity begun over stdio MCP carries on over tokenless or env-token REST)."""
        return self.name if self.via == "token" else settings.SLOWAVE_CLIENT_IDENTITY


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_create(*, username: str, name: str, now: datetime) -> tuple[ApiToken, str]:
    """A new token for an existing user; the plaintext is returned once and never stored."""
    label = (name or "").strip()
    if not label or len(label) > NAME_MAX:
        raise InvalidInput.for_field("name", f"a label of 1–{NAME_MAX} characters is required")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"no user {username!r}; create one with `slowave createadmin`")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(
        user=user, name=label, token_hash=token_hash(token), created_at=now
    )
    return row, token


def token_revoke(
    *,
    token_id: int | None = None,
    name: str | None = None,
    username: str | None = None,
    now: datetime,
) -> list[ApiToken]:
    """Revoke by row id, or by label (optionally for one user); returns the rows revoked.
    NotFound when no active token matches, so a typo is not mistaken for success."""
    rows = ApiToken.objects.filter(revoked_at__isnull=True)
    if token_id is not None:
        rows = rows.filter(pk=token_id)
    elif name:
        rows = rows.filter(name=name)
    else:
        raise InvalidInput("give a token id or --name to revoke")
    if username:
        rows = rows.filter(user__username=username)
    with transaction.atomic():
        found = list(rows.select_for_update())
        ApiToken.objects.filter(pk__in=[r.pk for r in found]).update(revoked_at=now)
    if not found:
        raise NotFound("no active token matches; `slowave token list` shows them")
    return found


def token_list() -> list[dict[str, object]]:
    return [
        {
            "id": row.pk,
            "user": row.user.username,
            "name": row.name,
            "created_at": row.created_at,
            "last_used_at": row.last_used_at,
            "revoked_at": row.revoked_at,
        }
        for row in ApiToken.objects.select_related("user").order_by("pk")
    ]


def is_loopback(address: str | None) -> bool:
    if not address:
        return False
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def bearer_of(header: str | None) -> str | None:
    """The token in `Authorization: Bearer <token>`; '' for a malformed header, None if absent."""
    if header is None:
        return None
    scheme, _, value = header.strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def caller_authenticate(*, token: str | None, remote_addr: str | None, now: datetime) -> Caller:
    """The caller behind a request, or Unauthorized. A presented token is always checked,
    even from loopback: a revoked token must fail rather than fall back to anonymous."""
    if token is None:
        if settings.SLOWAVE_ALLOW_ANONYMOUS_LOCAL and is_loopback(remote_addr):
            return Caller(via="loopback", name="anonymous-local")
        raise Unauthorized("a bearer token is required (Authorization: Bearer <token>)")
    if not token:
        raise Unauthorized("malformed Authorization header; expected `Bearer <token>`")
    # compare_digest on each configured token: no timing hint about which prefix matched.
    for configured in settings.SLOWAVE_API_TOKENS:
        if hmac.compare_digest(configured.encode(), token.encode()):
            return Caller(via="env_token", name="env-token")
    row = ApiToken.objects.select_related("user").filter(token_hash=token_hash(token)).first()
    if row is None or row.revoked_at is not None or not row.user.is_active:
        raise Unauthorized("invalid or revoked token")
    ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return Caller(
        via="token", name=row.user.get_username(), is_staff=row.user.is_staff, user_id=row.user.pk
    )


def caller_require_staff(caller: Caller) -> None:
    if not caller.is_staff:
        raise Forbidden("staff only: use an API token of a staff user (`slowave token create`)")
