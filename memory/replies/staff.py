"""The `data` of the staff controls' replies: forget/unforget, and the import reports."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from memory.replies.base import closed


@closed
class ControlOut(TypedDict):
    id: Annotated[str, Field(description="the memory (sch_N) or procedure (proc_…) acted on")]
    action: Literal["forget", "unforget"]
    prior_status: str
    new_status: str
    changed: Annotated[bool, Field(description="false for an idempotent repeat")]
    warnings: list[str]


@closed
class CreatedSessionOut(TypedDict):
    session_key: str
    session_id: str


@closed
class TranscriptImportOut(TypedDict):
    scope: str
    lines: int
    dry_run: bool
    sessions_created: list[CreatedSessionOut]
    sessions_skipped: Annotated[list[str], Field(description="session keys imported before")]
    events: int
    episodes: int
    would_create: NotRequired[
        Annotated[list[str], Field(description="dry runs only: the sessions to create")]
    ]
    redacted: NotRequired[
        Annotated[
            dict[str, dict[str, dict[str, int]]],
            Field(
                description="SLOWAVE_SECRETS=redact: per session key, credentials replaced per "
                "field (`line N.content` → kind → count)"
            ),
        ]
    ]


@closed
class RemapOut(TypedDict):
    """The keys of ExportImportOut that an import with remap adds (remap_rows builds them)."""

    remapped: dict[str, int]
    memory_ids: dict[str, str]


@closed
class ExportImportOut(TypedDict):
    imported: Annotated[dict[str, int], Field(description="rows inserted per model")]
    remapped: NotRequired[
        Annotated[dict[str, int], Field(description="with remap: rows renumbered per model")]
    ]
    memory_ids: NotRequired[
        Annotated[dict[str, str], Field(description="with remap: old sch_N → new sch_N")]
    ]
    redacted: NotRequired[
        Annotated[
            dict[str, dict[str, int]],
            Field(
                description="SLOWAVE_SECRETS=redact: credentials replaced per row field "
                "(`sch_12.content` → kind → count)"
            ),
        ]
    ]


@closed
class SkippedFileOut(TypedDict):
    file: str
    bytes: int
    reason: str


@closed
class HistoryImportOut(TypedDict):
    format: Literal["claude-code", "codex", "chatgpt"]
    dry_run: bool
    files: Annotated[int, Field(description="files read")]
    files_skipped: Annotated[
        list[SkippedFileOut],
        Field(description="files of a directory left out, each with why (too large)"),
    ]
    sessions_imported: int
    sessions_skipped: Annotated[
        int, Field(description="sessions imported before, left as they were")
    ]
    turns_kept: Annotated[int, Field(description="user and assistant text turns read")]
    turns_dropped: Annotated[
        int, Field(description="tool calls and results, thinking, hidden or meta turns")
    ]
    records_skipped: Annotated[
        int, Field(description="records of other kinds (summaries, system lines)")
    ]
    events: int
    episodes: int
    scopes: Annotated[list[TranscriptImportOut], Field(description="what each scope received")]
    would_import: NotRequired[
        Annotated[int, Field(description="dry runs only: the sessions to create")]
    ]


ImportOut = TranscriptImportOut | ExportImportOut | HistoryImportOut
