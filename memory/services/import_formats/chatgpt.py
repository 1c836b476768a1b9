"""A ChatGPT data export's `conversations.json` as transcript records.

The file is a JSON list of conversations, each a tree of message nodes (`mapping`) whose
`current_node` is the last message of the branch the user last saw; following its `parent`
links gives that branch, which is what is kept, in order. Of its messages only user and
assistant text is kept (content_type `text`, or the string parts of `multimodal_text`):
system and tool messages, hidden ones, code, browsing and reasoning displays and image
parts are dropped. Times are epoch seconds, a message's own or else its conversation's.

The session key is `chatgpt:<conversation id>`, so a second import is a no-op. A file
that is not such a list, or a conversation or kept message not shaped as above, refuses the
import, named by file and JSON path (`conversations.json:[3].mapping.<node>...`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from memory.schemas import JsonTooDeep, json_loads, without_nul
from memory.services.import_formats import HistoryPlan, SourceFile, malformed, records

DEFAULT_SCOPE = "project:chatgpt"
TEXT_TYPES = ("text", "multimodal_text")


def _document(source: SourceFile) -> list[Any]:
    try:
        data = without_nul(json_loads("\n".join(source.lines)))
    except JsonTooDeep as exc:
        raise malformed(source.name, 1, exc.message) from None
    except json.JSONDecodeError as exc:
        raise malformed(source.name, exc.lineno, f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, list):
        raise malformed(source.name, 1, "a conversations.json export is a JSON list")
    return data


def _time(name: str, where: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise malformed(name, where, "create_time must be epoch seconds or null")
    try:
        return datetime.fromtimestamp(value, UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        raise malformed(name, where, "create_time is out of range") from None


def _branch(name: str, where: str, conversation: dict[str, Any]) -> list[tuple[str, Any]]:
    """The displayed branch's nodes, first to last, as (node id, node)."""
    mapping = conversation.get("mapping")
    if not isinstance(mapping, dict):
        raise malformed(name, f"{where}.mapping", "mapping must be an object")
    node_id = conversation.get("current_node")
    if node_id is None and mapping:
        # Exports from before current_node: the last node written ends the branch.
        node_id = list(mapping)[-1]
    chain: list[tuple[str, Any]] = []
    seen: set[str] = set()
    while node_id is not None:
        if not isinstance(node_id, str) or node_id not in mapping:
            raise malformed(name, where, f"node {node_id!r} is not in mapping")
        if node_id in seen:
            raise malformed(name, where, f"node {node_id!r} is its own ancestor")
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            raise malformed(name, f"{where}.mapping.{node_id}", "a node must be an object")
        chain.append((node_id, node))
        node_id = node.get("parent")
    return chain[::-1]


def _text(name: str, where: str, message: dict[str, Any]) -> str | None:
    """The kept text of a message, or None when it is not user or assistant text."""
    author = message.get("author")
    if not isinstance(author, dict):
        raise malformed(name, f"{where}.author", "author must be an object")
    metadata = message.get("metadata") or {}
    if (
        author.get("role") not in ("user", "assistant")
        or message.get("recipient", "all") != "all"  # addressed to a tool: a tool call
        or (isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"))
    ):
        return None
    content = message.get("content")
    if not isinstance(content, dict):
        raise malformed(name, f"{where}.content", "content must be an object")
    if content.get("content_type") not in TEXT_TYPES:
        return None
    parts = content.get("parts")
    if not isinstance(parts, list):
        raise malformed(name, f"{where}.content.parts", "parts must be a list")
    return "\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip()) or None


def _conversation(
    source: SourceFile, index: int, conversation: Any, plan: HistoryPlan, scope: str
) -> None:
    name, where = source.name, f"[{index}]"
    if not isinstance(conversation, dict):
        raise malformed(name, where, "a conversation must be an object")
    ident = conversation.get("conversation_id") or conversation.get("id")
    if not isinstance(ident, str) or not ident.strip():
        raise malformed(name, where, "a conversation needs an id (conversation_id or id)")
    started = _time(name, f"{where}.create_time", conversation.get("create_time"))
    for node_id, node in _branch(name, where, conversation):
        message = node.get("message")
        if message is None:
            continue  # the tree's root holds no message
        at = f"{where}.mapping.{node_id}.message"
        if not isinstance(message, dict):
            raise malformed(name, at, "message must be an object or null")
        text = _text(name, at, message)
        if text is None:
            plan.turns_dropped += 1
            continue
        occurred_at = _time(name, f"{at}.create_time", message.get("create_time")) or started
        plan.hold(text=text, source=f"{name}:{at}")
        plan.add(
            scope,
            *records(
                source=name,
                where=at,
                key=f"chatgpt:{ident}",
                role=message["author"]["role"],
                text=text,
                occurred_at=occurred_at,
                metadata={"source": "chatgpt", "message_id": node_id[:200]},
            ),
        )


def chatgpt_read(*, files: Iterable[SourceFile], scope: str | None) -> HistoryPlan:
    """Read ChatGPT exports; every conversation goes to `scope` (project:chatgpt if None)."""
    plan = HistoryPlan(format="chatgpt")
    target = scope or DEFAULT_SCOPE
    for source in files:
        plan.files += 1
        for index, conversation in enumerate(_document(source)):
            _conversation(source, index, conversation, plan, target)
    return plan
