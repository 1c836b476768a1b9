"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`) as records.

Each line is a JSON object; lines of `type` user or assistant carry `message.content`, a
string or a list of blocks. Only text is kept: tool_use, tool_result, thinking and other
blocks are dropped, and so are meta lines (`isMeta`), side chains (sub-agents' own
conversations), compaction summaries and the wrappers Claude Code writes around slash
commands. Lines of other types (summary, system, file-history-snapshot, ...) are skipped.
Unknown keys are fine, as the format grows; a line that is not a JSON object, or a user or
assistant line whose message is not shaped as above, refuses the import.

The session key is `claude-code:<sessionId>`, so a second import of the same history is a
no-op; lines already seen (same `uuid`, as in a resumed session's copied history) count
once, and the lines one streamed answer was written in (same `message.id`) make one turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memory.errors import InvalidInput
from memory.services.import_formats import HistoryPlan, SourceFile, malformed, project_scope
from memory.services.import_formats.jsonl import (
    Turn,
    cwd_scope,
    line_object,
    line_string,
    line_time,
    turn_add,
)

KEPT_TYPES = ("user", "assistant")
# What Claude Code writes as a user turn around slash commands and interruptions: not
# anything the user said.
WRAPPER_RE = re.compile(
    r"^\s*(<(command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|local-command-caveat)>|Caveat: The messages below were generated "
    r"by the user while running local commands|\[Request interrupted by user)"
)


@dataclass
class _Turn(Turn):
    message_id: str | None
    uuid: str | None


@dataclass
class _Project:
    """The turns read from one project directory's files, and its first recorded cwd."""

    turns: list[_Turn]
    cwd: str | None = None


def _texts(source: str, number: int, message: Any) -> list[str]:
    """The text of a user or assistant message; [] when it holds only tool noise."""
    if not isinstance(message, dict):
        raise malformed(source, number, "message must be an object")
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise malformed(source, number, "message.content must be a string or a list of blocks")
    texts: list[str] = []
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            raise malformed(source, number, f"message.content[{index}] must be an object")
        if block.get("type") != "text":
            continue  # tool_use, tool_result, thinking, image, ...: not conversation
        if not isinstance(block.get("text"), str):
            raise malformed(source, number, f"message.content[{index}].text must be a string")
        texts.append(block["text"])
    return texts


def _turn(source: SourceFile, number: int, data: dict[str, Any]) -> _Turn | None:
    """The kept turn of a user or assistant line, or None when it is noise."""
    name = source.name
    if data.get("isMeta") or data.get("isSidechain") or data.get("isCompactSummary"):
        return None
    text = "\n\n".join(t.strip() for t in _texts(name, number, data.get("message")) if t.strip())
    if not text or WRAPPER_RE.match(text):
        return None
    session = line_string(name, number, data, "sessionId")
    occurred_at = line_time(name, number, data, "timestamp")
    message_id = data["message"].get("id")
    stem = name.rsplit("/", 1)[-1].removesuffix(".jsonl")
    return _Turn(
        source=name,
        where=number,
        key=f"claude-code:{session or stem}",
        role=str(data["type"]),
        text=text,
        occurred_at=occurred_at,
        message_id=message_id if isinstance(message_id, str) else None,
        uuid=data.get("uuid") if isinstance(data.get("uuid"), str) else None,
    )


def _read_file(source: SourceFile, project: _Project, plan: HistoryPlan) -> None:
    for number, raw in enumerate(source.lines, start=1):
        if not raw.strip():
            continue
        data = line_object(source.name, number, raw)
        if project.cwd is None and isinstance(data.get("cwd"), str) and data["cwd"].strip():
            project.cwd = data["cwd"]
        if data.get("type") not in KEPT_TYPES:
            plan.records_skipped += 1
            continue
        turn = _turn(source, number, data)
        if turn is None:
            plan.turns_dropped += 1
        else:
            plan.hold(text=turn.text, source=f"{source.name}:{number}")
            project.turns.append(turn)


def _merged(turns: list[_Turn]) -> list[_Turn]:
    """One turn per streamed message, each line counted once, in file order per session."""
    seen: set[tuple[str, str]] = set()
    last: dict[str, _Turn] = {}
    kept: list[_Turn] = []
    for turn in turns:
        if turn.uuid is not None:
            if (turn.key, turn.uuid) in seen:
                continue
            seen.add((turn.key, turn.uuid))
        before = last.get(turn.key)
        if (
            before is not None
            and turn.message_id is not None
            and (before.role, before.message_id) == (turn.role, turn.message_id)
        ):
            before.text += "\n\n" + turn.text
            continue
        last[turn.key] = turn
        kept.append(turn)
    return kept


def _scope_of(project: _Project, directory: str | None, scope: str | None, first: str) -> str:
    if scope is not None:
        return scope
    recorded = cwd_scope(project.cwd)
    if recorded is not None:
        return recorded
    if directory is None:
        raise InvalidInput.for_field(
            "scope", f"{first} records no cwd to name its scope by: give a scope"
        )
    return project_scope(directory)


def claude_code_read(*, files: Iterable[SourceFile], scope: str | None) -> HistoryPlan:
    """Read Claude Code transcripts; files of one `project` share a scope unless `scope`."""
    plan = HistoryPlan(format="claude-code")
    projects: dict[str | None, tuple[_Project, str]] = {}
    for source in files:
        plan.files += 1
        project, _ = projects.setdefault(source.project, (_Project(turns=[]), source.name))
        _read_file(source, project, plan)
    for directory, (project, first) in projects.items():
        target = _scope_of(project, directory, scope, first)
        for turn in _merged(project.turns):
            metadata: dict[str, Any] = {"source": "claude-code"}
            if turn.uuid is not None:
                metadata["uuid"] = turn.uuid[:200]
            turn_add(plan, target, turn, metadata)
    return plan
