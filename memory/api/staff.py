"""Staff controls over REST (spec §10): forget/unforget a memory or procedure, import a file.

Every route here takes a staff user's token (StaffAuth) and calls the same services as the
`slowave forget|unforget|import` commands; the actor recorded is `api:<user>`. The routes are
async only to run that work (body parsing, the service) in the HTTP worker pool the agent
verbs use (memory.http.workers), as verbs.py explains.
"""

from __future__ import annotations

from typing import cast

from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from ninja import Router

from memory.api.auth import StaffAuth, caller_of
from memory.api.bodies import ImportIn, ReasonIn, body_doc, parse_body
from memory.api.replies import STAFF, ControlReply, ImportReply, Ok, ok, reply_doc
from memory.errors import InvalidInput
from memory.http.workers import run_in_http_worker
from memory.replies.staff import ImportOut
from memory.services.export_load import export_import
from memory.services.forgetting import control_forget, control_unforget
from memory.services.import_formats import SourceFile, history_read, history_write
from memory.services.imports import import_limit, import_lines
from memory.services.transcripts import transcripts_import

router = Router()


def _control(
    request: HttpRequest, action: str, ref: str, *, empty_ok: bool
) -> Ok[dict[str, object]]:
    body = parse_body(request, ReasonIn, empty_ok=empty_ok)
    actor = f"api:{caller_of(request).name}"
    if action == "forget":
        result = control_forget(ref=ref, reason=body.reason, actor=actor, now=timezone.now())
    else:
        result = control_unforget(ref=ref, reason=body.reason, actor=actor, now=timezone.now())
    return ok(result.as_dict())


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
    openapi_extra=body_doc(ReasonIn) | reply_doc(ControlReply),
    operation_id="memory_api_memory_forget",
)
async def memory_forget(request: HttpRequest, memory_id: str) -> Ok[dict[str, object]]:
    return await run_in_http_worker(
        _control, request, "forget", _memory_id(memory_id), empty_ok=False
    )


@router.post(
    "/memories/{memory_id}/unforget",
    auth=StaffAuth(),
    response=STAFF,
    openapi_extra=body_doc(ReasonIn, required=False) | reply_doc(ControlReply),
    operation_id="memory_api_memory_unforget",
)
async def memory_unforget(request: HttpRequest, memory_id: str) -> Ok[dict[str, object]]:
    return await run_in_http_worker(
        _control, request, "unforget", _memory_id(memory_id), empty_ok=True
    )


@router.post(
    "/procedures/{procedure_id}/forget",
    auth=StaffAuth(),
    response=STAFF,
    openapi_extra=body_doc(ReasonIn) | reply_doc(ControlReply),
    operation_id="memory_api_procedure_forget",
)
async def procedure_forget(request: HttpRequest, procedure_id: str) -> Ok[dict[str, object]]:
    return await run_in_http_worker(
        _control, request, "forget", _procedure_id(procedure_id), empty_ok=False
    )


@router.post(
    "/procedures/{procedure_id}/unforget",
    auth=StaffAuth(),
    response=STAFF,
    openapi_extra=body_doc(ReasonIn, required=False) | reply_doc(ControlReply),
    operation_id="memory_api_procedure_unforget",
)
async def procedure_unforget(request: HttpRequest, procedure_id: str) -> Ok[dict[str, object]]:
    return await run_in_http_worker(
        _control, request, "unforget", _procedure_id(procedure_id), empty_ok=True
    )


@router.post(
    "/import",
    auth=StaffAuth(),
    response=STAFF,
    openapi_extra=body_doc(ImportIn) | reply_doc(ImportReply),
    operation_id="memory_api_import_file",
)
async def import_file(request: HttpRequest) -> Ok[ImportOut]:
    """Staff: load a transcript or export, all or nothing (same services as `slowave import`)."""
    return await run_in_http_worker(_import, request)


def _import(request: HttpRequest) -> Ok[ImportOut]:
    # The body escapes the content as a JSON string: at most 6 bytes per byte of it (\u00XX).
    limit = import_limit()
    body: ImportIn = parse_body(
        request,
        ImportIn,
        max_bytes=6 * limit + 64 * 1024,
        too_big=f"; an import's content may be at most {limit} bytes (SLOWAVE_IMPORT_MAX_BYTES)",
    )
    now = timezone.now()
    try:
        lines = import_lines(data=body.content, source="content")
        with transaction.atomic():
            if body.format == "export":
                return ok(export_import(lines=lines, now=now, remap=body.remap))
            if body.format != "transcript":
                files = [SourceFile(name="content", lines=lines)]
                plan = history_read(format=body.format, files=files, scope=body.scope)
                return ok(history_write(plan=plan, now=now, dry_run=body.dry_run))
            return ok(
                transcripts_import(
                    lines=lines,
                    scope=cast(str, body.scope),  # ImportIn requires it for a transcript
                    now=now,
                    dry_run=body.dry_run,
                )
            )
    except InvalidInput as exc:
        if exc.field_errors:
            raise
        # The loaders name the line in the message; the body field it came from is `content`.
        raise InvalidInput.for_field_message("content", exc.message) from None
