"""The five agent verbs over REST: the MCP tools' bodies in, the MCP envelope out."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from django.utils.module_loading import import_string
from ninja import Router

from memory.api.auth import caller_of
from memory.api.bodies import body_doc, parse_body
from memory.api.replies import VERB, ok
from memory.schemas import ActivateIn, CommitIn, FeedbackIn, RecallIn, RememberIn

router = Router()


def _call(service_path: str, **kwargs: Any) -> dict[str, Any]:
    # Imported on first call, like the MCP tool table: route import stays cheap.
    return ok(import_string(service_path)(now=timezone.now(), **kwargs))


@router.post(
    "/activate",
    response=VERB,
    openapi_extra=body_doc(ActivateIn),
    summary="slowave_activate",
    operation_id="memory_api_activate",
)
def activate(request: HttpRequest) -> dict[str, Any]:
    from memory.services.sessions import ClientInfo

    client = ClientInfo(
        name=request.headers.get("X-Slowave-Client", "rest")[:100],
        version=request.headers.get("X-Slowave-Client-Version", "")[:50],
        identity=caller_of(request).client_identity,
    )
    data = parse_body(request, ActivateIn)
    return _call("memory.services.activate.session_activate", data=data, client=client)


@router.post(
    "/remember",
    response=VERB,
    openapi_extra=body_doc(RememberIn),
    summary="slowave_remember",
    operation_id="memory_api_remember",
)
def remember(request: HttpRequest) -> dict[str, Any]:
    return _call("memory.services.remember.memory_remember", data=parse_body(request, RememberIn))


@router.post(
    "/recall",
    response=VERB,
    openapi_extra=body_doc(RecallIn),
    summary="slowave_recall",
    operation_id="memory_api_recall",
)
def recall(request: HttpRequest) -> dict[str, Any]:
    return _call("memory.services.recall.retrieval_recall", data=parse_body(request, RecallIn))


@router.post(
    "/feedback",
    response=VERB,
    openapi_extra=body_doc(FeedbackIn),
    summary="slowave_feedback",
    operation_id="memory_api_feedback",
)
def feedback(request: HttpRequest) -> dict[str, Any]:
    return _call("memory.services.feedback.feedback_submit", data=parse_body(request, FeedbackIn))


@router.post(
    "/commit",
    response=VERB,
    openapi_extra=body_doc(CommitIn),
    summary="slowave_commit",
    operation_id="memory_api_commit",
)
def commit(request: HttpRequest) -> dict[str, Any]:
    return _call("memory.services.commit.session_commit", data=parse_body(request, CommitIn))
