"""Replies of the REST routes: the MCP envelope as pydantic models, and the declared statuses.

Every route answers `{"ok": true, "data": ...}` (OkOut) or the error envelope (ErrorOut),
whose HTTP status slowave_site/api.py derives from the error code.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


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
        "internal_error",
    ]
    message: str
    retryable: bool
    field_errors: list[FieldErrorOut] | None = None
    outstanding: Any = None


class ErrorOut(BaseModel):
    """The error envelope; its HTTP status comes from `code` (slowave_site/api.py)."""

    ok: Literal[False]
    error: ErrorDetailOut


def _answers(*statuses: int) -> dict[int, type[BaseModel]]:
    """Declared responses: the envelope on 200, the error envelope on every listed status
    (500 internal_error and 503 storage_busy can come from any route that reads the store)."""
    return {200: OkOut, **dict.fromkeys((*statuses, 500, 503), ErrorOut)}


VERB = _answers(400, 401, 404, 409)
READ = _answers(400, 401, 404)
STAFF = _answers(400, 401, 403, 404)


def ok(data: Any) -> dict[str, Any]:
    """The success envelope around `data`."""
    return {"ok": True, "data": data}
