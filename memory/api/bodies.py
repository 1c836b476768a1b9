"""Request bodies of the REST routes: the REST-only models, their OpenAPI `$ref`s, the parser.

The agent verbs take the MCP tools' own models (memory.schemas); ReasonIn and ImportIn exist
only over REST. Routes read the raw body themselves (`parse_body`) so bad JSON yields the
invalid_input envelope, exactly as over MCP; `body_doc` therefore documents each requestBody
as a `$ref` to a component that slowave_site/api.py adds from BODY_MODELS.
"""

from __future__ import annotations

from typing import Any, Literal

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memory.errors import InvalidInput
from memory.schemas import (
    ActivateIn,
    CommitIn,
    FeedbackIn,
    JsonTooDeep,
    RecallIn,
    RememberIn,
    RuleViolation,
    check_scope,
    json_loads,
    parse_input,
)

REF_TEMPLATE = "#/components/schemas/{model}"


class ReasonIn(BaseModel):
    """Body of the staff forget/unforget routes."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    reason: str = Field("", max_length=500, description="Why (required to forget; 1–500 chars).")


class ImportIn(BaseModel):
    """Body of `POST /api/import`: what `slowave import FILE` reads, with the file inline."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["transcript", "export", "claude-code", "codex", "chatgpt"] = Field(
        "transcript",
        description="transcript: JSONL conversation lines; export: a Slowave export; "
        "claude-code: one Claude Code session transcript (.jsonl); codex: one Codex rollout "
        "file (rollout-*.jsonl); chatgpt: a ChatGPT export's conversations.json",
    )
    content: str = Field(
        min_length=1,
        description="The JSONL file's text, one record per line (as in the file); at most "
        "SLOWAVE_IMPORT_MAX_BYTES bytes in UTF-8, as `slowave import` takes.",
    )
    scope: str | None = Field(
        None,
        description="Target scope kind:id; required for transcripts, refused for exports; "
        "claude-code and codex default to project:<basename of the recorded cwd>, chatgpt "
        "to project:chatgpt.",
    )
    dry_run: bool = Field(False, description="Not for exports: validate and report, write nothing.")
    remap: bool = Field(False, description="Exports only: renumber integer ids already in use.")

    @field_validator("scope")
    @classmethod
    def _scope(cls, value: str | None) -> str | None:
        return None if value is None else check_scope(value.strip())

    @model_validator(mode="after")
    def _per_format(self) -> ImportIn:
        if self.format != "export":
            if self.scope is None and self.format == "transcript":
                raise RuleViolation("scope", "scope is required for a transcript import")
            if self.remap:
                raise RuleViolation("remap", "remap applies to format export only")
        else:
            if self.scope is not None:
                raise RuleViolation("scope", "scope applies to format transcript only")
            if self.dry_run:
                raise RuleViolation("dry_run", "dry_run applies to format transcript only")
        return self


# Models whose schemas slowave_site/api.py adds to the OpenAPI components.
BODY_MODELS: tuple[type[BaseModel], ...] = (
    ActivateIn,
    RememberIn,
    RecallIn,
    FeedbackIn,
    CommitIn,
    ReasonIn,
    ImportIn,
)


def body_doc(model: type[BaseModel], *, required: bool = True) -> dict[str, Any]:
    """`openapi_extra` for a route that parses `model` from its raw body."""
    ref = {"$ref": REF_TEMPLATE.format(model=model.__name__)}
    return {"requestBody": {"required": required, "content": {"application/json": {"schema": ref}}}}


def _invalid_body(message: str) -> InvalidInput:
    return InvalidInput(message, field_errors=[{"path": "", "message": message}])


def _read(request: HttpRequest, max_bytes: int | None, too_big: str) -> bytes:
    if max_bytes is None:
        try:
            return request.body
        except RequestDataTooBig:
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            raise _invalid_body(f"request body is larger than {limit} bytes") from None
    body = request.read(max_bytes + 1)  # past Django's own cap, which is for the other routes
    if len(body) > max_bytes:
        raise _invalid_body(f"request body is larger than {max_bytes} bytes{too_big}")
    return body


def parse_body(
    request: HttpRequest,
    model: type[BaseModel],
    *,
    empty_ok: bool = False,
    max_bytes: int | None = None,
    too_big: str = "",
) -> Any:
    """The request's JSON body validated as `model`; an empty body is `{}` when `empty_ok`.

    The body may be DATA_UPLOAD_MAX_MEMORY_SIZE bytes, or `max_bytes` (`too_big` then adds
    why to the refusal)."""
    body = _read(request, max_bytes, too_big)
    raw: Any = {}
    if body.strip() or not empty_ok:
        try:
            raw = json_loads(body, whole="the body")
        except JsonTooDeep as exc:
            raise InvalidInput.for_field_message(exc.field, exc.message) from None
        except (ValueError, UnicodeDecodeError):
            raise _invalid_body("request body must be a JSON object") from None
    return parse_input(model, raw)
