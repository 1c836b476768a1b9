"""The `data` of the staff controls' replies: forget/unforget, and the import reports."""

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


class ExportImportOut(Out):
    imported: dict[str, int] = Field(description="rows inserted per model")
    remapped: dict[str, int] = Field(ABSENT, description="with remap: rows renumbered per model")
    memory_ids: dict[str, str] = Field(ABSENT, description="with remap: old sch_N → new sch_N")


class HistoryImportOut(Out):
    format: Literal["claude-code", "chatgpt"]
    dry_run: bool
    files: int
    sessions_imported: int
    sessions_skipped: int = Field(description="sessions imported before, left as they were")
    turns_kept: int = Field(description="user and assistant text turns read")
    turns_dropped: int = Field(description="tool calls and results, thinking, hidden or meta turns")
    records_skipped: int = Field(description="records of other kinds (summaries, system lines)")
    events: int
    episodes: int
    scopes: list[TranscriptImportOut] = Field(description="what each scope received")
    would_import: int = Field(ABSENT, description="dry runs only: the sessions to create")


ImportOut = TranscriptImportOut | ExportImportOut | HistoryImportOut
