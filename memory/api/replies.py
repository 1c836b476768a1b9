"""Replies of the REST routes: the MCP envelope as pydantic models, and the declared statuses.

Every route answers `{"ok": true, "data": ...}` (OkOut) or the error envelope (ErrorOut),
whose HTTP status slowave_site/api.py derives from the error code. OkOut is what ninja renders
with, and leaves `data` as the service built it; the `<Route>Reply` models, whose `data` is
the TypedDict the service returns (memory.replies), are what the OpenAPI document shows for
each route's 200 (`reply_doc`), like the request bodies (memory/api/bodies.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from memory.api.bodies import REF_TEMPLATE
from memory.replies import reads, records, staff
from memory.replies.envelope import DataT, Ok
from memory.verbs import VERBS


class OkOut(BaseModel):
    """The success envelope every route answers with (HTTP 200)."""

    ok: Literal[True]
    data: dict[str, Any]


class FieldErrorOut(BaseModel):
    path: str = Field(description="dotted path with [i] indices; '' for the whole body")
    message: str


class ErrorDetailOut(BaseModel):
    code: Literal[
        "invalid_input",
        "unauthorized",
        "forbidden",
        "not_found",
        "incomplete_feedback",
        "storage_error",
        "storage_busy",
        "storage_corrupt",
        "storage_read_only",
        "storage_full",
        "storage_missing",
        "internal_error",
        "host_not_allowed",
        "origin_not_allowed",
        "unsupported_media_type",
    ]
    message: str
    retryable: bool
    field_errors: list[FieldErrorOut] | None = None
    outstanding: Any = None


class ErrorOut(BaseModel):
    """The error envelope; its HTTP status comes from `code` (slowave_site/api.py)."""

    ok: Literal[False]
    error: ErrorDetailOut


# Any route: a foreign Origin (403) or Host (421), memory.http.host_policy.
REFUSED = (403, 421)
# Health reads no table: the host policy can refuse it, and a store deleted under the server
# fails it (503 storage_missing).
HEALTH: dict[int, type[BaseModel]] = {200: OkOut, **dict.fromkeys((*REFUSED, 503), ErrorOut)}


def _answers(*statuses: int) -> dict[int, type[BaseModel]]:
    """Declared responses: the envelope on 200, the error envelope on every listed status
    (500 internal_error and 503 storage_busy can come from any route that reads the store)."""
    return {200: OkOut, **dict.fromkeys(sorted({*statuses, *REFUSED, 500, 503}), ErrorOut)}


# Writes also answer 415 to a body that is not declared as JSON.
VERB = _answers(400, 401, 404, 409, 415)
READ = _answers(400, 401, 404)
STAFF = _answers(400, 401, 403, 404, 415)


def ok(data: DataT) -> Ok[DataT]:
    """The success envelope around `data`."""
    return {"ok": True, "data": data}


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _reply(name: str, data: Any) -> type[BaseModel]:
    return create_model(
        name,
        __base__=_Envelope,
        __doc__="The success envelope (HTTP 200).",
        ok=(Literal[True], ...),
        data=(data, ...),
    )


# Each verb's reply: `<Route>Reply` (ActivateReply...), its data the shape the verb declares.
VERB_REPLIES: dict[str, type[BaseModel]] = {
    verb.name: _reply(f"{verb.route.capitalize()}Reply", verb.reply) for verb in VERBS.values()
}
ActivateReply = VERB_REPLIES["slowave_activate"]
RememberReply = VERB_REPLIES["slowave_remember"]
RecallReply = VERB_REPLIES["slowave_recall"]
FeedbackReply = VERB_REPLIES["slowave_feedback"]
CommitReply = VERB_REPLIES["slowave_commit"]
MemoriesReply = _reply("MemoriesReply", reads.MemoriesOut)
MemoryReply = _reply("MemoryReply", reads.MemoryEvidenceOut)
SessionsReply = _reply("SessionsReply", reads.SessionsOut)
SessionReply = _reply("SessionReply", reads.SessionDetailOut)
RetrievalReply = _reply("RetrievalReply", reads.RetrievalDetailOut)
ProceduresReply = _reply("ProceduresReply", reads.ProceduresOut)
ProcedureReply = _reply("ProcedureReply", records.ProcedureRecord)
StatsReply = _reply("StatsReply", reads.StatsOut)
HealthReply = _reply("HealthReply", reads.HealthOut)
ControlReply = _reply("ControlReply", staff.ControlOut)
ImportReply = _reply("ImportReply", staff.ImportOut)

# Models whose schemas slowave_site/api.py adds to the OpenAPI components.
REPLY_MODELS: tuple[type[BaseModel], ...] = (
    ActivateReply,
    RememberReply,
    RecallReply,
    FeedbackReply,
    CommitReply,
    MemoriesReply,
    MemoryReply,
    SessionsReply,
    SessionReply,
    RetrievalReply,
    ProceduresReply,
    ProcedureReply,
    StatsReply,
    HealthReply,
    ControlReply,
    ImportReply,
)


def reply_doc(model: type[BaseModel]) -> dict[str, Any]:
    """`openapi_extra` showing `model` (one of REPLY_MODELS) as the route's 200 reply."""
    ref = {"$ref": REF_TEMPLATE.format(model=model.__name__)}
    return {"responses": {200: {"content": {"application/json": {"schema": ref}}}}}
