"""REST routes under `/api/` (spec §12): the five agent verbs, read-only inspection, staff controls.

Adapters only: each route authenticates (ninja `auth`), validates the raw body with the same
pydantic models as the MCP tools (`parse_input`), calls a service or selector and returns the
MCP envelope. Errors are raised and mapped to HTTP statuses in slowave_site/api.py.
Reads never create a Retrieval or Exposure: inspecting memory is not an agent being shown it.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.module_loading import import_string
from ninja import Query, Router, Schema
from ninja.security import HttpBearer
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memory.errors import InvalidInput, NotFound
from memory.ids import memory_ref
from memory.models import Memory, Procedure, Retrieval, Session
from memory.schemas import (
    ActivateIn,
    CommitIn,
    FeedbackIn,
    RecallIn,
    RememberIn,
    RuleViolation,
    check_scope,
    parse_input,
)
from memory.selectors import (
    evidence_as_data,
    memory_evidence,
    memory_get,
    record_of,
    retrieval_detail,
    scope_stats,
    session_detail,
)
from memory.services.tokens import (
    Caller,
    bearer_of,
    caller_authenticate,
    caller_require_staff,
)

REF_TEMPLATE = "#/components/schemas/{model}"
PAGE_MAX = 200
OFFSET_MAX = 1_000_000_000  # far past any store; beyond 2**63 SQLite cannot even bind it


class ReasonIn(BaseModel):
    """Body of the staff forget/unforget routes."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    reason: str = Field("", max_length=500, description="Why (required to forget; 1–500 chars).")


class ImportIn(BaseModel):
    """Body of `POST /api/import`: what `slowave import FILE` reads, with the file inline."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["transcript", "export"] = Field(
        "transcript", description="transcript: JSONL conversation lines; export: a Slowave export"
    )
    content: str = Field(
        min_length=1, description="The JSONL file's text, one record per line (as in the file)."
    )
    scope: str | None = Field(
        None, description="Target scope kind:id; required for transcripts, refused for exports."
    )
    dry_run: bool = Field(
        False, description="Transcripts only: validate and report, write nothing."
    )
    remap: bool = Field(False, description="Exports only: renumber integer ids already in use.")

    @field_validator("scope")
    @classmethod
    def _scope(cls, value: str | None) -> str | None:
        return None if value is None else check_scope(value.strip())

    @model_validator(mode="after")
    def _per_format(self) -> ImportIn:
        if self.format == "transcript":
            if self.scope is None:
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


def _body_doc(model: type[BaseModel], *, required: bool = True) -> dict[str, Any]:
    ref = {"$ref": REF_TEMPLATE.format(model=model.__name__)}
    return {"requestBody": {"required": required, "content": {"application/json": {"schema": ref}}}}


class CallerAuth(HttpBearer):
    """Bearer token or tokenless loopback (spec §12); failures raise Unauthorized/Forbidden."""

    staff = False

    def __call__(self, request: HttpRequest) -> Caller:
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


router = Router(auth=CallerAuth(), tags=["slowave"])


def _invalid_body(message: str) -> InvalidInput:
    return InvalidInput(message, field_errors=[{"path": "", "message": message}])


def _parse(request: HttpRequest, model: type[BaseModel], *, empty_ok: bool = False) -> Any:
    try:
        body = request.body
    except RequestDataTooBig:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raise _invalid_body(f"request body is larger than {limit} bytes") from None
    raw: Any = {}
    if body.strip() or not empty_ok:
        try:
            raw = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise _invalid_body("request body must be a JSON object") from None
    return parse_input(model, raw)


def _ok(data: Any) -> dict[str, Any]:
    return {"ok": True, "data": data}


def _call(service_path: str, **kwargs: Any) -> dict[str, Any]:
    # Imported on first call, like the MCP tool table: route import stays cheap.
    return _ok(import_string(service_path)(now=timezone.now(), **kwargs))


# --- the five agent verbs -------------------------------------------------------------------


@router.post(
    "/activate", response=VERB, openapi_extra=_body_doc(ActivateIn), summary="slowave_activate"
)
def activate(request: HttpRequest) -> dict[str, Any]:
    from memory.services.sessions import ClientInfo

    caller: Caller = request.auth  # type: ignore[attr-defined]
    client = ClientInfo(
        name=request.headers.get("X-Slowave-Client", "rest")[:100],
        version=request.headers.get("X-Slowave-Client-Version", "")[:50],
        identity=caller.client_identity,
    )
    data = _parse(request, ActivateIn)
    return _call("memory.services.activate.session_activate", data=data, client=client)


@router.post(
    "/remember", response=VERB, openapi_extra=_body_doc(RememberIn), summary="slowave_remember"
)
def remember(request: HttpRequest) -> dict[str, Any]:
    return _call("memory.services.remember.memory_remember", data=_parse(request, RememberIn))


@router.post("/recall", response=VERB, openapi_extra=_body_doc(RecallIn), summary="slowave_recall")
def recall(request: HttpRequest) -> dict[str, Any]:
    return _call("memory.services.recall.retrieval_recall", data=_parse(request, RecallIn))


@router.post(
    "/feedback", response=VERB, openapi_extra=_body_doc(FeedbackIn), summary="slowave_feedback"
)
def feedback(request: HttpRequest) -> dict[str, Any]:
    return _call("memory.services.feedback.feedback_submit", data=_parse(request, FeedbackIn))


@router.post("/commit", response=VERB, openapi_extra=_body_doc(CommitIn), summary="slowave_commit")
def commit(request: HttpRequest) -> dict[str, Any]:
    return _call("memory.services.commit.session_commit", data=_parse(request, CommitIn))


# --- read-only inspection -------------------------------------------------------------------


class Page(Schema):
    limit: int = Field(50, ge=1, le=PAGE_MAX)
    offset: int = Field(0, ge=0, le=OFFSET_MAX)


class MemoryFilters(Page):
    scope: str | None = None
    status: str | None = None
    type: str | None = None
    q: str | None = Field(None, description="substring of the content (case-insensitive)")


class ScopeFilters(Page):
    scope: str | None = None
    status: str | None = None


def _paged(qs: QuerySet[Any], page: Page, key: str, row: Any) -> dict[str, Any]:
    total = qs.count()
    items = [row(obj) for obj in qs[page.offset : page.offset + page.limit]]
    return _ok({key: items, "total": total, "limit": page.limit, "offset": page.offset})


def _memory_row(memory: Memory) -> dict[str, Any]:
    record = record_of(memory)
    record["id"] = memory_ref(memory.pk)
    for fk in ("superseded_by_id", "duplicate_of_id"):
        record[fk] = memory_ref(record[fk]) if record[fk] else None
    return record


def _scoped(qs: QuerySet[Any], filters: ScopeFilters) -> QuerySet[Any]:
    if filters.scope:
        qs = qs.filter(scope=filters.scope)
    if filters.status:
        qs = qs.filter(status=filters.status)
    return qs


@router.get("/memories", response=READ)
def memories(request: HttpRequest, filters: Query[MemoryFilters]) -> dict[str, Any]:
    qs = _scoped(Memory.objects.all(), filters)  # type: ignore[arg-type]
    if filters.type:
        qs = qs.filter(type=filters.type)
    if filters.q:
        qs = qs.filter(content__icontains=filters.q)
    return _paged(qs.order_by("-pk"), filters, "memories", _memory_row)


@router.get("/memories/{memory_id}", response=READ)
def memory(request: HttpRequest, memory_id: str) -> dict[str, Any]:
    found = memory_get(memory_id=memory_id)
    if found is None:
        raise NotFound(f"no memory {memory_id}; GET /api/memories?q=… finds ids")
    return _ok(evidence_as_data(memory_evidence(memory=found)))


@router.get("/sessions", response=READ)
def sessions(request: HttpRequest, filters: Query[ScopeFilters]) -> dict[str, Any]:
    qs = _scoped(Session.objects.all(), filters).order_by("-started_at", "-pk")
    return _paged(qs, filters, "sessions", record_of)


@router.get("/sessions/{session_id}", response=READ)
def session(request: HttpRequest, session_id: str) -> dict[str, Any]:
    found = Session.objects.filter(pk=session_id).first()
    if found is None:
        raise NotFound(f"no session {session_id}; GET /api/sessions lists them")
    detail = session_detail(session=found)
    return _ok(
        {
            "session": record_of(found),
            "events": [record_of(e) for e in detail["events"]],
            "retrievals": [
                {
                    "id": r["retrieval"].pk,
                    "kind": r["retrieval"].kind,
                    "exposed": r["exposed"],
                    "gap": r["gap"],
                }
                for r in detail["retrievals"]
            ],
            "feedback_complete": detail["complete"],
            "memories": [memory_ref(m.pk) for m in detail["memories"]],
            "procedure": detail["procedure"].pk if detail["procedure"] else None,
        }
    )


@router.get("/retrievals/{retrieval_id}", response=READ)
def retrieval(request: HttpRequest, retrieval_id: str) -> dict[str, Any]:
    found = Retrieval.objects.filter(pk=retrieval_id).first()
    if found is None:
        raise NotFound(f"no retrieval {retrieval_id}")
    detail = retrieval_detail(retrieval=found)
    record = record_of(found)
    record.pop("catalog", None)  # internal paging state, not evidence
    return _ok(
        {
            "retrieval": record,
            "exposures": [
                {
                    "target_kind": r["exposure"].target_kind,
                    "target_id": r["exposure"].target_id,
                    "pathway": r["exposure"].pathway,
                    "rank": r["exposure"].rank,
                    "feedback": r["feedback"],
                    "missing": r["missing"],
                }
                for r in detail["rows"]
            ],
            "missing_count": detail["missing_count"],
        }
    )


@router.get("/procedures", response=READ)
def procedures(request: HttpRequest, filters: Query[ScopeFilters]) -> dict[str, Any]:
    qs = _scoped(Procedure.objects.all(), filters).order_by("-created_at", "-pk")
    return _paged(qs, filters, "procedures", record_of)


@router.get("/procedures/{procedure_id}", response=READ)
def procedure(request: HttpRequest, procedure_id: str) -> dict[str, Any]:
    found = Procedure.objects.filter(pk=procedure_id).first()
    if found is None:
        raise NotFound(f"no procedure {procedure_id}; GET /api/procedures lists them")
    return _ok(record_of(found))


@router.get("/stats", response=READ)
def stats(request: HttpRequest, scope: str | None = None) -> dict[str, Any]:
    return _ok(scope_stats(scope=scope))


@router.get("/health", auth=None, response={200: OkOut})
def health(request: HttpRequest) -> dict[str, Any]:
    return _ok({"status": "ok"})


# --- staff controls (spec §10) --------------------------------------------------------------


def _control(request: HttpRequest, action: str, ref: str, *, empty_ok: bool) -> dict[str, Any]:
    from memory.services.forgetting import control_forget, control_unforget

    caller: Caller = request.auth  # type: ignore[attr-defined]
    body = _parse(request, ReasonIn, empty_ok=empty_ok)
    actor = f"api:{caller.name}"
    if action == "forget":
        result = control_forget(ref=ref, reason=body.reason, actor=actor, now=timezone.now())
    else:
        result = control_unforget(ref=ref, reason=body.reason, actor=actor, now=timezone.now())
    return _ok(result.as_dict())


def _memory_id(memory_id: str) -> str:
    if not memory_id.startswith("sch_"):
        raise InvalidInput.for_field("id", f"expected a memory id sch_N, got {memory_id!r}")
    return memory_id


def _procedure_id(procedure_id: str) -> str:
    if not procedure_id.startswith("proc_"):
        raise InvalidInput.for_field("id", f"expected a procedure id proc_…, got {procedure_id!r}")
    return procedure_id


@router.post(
    "/memories/{memory_id}/forget",
    auth=StaffAuth(),
    response=STAFF,
    openapi_extra=_body_doc(ReasonIn),
)
def memory_forget(request: HttpRequest, memory_id: str) -> dict[str, Any]:
    return _control(request, "forget", _memory_id(memory_id), empty_ok=False)


@router.post(
    "/memories/{memory_id}/unforget",
    auth=StaffAuth(),
    response=STAFF,
    openapi_extra=_body_doc(ReasonIn, required=False),
)
def memory_unforget(request: HttpRequest, memory_id: str) -> dict[str, Any]:
    return _control(request, "unforget", _memory_id(memory_id), empty_ok=True)


@router.post(
    "/procedures/{procedure_id}/forget",
    auth=StaffAuth(),
    response=STAFF,
    openapi_extra=_body_doc(ReasonIn),
)
def procedure_forget(request: HttpRequest, procedure_id: str) -> dict[str, Any]:
    return _control(request, "forget", _procedure_id(procedure_id), empty_ok=False)


@router.post(
    "/procedures/{procedure_id}/unforget",
    auth=StaffAuth(),
    response=STAFF,
    openapi_extra=_body_doc(ReasonIn, required=False),
)
def procedure_unforget(request: HttpRequest, procedure_id: str) -> dict[str, Any]:
    return _control(request, "unforget", _procedure_id(procedure_id), empty_ok=True)


@router.post("/import", auth=StaffAuth(), response=STAFF, openapi_extra=_body_doc(ImportIn))
def import_file(request: HttpRequest) -> dict[str, Any]:
    """Staff: load a transcript or export, all or nothing (same services as `slowave import`)."""
    from memory.services.export_load import export_import
    from memory.services.transcripts import transcripts_import

    body: ImportIn = _parse(request, ImportIn)
    lines = body.content.splitlines()
    now = timezone.now()
    try:
        with transaction.atomic():
            if body.format == "export":
                return _ok(export_import(lines=lines, now=now, remap=body.remap))
            return _ok(
                transcripts_import(lines=lines, scope=body.scope, now=now, dry_run=body.dry_run)
            )
    except InvalidInput as exc:
        if exc.field_errors:
            raise
        # The loaders name the line in the message; the body field it came from is `content`.
        raise InvalidInput.for_field_message("content", exc.message) from None
