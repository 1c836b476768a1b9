"""The five agent verbs over REST: `POST /api/<verb>` for each verb of memory.verbs, the MCP
tools' bodies in, the MCP envelope out.

The views are async only to hand their work (token check, body parsing, the service) to the
HTTP worker pool that MCP tool calls use (memory.http.workers): as sync views, Django
would run each request in a thread of its own, however many arrive at once. A long body waits
for a heavy lane first, as a long MCP tool call does.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest
from django.utils import timezone
from ninja import Router

from memory import instruments
from memory.api.auth import AgentAuth, caller_of
from memory.api.bodies import body_doc, parse_body
from memory.api.replies import VERB, VERB_REPLIES, Ok, ok, reply_doc
from memory.errors import as_slowave_error
from memory.http.workers import admitted, run_in_http_worker
from memory.services.sessions import ClientInfo
from memory.verbs import VERBS, Verb

router = Router(auth=AgentAuth())


def _run(verb: Verb, request: HttpRequest) -> Ok[Any]:
    kwargs: dict[str, Any] = {"data": parse_body(request, verb.model), "now": timezone.now()}
    if verb.takes_client:
        kwargs["client"] = ClientInfo(
            name=request.headers.get("X-Slowave-Client", "rest")[:100],
            version=request.headers.get("X-Slowave-Client-Version", "")[:50],
            identity=caller_of(request).client_identity,
        )
    return ok(verb.service(**kwargs))


def _size(request: HttpRequest) -> int:
    try:
        return len(request.body)
    except RequestDataTooBig:
        return 0  # refused by parse_body, at no cost


def _view(verb: Verb) -> Callable[[HttpRequest], Awaitable[Ok[Any]]]:
    async def view(request: HttpRequest) -> Ok[Any]:
        started, code = time.perf_counter(), "ok"
        try:
            async with admitted(size=_size(request)):
                return await run_in_http_worker(_run, verb, request)
        except Exception as exc:
            code = as_slowave_error(exc).code  # what slowave_site.api will answer with
            raise
        finally:
            instruments.call_finished(
                surface="rest", tool=verb.name, code=code, seconds=time.perf_counter() - started
            )

    view.__name__ = verb.route
    return view


# route -> view, for the callers that reach a view without a request through the router
VIEWS = {verb.route: _view(verb) for verb in VERBS.values()}
for _verb in VERBS.values():
    router.add_api_operation(
        f"/{_verb.route}",
        ["POST"],
        VIEWS[_verb.route],
        response=VERB,
        openapi_extra=body_doc(_verb.model) | reply_doc(VERB_REPLIES[_verb.name]),
        summary=_verb.name,
        # What the ids were when each verb had a view of its own: client generators name
        # methods after them.
        operation_id=f"memory_api_{_verb.route}",
    )
