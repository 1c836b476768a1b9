"""The five agent verbs over REST: the MCP tools' bodies in, the MCP envelope out.

The views are async only to hand their work (token check, body parsing, the service) to the
HTTP worker pool that MCP tool calls use (memory.http.workers): as sync views, Django
would run each request in a thread of its own, however many arrive at once. A long body waits
for a heavy lane first, as a long MCP tool call does.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest
from django.utils import timezone
from django.utils.module_loading import import_string
from ninja import Router
from pydantic import BaseModel

from memory import instruments
from memory.api.auth import AgentAuth, caller_of
from memory.api.bodies import body_doc, parse_body
from memory.api.replies import (
    VERB,
    ActivateReply,
    CommitReply,
    FeedbackReply,
    RecallReply,
    RememberReply,
    ok,
    reply_doc,
)
from memory.errors import as_slowave_error
from memory.http.workers import admitted, run_in_http_worker
from memory.schemas import ActivateIn, CommitIn, FeedbackIn, RecallIn, RememberIn

router = Router(auth=AgentAuth())


def _run(
    service_path: str, request: HttpRequest, model: type[BaseModel], **kwargs: Any
) -> dict[str, Any]:
    data = parse_body(request, model)
    # Imported on first call, like the MCP tool table: route import stays cheap.
    return ok(import_string(service_path)(now=timezone.now(), data=data, **kwargs))


async def _call(
    service_path: str, request: HttpRequest, model: type[BaseModel], **kwargs: Any
) -> dict[str, Any]:
    started, code = time.perf_counter(), "ok"
    try:
        async with admitted(size=_size(request)):
            return await run_in_http_worker(_run, service_path, request, model, **kwargs)
    except Exception as exc:
        code = as_slowave_error(exc).code  # what slowave_site.api will answer with
        raise
    finally:
        instruments.call_finished(
            surface="rest",
            tool="slowave_" + model.__name__.removesuffix("In").lower(),  # as the MCP tool
            code=code,
            seconds=time.perf_counter() - started,
        )


def _size(request: HttpRequest) -> int:
    try:
        return len(request.body)
    except RequestDataTooBig:
        return 0  # refused by parse_body, at no cost


@router.post(
    "/activate",
    response=VERB,
    openapi_extra=body_doc(ActivateIn) | reply_doc(ActivateReply),
    summary="slowave_activate",
    operation_id="memory_api_activate",
)
async def activate(request: HttpRequest) -> dict[str, Any]:
    from memory.services.sessions import ClientInfo

    client = ClientInfo(
        name=request.headers.get("X-Slowave-Client", "rest")[:100],
        version=request.headers.get("X-Slowave-Client-Version", "")[:50],
        identity=caller_of(request).client_identity,
    )
    return await _call(
        "memory.services.activate.session_activate", request, ActivateIn, client=client
    )


@router.post(
    "/remember",
    response=VERB,
    openapi_extra=body_doc(RememberIn) | reply_doc(RememberReply),
    summary="slowave_remember",
    operation_id="memory_api_remember",
)
async def remember(request: HttpRequest) -> dict[str, Any]:
    return await _call("memory.services.remember.memory_remember", request, RememberIn)


@router.post(
    "/recall",
    response=VERB,
    openapi_extra=body_doc(RecallIn) | reply_doc(RecallReply),
    summary="slowave_recall",
    operation_id="memory_api_recall",
)
async def recall(request: HttpRequest) -> dict[str, Any]:
    return await _call("memory.services.recall.retrieval_recall", request, RecallIn)


@router.post(
    "/feedback",
    response=VERB,
    openapi_extra=body_doc(FeedbackIn) | reply_doc(FeedbackReply),
    summary="slowave_feedback",
    operation_id="memory_api_feedback",
)
async def feedback(request: HttpRequest) -> dict[str, Any]:
    return await _call("memory.services.feedback.feedback_submit", request, FeedbackIn)


@router.post(
    "/commit",
    response=VERB,
    openapi_extra=body_doc(CommitIn) | reply_doc(CommitReply),
    summary="slowave_commit",
    operation_id="memory_api_commit",
)
async def commit(request: HttpRequest) -> dict[str, Any]:
    return await _call("memory.services.commit.session_commit", request, CommitIn)
