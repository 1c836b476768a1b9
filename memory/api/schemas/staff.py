"""The `data` of the staff controls' replies: forget/unforget, and the two import reports."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memory.api.schemas.base import ABSENT, Out


class ControlOut(Out):
    id: str = Field(description="the memory (sch_N) or procedure (proc_…) acted on")
    action: Literal["forget", "unforget"]
    prior_status: str
    new_status: str
    changed: bool = Field(description="false for an idempotent repeat")
    warnings: list[str]


class CreatedSessionOut(Out):
    session_key: str
    session_id: str


class TranscriptImportOut(Out):
    scope: str
    lines: int
    dry_run: bool
    sessions_created: list[CreatedSessionOut]
    sessions_skipped: list[str] = Field(description="session keys imported before")
    events: int
    episodes: int
    would_create: list[str] = Field(ABSENT, description="dry runs only: the sessions to create")
    redacted: dict[str, dict[str, dict[str, int]]] = Field(
        ABSENT,
        description="SLOWAVE_SECRETS=redact: per session key, credentials replaced per field "
        "(`line N.content` → kind → count)",
    )


class ExportImportOut(Out):
    imported: dict[str, int] = Field(description="rows inserted per model")
    remapped: dict[str, int] = Field(ABSENT, description="with remap: rows renumbered per model")
    memory_ids: dict[str, str] = Field(ABSENT, description="with remap: old sch_N → new sch_N")
    redacted: dict[str, dict[str, int]] = Field(
        ABSENT,
        description="SLOWAVE_SECRETS=redact: credentials replaced per row field "
        "(`sch_12.content` → kind → count)",
    )


ImportOut = TranscriptImportOut | ExportImportOut
