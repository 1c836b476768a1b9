"""What the readers of JSONL session files (claude_code, codex) share: a line as a JSON
object, a recorded time checked, the scope of a recorded working directory, and a kept turn
added to the plan.

Each refuses with `malformed` (`FILE:LINE: message`), so one bad line refuses the import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memory.schemas import JsonTooDeep, RuleViolation, json_loads, parse_timestamp, without_nul
from memory.services.import_formats import HistoryPlan, checked_scope, malformed, records
from memory.services.repo_scope import repo_scope


@dataclass
class Turn:
    """A kept turn: the file and line it was read from, its session's key, role, text, time."""

    source: str
    where: int
    key: str
    role: str
    text: str
    occurred_at: str | None


def turn_add(plan: HistoryPlan, scope: str, turn: Turn, metadata: dict[str, Any]) -> None:
    """`turn`'s records, screened and validated (memory.services.import_formats.records),
    added to `plan` under `scope`."""
    plan.add(
        scope,
        *records(
            source=turn.source,
            where=turn.where,
            key=turn.key,
            role=turn.role,
            text=turn.text,
            occurred_at=turn.occurred_at,
            metadata=metadata,
        ),
    )


def line_object(source: str, number: int, raw: str) -> dict[str, Any]:
    """Line `number` of `source` as a JSON object."""
    try:
        data = without_nul(json_loads(raw))
    except JsonTooDeep as exc:
        raise malformed(source, number, exc.message) from None
    except json.JSONDecodeError as exc:
        raise malformed(source, number, f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise malformed(source, number, "each line must be a JSON object")
    return data


def line_string(source: str, number: int, data: dict[str, Any], name: str) -> str | None:
    """`data[name]` when present: a nonblank string, else the line is malformed."""
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise malformed(source, number, f"{name} must be a nonblank string")
    return value


def line_time(source: str, number: int, data: dict[str, Any], name: str) -> str | None:
    """`data[name]` when present: an RFC 3339 time, else the line is malformed."""
    value = line_string(source, number, data, name)
    if value is not None:
        try:
            parse_timestamp(value, name)
        except RuleViolation as exc:
            raise malformed(source, number, exc.message) from None
    return value


def cwd_scope(cwd: str | None) -> str | None:
    """The scope of a recorded working directory, as `slowave scope` gives it: the
    repository's when that directory is a git checkout here, else its last part
    ("/home/me/src/myapp" -> "project:myapp"); None when none was recorded."""
    if cwd is None or not cwd.strip().rstrip("\\/"):
        return None
    return checked_scope(repo_scope(cwd))
