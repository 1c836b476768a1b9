"""Codex rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`) as records.

The layout relied on is openai/codex's own: `RolloutLine` and `RolloutItem` in
codex-rs/protocol/src/protocol.rs, written by the rollout recorder (codex-rs/core/src/rollout/
recorder.rs; which items it keeps: rollout/policy.rs). Each line is `{"timestamp": RFC 3339,
"type": T, "payload": {...}}`; of the payloads only these fields are read:
- `session_meta` (the first line): `payload.id`, the session id, and `payload.cwd`;
- `turn_context`: `payload.cwd`, when no session_meta recorded one;
- `response_item` with `payload.type` "message": `payload.role` and `payload.content`, a list of
  parts of which `input_text` and `output_text` parts carry `text`.
Kept: user and assistant messages, at their line's `timestamp`, without the tags Codex writes
around an attached image (ATTACHMENT_TAG_RE). Dropped (turns_dropped): the
other response items (function and custom tool calls and their outputs, local shell calls,
reasoning, web searches, ghost snapshots, compactions), developer and system messages, and the
user messages Codex writes itself as context, which start with one of CONTEXT_MARKERS
(codex-rs/core/src/contextual_user_message.rs). Skipped (records_skipped): every other line,
`event_msg` (its user_message and agent_message repeat the messages for the screen),
`turn_context` and `compacted`. Unknown keys are fine; a line that is not a JSON object, or a
message not shaped as above, refuses the import.

The session key is `codex:<session id>` (the file's name when no session_meta gives one). A
rollout line has no id of its own, so a turn is keyed `<timestamp>/<role>/<n>`: its line's time,
its role, and how many kept turns of that time and role came before it in the file. Codex only
appends to a rollout, so a grown file gives its old turns the same keys and a capture
(memory.services.hook_capture) stores only the new ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memory.services.import_formats import HistoryPlan, SourceFile, malformed
from memory.services.import_formats.jsonl import (
    Turn,
    cwd_scope,
    line_object,
    line_string,
    line_time,
    turn_add,
)

DEFAULT_SCOPE = "project:codex"
TEXT_PARTS = ("input_text", "output_text")
# The text parts Codex writes around an attached image, file or audio part
# (codex-rs/protocol/src/models.rs: `<image>`, `<image name=[Image #1]>`, `</image>`, ...).
ATTACHMENT_TAG_RE = re.compile(r"</?(image|file|audio)\b[^>]*>")
CONTEXT_MARKERS = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions for ",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<additional_context>",
)


@dataclass
class _Turn(Turn):
    mark: str  # the turn's own key within its session


@dataclass
class _Rollout:
    """One file's session id, recorded working directory and kept turns."""

    session: str | None = None
    cwd: str | None = None
    turns: list[_Turn] = field(default_factory=list)
    seen: dict[tuple[str, str], int] = field(default_factory=dict)


def _payload(name: str, number: int, data: dict[str, Any]) -> dict[str, Any]:
    payload = data.get("payload")
    if not isinstance(payload, dict):
        raise malformed(name, number, "payload must be an object")
    return payload


def _text(name: str, number: int, payload: dict[str, Any]) -> str | None:
    """The text of a user or assistant message; None when it is not conversation."""
    if payload.get("type") != "message" or payload.get("role") not in ("user", "assistant"):
        return None
    content = payload.get("content")
    if not isinstance(content, list):
        raise malformed(name, number, "payload.content must be a list of parts")
    texts: list[str] = []
    for index, part in enumerate(content):
        if not isinstance(part, dict):
            raise malformed(name, number, f"payload.content[{index}] must be an object")
        if part.get("type") not in TEXT_PARTS:
            continue  # images and whatever parts come later: not text
        if not isinstance(part.get("text"), str):
            raise malformed(name, number, f"payload.content[{index}].text must be a string")
        text = part["text"].strip()
        if text.lower().startswith(CONTEXT_MARKERS):
            return None  # Codex's own context, sent as a user message
        if not ATTACHMENT_TAG_RE.fullmatch(text):
            texts.append(text)
    return "\n\n".join(text for text in texts if text) or None


def _meta(name: str, number: int, payload: dict[str, Any], rollout: _Rollout) -> None:
    if rollout.session is None:
        rollout.session = line_string(name, number, payload, "id")
    if rollout.cwd is None:
        rollout.cwd = line_string(name, number, payload, "cwd")


def _read(source: SourceFile, plan: HistoryPlan) -> _Rollout:
    rollout = _Rollout()
    name = source.name
    stem = name.rsplit("/", 1)[-1].removesuffix(".jsonl")
    for number, raw in enumerate(source.lines, start=1):
        if not raw.strip():
            continue
        data = line_object(name, number, raw)
        kind = data.get("type")
        if kind in ("session_meta", "turn_context"):
            payload = _payload(name, number, data)
            if kind == "session_meta":
                _meta(name, number, payload, rollout)
            elif rollout.cwd is None:
                rollout.cwd = line_string(name, number, payload, "cwd")
        if kind != "response_item":
            plan.records_skipped += 1
            continue
        payload = _payload(name, number, data)
        text = _text(name, number, payload)
        if text is None:
            plan.turns_dropped += 1
            continue
        occurred_at = line_time(name, number, data, "timestamp")
        role = str(payload["role"])
        seen = rollout.seen.get((occurred_at or "", role), 0)
        rollout.seen[(occurred_at or "", role)] = seen + 1
        plan.hold(text=text, source=f"{name}:{number}")
        mark = f"{occurred_at or 'untimed'}/{role}/{seen}"
        rollout.turns.append(_Turn(name, number, "", role, text, occurred_at, mark))
    for turn in rollout.turns:  # the session's id, wherever in the file it was met
        turn.key = f"codex:{rollout.session or stem}"[:200]
    return rollout


def codex_read(*, files: Iterable[SourceFile], scope: str | None) -> HistoryPlan:
    """Read Codex rollouts; each file is a session, in the scope of the directory it recorded
    (DEFAULT_SCOPE when it recorded none) unless `scope`."""
    plan = HistoryPlan(format="codex")
    for source in files:
        plan.files += 1
        rollout = _read(source, plan)
        target = scope or cwd_scope(rollout.cwd) or DEFAULT_SCOPE
        for turn in rollout.turns:
            turn_add(plan, target, turn, {"source": "codex", "turn": turn.mark[:200]})
    return plan
