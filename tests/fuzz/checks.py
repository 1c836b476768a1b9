"""What every fuzzed reply must be, and the store state compared around each rejected call.

A reply is the Slowave envelope (memory.api.replies: OkOut with the route's `data` model, or
ErrorOut with a client-side code) or a JSON-RPC error; never a 5xx, never a server-side code
(internal_error, storage_error, storage_busy), never a traceback. A call that is refused must
leave the store as it was: the row count of every memory_* table, and the state columns of
sessions, memories and procedures, read straight from the SQLite file.
`Findings` collects every violation (deduplicated) so one run reports them all.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from memory.api import replies

SERVER_CODES = {"internal_error", "storage_error", "storage_busy"}
TOOL_REPLIES: dict[str, type[BaseModel]] = {
    "slowave_activate": replies.ActivateReply,
    "slowave_remember": replies.RememberReply,
    "slowave_recall": replies.RecallReply,
    "slowave_feedback": replies.FeedbackReply,
    "slowave_commit": replies.CommitReply,
}
# Columns a refused call must not change (counts catch inserts and deletes).
STATE_QUERIES = (
    "SELECT id, status, ended_by, outcome, outcome_summary, feedback_status, final_goal, "
    "last_activity_at, task_context FROM memory_session ORDER BY id",
    "SELECT id, status, stale_reason, salience, superseded_by_id FROM memory_memory ORDER BY id",
    "SELECT id, status FROM memory_procedure ORDER BY id",
)


def store_state(db_path: Path) -> dict[str, Any]:
    """Row counts of every memory_* table, plus a digest of the state columns."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    try:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'memory_%' "
                "ORDER BY name"
            )
        ]
        state: dict[str, Any] = {
            t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables
        }
        digest = hashlib.sha256()
        for query in STATE_QUERIES:
            for row in conn.execute(query):
                digest.update(repr(row).encode())
        state["state_columns"] = digest.hexdigest()[:16]
        return state
    finally:
        conn.close()


def changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {k: (before.get(k), after.get(k)) for k in after if before.get(k) != after.get(k)}


def envelope_problems(envelope: Any, tool: str | None = None) -> list[str]:
    """Why `envelope` is not a Slowave envelope a client may get (empty: it is one)."""
    if not isinstance(envelope, dict) or not isinstance(envelope.get("ok"), bool):
        return ["not a Slowave envelope"]
    try:
        if envelope["ok"]:
            (TOOL_REPLIES[tool] if tool in TOOL_REPLIES else replies.OkOut).model_validate(envelope)
            return []
        replies.ErrorOut.model_validate(envelope)
    except ValidationError as exc:
        return [f"envelope does not match its model: {_short(str(exc), 300)}"]
    code = envelope["error"]["code"]
    return [f"server-side error code {code}"] if code in SERVER_CODES else []


def text_problems(text: str) -> list[str]:
    return ["a traceback in the reply"] if "Traceback" in text or 'File "/' in text else []


def rest_problems(status: int, body: bytes, *, tool: str | None = None) -> list[str]:
    """A REST reply: < 500 and the envelope, its status the one its code maps to."""
    from memory.http.status import status_for

    text = body.decode("utf-8", "replace")
    problems = text_problems(text)
    if status >= 500:
        problems.append(f"HTTP {status}")
    try:
        envelope = json.loads(text)
    except ValueError:
        return [*problems, "the body is not JSON"]
    problems += envelope_problems(envelope, tool if status == 200 else None)
    expected = {status_for(envelope["error"]["code"])} if not envelope.get("ok") else set()
    if envelope.get("error", {}).get("code") == "invalid_input":
        expected.add(405)  # a method the route does not take (slowave_site/api.py)
    if not problems and not envelope["ok"] and status not in expected:
        problems.append(f"HTTP {status} for code {envelope['error']['code']}")
    if not problems and envelope["ok"] and status != 200:
        problems.append(f"HTTP {status} for an ok envelope")
    return problems


def jsonrpc_problems(frame: Any, request_id: Any, *, tool: str | None) -> list[str]:
    """One JSON-RPC reply: an error object, or a result; a tools/call result (`tool` is the
    name called) must carry the envelope."""
    if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0":
        return ["not a JSON-RPC 2.0 frame"]
    if frame.get("id") not in (request_id, None):
        return [f"reply id {frame.get('id')!r} for request {request_id!r}"]
    if "error" in frame:
        error = frame["error"]
        ok = isinstance(error, dict) and isinstance(error.get("code"), int)
        ok = ok and isinstance(error.get("message"), str)
        return text_problems(json.dumps(frame)) + ([] if ok else ["malformed JSON-RPC error"])
    if "result" not in frame:
        return ["neither result nor error"]
    if tool is None:
        return [] if isinstance(frame["result"], dict) else ["malformed result"]
    return result_problems(frame["result"], tool)


def refused_frame(frame: Any) -> bool:
    """Whether a JSON-RPC reply refused the call (an error, or a tool's error envelope)."""
    if not isinstance(frame, dict) or "result" not in frame:
        return True
    result = frame["result"]
    return not isinstance(result, dict) or result.get("isError") is not False


def result_problems(result: Any, tool: str) -> list[str]:
    """A CallToolResult: one text block whose JSON is structuredContent, isError = not ok."""
    if not isinstance(result, dict):
        return ["tools/call result is not an object"]
    envelope = result.get("structuredContent")
    texts = [b.get("text") for b in result.get("content") or [] if isinstance(b, dict)]
    problems = text_problems(json.dumps(result))
    if len(texts) != 1 or not isinstance(texts[0], str):
        return [*problems, "not exactly one text block"]
    try:
        if json.loads(texts[0]) != envelope:
            problems.append("text block differs from structuredContent")
    except ValueError:
        problems.append("text block is not JSON")
    problems += envelope_problems(envelope, tool)
    if isinstance(envelope, dict) and result.get("isError") is not (not envelope.get("ok")):
        problems.append("isError does not mirror ok")
    return problems


def _short(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def describe(value: Any, limit: int = 600) -> str:
    """A request or reply, shortened for a failure message (huge strings abridged)."""
    try:
        text = json.dumps(value, ensure_ascii=True, default=repr)
    except (ValueError, RecursionError):
        text = repr(value)
    return _short(text, limit)


@dataclass
class Findings:
    """Violations seen in a run, one example per (surface, route, problem)."""

    seen: dict[tuple[str, str, str], str] = field(default_factory=dict)
    counts: dict[tuple[str, str, str], int] = field(default_factory=dict)
    calls: int = 0
    refused: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)  # "route code" -> calls

    def tally(self, route: str, outcome: str) -> None:
        key = f"{route} {outcome}"
        self.outcomes[key] = self.outcomes.get(key, 0) + 1

    def check(
        self,
        surface: str,
        route: str,
        request: Any,
        reply: Any,
        problems: list[str],
    ) -> None:
        for problem in problems:
            key = (surface, route, problem.split(":")[0][:80])
            self.counts[key] = self.counts.get(key, 0) + 1
            self.seen.setdefault(
                key, f"{problem}\n    request: {describe(request)}\n    reply: {describe(reply)}"
            )

    def guarded(
        self,
        surface: str,
        route: str,
        request: Any,
        db_path: Path,
        send: Callable[[], tuple[Any, list[str], bool]],
    ) -> Any:
        """Run `send` (→ reply, its problems, whether it must have written nothing: it was
        refused, or is a read or a dry run) and check that such a call wrote nothing."""
        before = store_state(db_path)
        reply, problems, refused = send()
        self.calls += 1
        self.tally(route, outcome_of(reply))
        if refused:
            self.refused += 1
            written = changes(before, store_state(db_path))
            if written:
                problems = [*problems, f"a refused call wrote: {written}"]
        self.check(surface, route, request, reply, problems)
        return reply

    def assert_clean(self, *, log: str, at_least: int) -> None:
        """The end of a run: no traceback in the server's log, no problem seen, and at least
        `at_least` calls made, some of them refused (else the fuzzing missed its target)."""
        assert not text_problems(log), "the server logged a traceback:\n" + log[-6000:]
        assert not self.seen, self.report()
        assert self.calls >= at_least and self.refused > 0, (self.calls, self.refused)

    def report(self) -> str:
        lines = [f"{len(self.seen)} distinct problems in {self.calls} calls:"]
        for key, example in self.seen.items():
            lines.append(f"- [{key[0]} {key[1]}] x{self.counts[key]}: {example}")
        lines.append(
            "outcomes: " + ", ".join(f"{k}: {n}" for k, n in sorted(self.outcomes.items()))
        )
        return "\n".join(lines)


def outcome_of(reply: Any) -> str:
    """What a reply came to, for the tally: ok, an error code, or a JSON-RPC error code.
    `reply` is (status, body) over HTTP, or the list of frames read over stdio."""
    if isinstance(reply, tuple):
        status, body = reply
        try:
            value = json.loads(body)
        except ValueError:
            return f"HTTP {status} not JSON"
    else:
        status, value = None, reply
    if value == []:
        return "no reply"
    first = value[0] if isinstance(value, list) else value
    if isinstance(first, dict) and "jsonrpc" in first:
        if isinstance(first.get("error"), dict):
            return f"rpc {first['error'].get('code')}"
        first = (first.get("result") or {}).get("structuredContent") or {"rpc": "result"}
    if isinstance(first, dict) and isinstance(first.get("ok"), bool):
        return "ok" if first["ok"] else str((first.get("error") or {}).get("code"))
    return f"HTTP {status} other" if status else "other"
