"""ninja auth for the REST routes: bearer token or tokenless loopback, and a staff-only variant.

The decisions (which token, loopback or not, staff or not) live in memory.services.tokens;
this only hands them the request's header and address. The token lookup reads (and stamps)
the ApiToken row, so it runs in the HTTP worker pool like the routes it guards: a sync auth
on an async route would get a thread of its own per request (ninja's `sync_to_async`).
"""

from __future__ import annotations

from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer

from memory.http.workers import run_in_http_worker
from memory.services.tokens import (
    Caller,
    bearer_of,
    caller_authenticate,
    caller_require_staff,
)


class CallerAuth(HttpBearer):
    """Bearer token or tokenless loopback (spec §12); failures raise Unauthorized/Forbidden."""

    staff = False

    async def __call__(self, request: HttpRequest) -> Caller:  # type: ignore[override]
        return await run_in_http_worker(self._caller, request)

    def _caller(self, request: HttpRequest) -> Caller:
        caller = caller_authenticate(
            token=bearer_of(request.headers.get("Authorization")),
            remote_addr=request.META.get("REMOTE_ADDR"),
            now=timezone.now(),
        )
        if self.staff:
            caller_require_staff(caller)
        return caller

    def authenticate(self, request: HttpRequest, token: str) -> Caller:  # pragma: no cover
        raise NotImplementedError  # __call__ handles every request itself


class StaffAuth(CallerAuth):
    staff = True


class AgentAuth(CallerAuth):
    """CallerAuth under the name of the agent verbs' security scheme in the OpenAPI document
    (ninja names schemes after auth classes), so the verbs keep the scheme they documented."""


def caller_of(request: HttpRequest) -> Caller:
    """The caller the route's auth class put on the request."""
    return request.auth  # type: ignore[attr-defined]
