"""The read hooks (`session-start`, `prompt`): what they send and what reaches the model.

Kept free of Django (and of anything heavy) on purpose: with a `slowave up` running, the hook
process does only this and one HTTP call, so a prompt is not held up by Django's start or the
embedding model's load (`hook_run_http`). memory.services.hooks runs the same handlers against
the services in-process when no server answers, and holds the `stop` hook's capture.

- `session-start` (SessionStart): an activation in the repository's scope, then the scope's
  most salient memories it did not show, together within SESSION_START_TOKENS: a session's
  opening cue names only the repository, so the floor alone would leave a repository whose
  memories never mention its name with nothing. The Slowave session it opens is kept per
  Claude Code session (under SLOWAVE_HOME/hooks/) for the prompts that follow.
- `prompt` (UserPromptSubmit): a recall for the prompt within PROMPT_TOKENS in that session
  (an activation when there is none, or it has ended); printed only when something passes
  retrieval's floor, so an unrelated prompt gets nothing.
"""

from __future__ import annotations

import json
import os
import re
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.errors import InvalidInput, SlowaveError
from memory.services.repo_scope import repo_scope

HOOK_EVENTS = ("session-start", "prompt", "stop")
SESSION_START_TOKENS = 600
PROMPT_TOKENS = 400
HTTP_TIMEOUT = 5.0  # seconds for one call to a running server
CONNECT_TIMEOUT = 0.2  # is a server listening at all
PROMPT_MAX = 4_000  # a recall query's bound
TOP_MEMORIES = 20  # the scope's most salient memories read for the session-start fill
LINE_MAX = 400  # characters of one memory's line at session start
CHARS_PER_TOKEN = 4  # the contract's token estimate (memory.retrieval.paging's, kept light)
SAFE_RE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class HookInput:
    session_id: str
    cwd: str
    transcript_path: str | None
    prompt: str | None
    source: str | None


def hook_input(raw: str) -> HookInput:
    """The fields a hook uses from Claude Code's JSON on stdin; a missing one names itself."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"hook input is not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InvalidInput("hook input must be a JSON object")

    def text(name: str, required: bool) -> str | None:
        value = data.get(name)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput.for_field(name, f"{name} must be a nonblank string")
        return value

    return HookInput(
        session_id=text("session_id", True) or "",
        cwd=text("cwd", True) or "",
        transcript_path=text("transcript_path", False),
        prompt=text("prompt", False),
        source=text("source", False),
    )


# --- where the verbs run ---------------------------------------------------------------


def server_base(host: str, port: int) -> str | None:
    """The base URL of a `slowave up` listening on `host`:`port`, or None."""
    host = "127.0.0.1" if host in ("0.0.0.0", "") else host.strip("[]")
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
            pass
    except OSError:
        return None
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}"


def _envelope(request: urllib.request.Request, what: str) -> Any:
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            envelope = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        envelope = json.loads(exc.read() or b"{}")
    if not envelope.get("ok"):
        error = envelope.get("error") or {}
        raise InvalidInput(f"{what} over HTTP: {error.get('message', 'failed')}")
    return envelope["data"]


def _request(url: str, data: bytes | None = None) -> urllib.request.Request:
    headers = {"X-Slowave-Client": "claude-code-hook", "X-Slowave-Client-Version": "http"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    return urllib.request.Request(
        url, data=data, headers=headers, method="GET" if data is None else "POST"
    )


def http_call(base: str, verb: str, body: dict[str, Any]) -> dict[str, Any]:
    return dict(_envelope(_request(f"{base}/api/{verb}", json.dumps(body).encode()), verb))


def http_top(base: str, scope: str, limit: int) -> list[dict[str, Any]]:
    """The scope's active memories, most salient first (`GET /api/memories`), as `Where.top`
    gives them."""
    query = urllib.parse.urlencode(
        {"scope": scope, "status": "active", "order": "salience", "limit": limit}
    )
    data = _envelope(_request(f"{base}/api/memories?{query}"), "memories")
    return [
        {"memory_id": row["id"], "type": row["type"], "content": row["content"]}
        for row in data["memories"]
    ]


@dataclass(frozen=True)
class Where:
    """Where a hook's verbs run (`call(verb, body)`), where the scope's most salient memories
    are read (`top(scope, limit)`: `{memory_id, type, content}` each), and SLOWAVE_HOME for
    the hook's state."""

    call: Callable[[str, dict[str, Any]], dict[str, Any]]
    top: Callable[[str, int], list[dict[str, Any]]]
    home: Path


# --- the Slowave session kept per Claude Code session ------------------------------------


def _state_file(where: Where, session_id: str) -> Path:
    return where.home / "hooks" / f"{SAFE_RE.sub('_', session_id)[:150]}.json"


def _kept_session(where: Where, hook: HookInput, scope: str) -> str | None:
    try:
        state = json.loads(_state_file(where, hook.session_id).read_text())
    except (OSError, ValueError):
        return None
    if isinstance(state, dict) and state.get("scope") == scope:
        return state.get("session_id")
    return None


def _keep_session(where: Where, hook: HookInput, scope: str, session_id: str) -> None:
    path = _state_file(where, hook.session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"session_id": session_id, "scope": scope}))


def _activate(where: Where, hook: HookInput, scope: str, task: str, tokens: int) -> dict[str, Any]:
    body = {
        "task": task[:20_000],
        "initial_goal": "Carry on the work in this repository",
        "scope": scope,
        "max_tokens": tokens,
    }
    reply = where.call("activate", body)
    _keep_session(where, hook, scope, reply["session_id"])
    return reply


# --- what reaches the model -----------------------------------------------------------------


def _line(memory: dict[str, Any], limit: int | None = None) -> str:
    content = str(memory["content"])
    if limit is not None and len(content) > limit:
        content = content[: limit - 1].rstrip() + "…"
    return f"- [{memory['type']}] {content} ({memory.get('memory_id') or memory.get('episode_id')})"


def hook_render(
    reply: dict[str, Any],
    scope: str,
    heading: str,
    fill: Sequence[dict[str, Any]] = (),
    tokens: int = 0,
) -> str:
    """The memories (imported turns among them: `episode_id`) and procedures of a reply as
    lines for the model, then those of `fill` the reply did not show while the whole stays
    within `tokens`; "" when there are none."""
    memories = list(reply.get("memories", []))
    lines = [_line(memory) for memory in memories]
    for procedure in reply.get("procedures", []):
        lines.append(
            f"- procedure: {procedure['goal']}: {procedure['summary']} "
            f"({procedure['procedure_id']})"
        )
    shown = {memory.get("memory_id") for memory in memories}
    room = tokens * CHARS_PER_TOKEN - sum(len(line) + 1 for line in lines)
    for memory in fill:
        line = _line(memory, LINE_MAX)
        if memory["memory_id"] in shown or len(line) + 1 > room:
            continue
        lines.append(line)
        room -= len(line) + 1
    if not lines:
        return ""
    return "\n".join([f"Slowave memory ({scope}), {heading}:", *lines])


def hook_session_start(where: Where, hook: HookInput) -> str:
    scope = repo_scope(hook.cwd)
    name = scope.partition(":")[2].rstrip("/").rsplit("/", 1)[-1]
    task = f"Start of a coding session in the {name} repository ({hook.source or 'startup'})"
    reply = _activate(where, hook, scope, task, SESSION_START_TOKENS)
    fill = where.top(scope, TOP_MEMORIES)
    heading = "what this repository's memory holds"
    return hook_render(reply, scope, heading, fill, SESSION_START_TOKENS)


def hook_prompt(where: Where, hook: HookInput) -> str:
    if not hook.prompt:
        return ""
    scope = repo_scope(hook.cwd)
    query = hook.prompt[:PROMPT_MAX]
    session_id = _kept_session(where, hook, scope)
    reply: dict[str, Any] | None = None
    if session_id is not None:
        body = {"session_id": session_id, "scope": scope, "query": query}
        try:
            reply = where.call("recall", {**body, "max_tokens": PROMPT_TOKENS})
        except SlowaveError:
            reply = None  # the session ended or was reaped: a fresh activation instead
    if reply is None:
        reply = _activate(where, hook, scope, query, PROMPT_TOKENS)
    return hook_render(reply, scope, "related to this prompt")


def hook_run_http(*, event: str, raw: str) -> str | None:
    """The start or prompt hook answered by a running server without starting Django (most
    of a hook's time): SLOWAVE_HOST, SLOWAVE_PORT and SLOWAVE_HOME read from the environment
    as the settings read them. None when the hook is not one of those, a variable is not
    plain, or no server answers: then `hook_run` does it all."""
    port = os.environ.get("SLOWAVE_PORT", "8765").strip()
    if event not in ("session-start", "prompt") or not port.isdigit():
        return None
    base = server_base(os.environ.get("SLOWAVE_HOST", "127.0.0.1").strip(), int(port))
    if base is None:
        return None
    home = os.environ.get("SLOWAVE_HOME") or str(Path.home() / ".slowave")
    where = Where(
        call=lambda verb, body: http_call(base, verb, body),
        top=lambda scope, limit: http_top(base, scope, limit),
        home=Path(home).expanduser(),
    )
    handler = hook_session_start if event == "session-start" else hook_prompt
    return handler(where, hook_input(raw))
