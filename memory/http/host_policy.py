"""Which HTTP requests may reach `/api/` and `/mcp` at all: their Host, Origin and Content-Type.

Tokenless loopback access (the default) trusts whatever reaches 127.0.0.1, and a web page in
the user's browser can: through DNS rebinding (its own name re-pointed at 127.0.0.1, so its
requests carry that name in Host) it can read every memory, and with a "simple" cross-site
POST (text/plain, sent without a CORS preflight) it can open sessions and write. So:

- Host must name an allowed host (settings.ALLOWED_HOSTS: localhost, 127.0.0.1, [::1],
  SLOWAVE_HOST and SLOWAVE_ALLOWED_HOSTS), else 421 host_not_allowed;
- Origin, when a browser sends one, must be such a host too, else 403 origin_not_allowed;
- a write (POST, PUT, PATCH, DELETE) that carries a body or declares a type must be
  `application/json`, else 415 unsupported_media_type. A page can only send JSON cross-site
  after a CORS preflight, which this server never grants.

Here: the rule (`request_refusal`), shared by both surfaces, and the Django middleware that
applies it to `/api/` and `/metrics` with the API's error envelope; mcp_bridge/http.py applies
it to `/mcp`.
Not here: the list itself (slowave_site/settings.py), and the admin, which keeps Django's own
ALLOWED_HOSTS and CSRF checks (its same-origin form posts are not JSON and need not be).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.request import split_domain_port, validate_host
from django.utils.decorators import sync_and_async_middleware

from memory.errors import HostNotAllowed, OriginNotAllowed, SlowaveError, UnsupportedMediaType
from memory.http.status import status_for

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
API_PREFIX = "/api/"
# /metrics (slowave_site.metrics) tells what the memory holds: it gets the same rule as /api/.
GUARDED_PREFIXES = (API_PREFIX, "/metrics")
_ECHO = 80  # characters of a refused header quoted back: enough to recognise it


def host_allowed(host: str) -> bool:
    """`host` (a Host header, port included or not) names a host in settings.ALLOWED_HOSTS."""
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


def origin_allowed(origin: str) -> bool:
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and host_allowed(parts.netloc)


def is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def request_refusal(
    *,
    method: str,
    host: str,
    origin: str | None,
    content_type: str | None,
    content_length: str | None,
    chunked: bool,
) -> SlowaveError | None:
    """The error a request to `/api/` or `/mcp` is refused with, or None if it may go on.

    The arguments are the request's headers (None when absent); `chunked` is whether it has
    a Transfer-Encoding, the other way to send a body."""
    has_body = chunked or (content_length or "0").strip() not in ("", "0")
    if not host_allowed(host):
        return HostNotAllowed(
            f"Host {host[:_ECHO]!r} is not a name this server answers to (DNS-rebinding "
            "protection): call it as localhost or 127.0.0.1, or add the name to "
            "SLOWAVE_ALLOWED_HOSTS"
        )
    if origin is not None and not origin_allowed(origin):
        return OriginNotAllowed(
            f"Origin {origin[:_ECHO]!r} is not allowed: web pages on other sites may not call "
            "this server; call it from a program, or add the page's host to "
            "SLOWAVE_ALLOWED_HOSTS"
        )
    if method.upper() in WRITES and (has_body or content_type) and not is_json(content_type or ""):
        got = (content_type or "none")[:_ECHO]
        return UnsupportedMediaType(
            f"a {method.upper()} body must be JSON: send Content-Type: application/json (got {got})"
        )
    return None


def _refusal_of(request: HttpRequest) -> SlowaveError | None:
    meta = request.META
    return request_refusal(
        method=request.method or "GET",
        host=meta.get("HTTP_HOST") or meta.get("SERVER_NAME", ""),
        origin=meta.get("HTTP_ORIGIN"),
        content_type=meta.get("CONTENT_TYPE") or None,
        content_length=meta.get("CONTENT_LENGTH"),
        chunked="HTTP_TRANSFER_ENCODING" in meta,
    )


def _refused(request: HttpRequest) -> HttpResponse | None:
    if not request.path_info.startswith(GUARDED_PREFIXES):
        return None
    error = _refusal_of(request)
    if error is None:
        return None
    return JsonResponse(
        {"ok": False, "error": error.as_error()},
        status=status_for(error.code),
        content_type="application/json; charset=utf-8",  # as ninja answers the routes
    )


@sync_and_async_middleware
def host_policy_middleware(get_response: Callable[[HttpRequest], Any]) -> Any:
    """First in MIDDLEWARE, so a refused host gets this envelope, not Django's HTML 400."""
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponse:
            return _refused(request) or await get_response(request)

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        return _refused(request) or get_response(request)

    return middleware
