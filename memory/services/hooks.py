"""Claude Code and Codex hooks (`slowave hook EVENT`, JSON on stdin) run in this process, with
Django.

- `session-start`, `prompt`: memory.services.hook_reads, its verbs called on the services
  here when no `slowave up` answers on SLOWAVE_HOST:SLOWAVE_PORT (over HTTP when one does;
  slowave_site.cli tries that first, before Django starts).
- `stop` (Stop, SessionEnd, PreCompact; Codex's Stop): the new turns of the transcript or
  rollout captured (memory.services.hook_capture), then queued for consolidation; nothing when
  the client hands over no file (Codex's `transcript_path` may be null).

The scope is the repository's (memory.services.repo_scope) of the hook's `cwd`.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings

from memory.errors import InvalidInput
from memory.services.hook_reads import (
    HOOK_EVENTS,
    HookInput,
    Where,
    hook_input,
    hook_prompt,
    hook_session_start,
    http_call,
    http_top,
    server_base,
)


def _local(verb: str, body: dict[str, Any], now: datetime) -> dict[str, Any]:
    from memory.schemas import ActivateIn, RecallIn
    from memory.services.activate import session_activate
    from memory.services.recall import retrieval_recall
    from memory.services.sessions import ClientInfo

    if verb == "activate":
        client = ClientInfo(
            name="claude-code-hook",
            version="in-process",
            identity=settings.SLOWAVE_CLIENT_IDENTITY,
        )
        return dict(session_activate(data=ActivateIn(**body), client=client, now=now))
    return dict(retrieval_recall(data=RecallIn(**body), now=now))


def _local_top(scope: str, limit: int) -> list[dict[str, Any]]:
    from memory.ids import memory_ref
    from memory.selectors.listings import memory_list

    listing = memory_list(scope=scope, status="active", order="salience", limit=limit, offset=0)
    return [
        {"memory_id": memory_ref(m.pk), "type": m.type, "content": m.content}
        for m in listing.rows
    ]


def hook_stop(hook: HookInput, now: datetime) -> str:
    from memory.services.hook_capture import hook_capture

    if hook.transcript_path is None:
        return ""  # nothing recorded to capture (an ephemeral Codex session, say)
    hook_capture(transcript_path=hook.transcript_path, cwd=hook.cwd, now=now)
    return ""


def hook_run(*, event: str, raw: str, now: datetime) -> str:
    """What the hook `event` prints for the model, given Claude Code's JSON `raw`: over HTTP
    when a server answers on SLOWAVE_HOST:SLOWAVE_PORT, in this process otherwise."""
    if event not in HOOK_EVENTS:
        raise InvalidInput.for_field("event", f"event must be one of {', '.join(HOOK_EVENTS)}")
    hook = hook_input(raw)
    if event == "stop":
        return hook_stop(hook, now)
    base = server_base(settings.SLOWAVE_HOST, settings.SLOWAVE_PORT)
    home = Path(settings.SLOWAVE_HOME)
    if base is not None:
        where = Where(call=partial(http_call, base), top=partial(http_top, base), home=home)
    else:
        where = Where(call=partial(_local, now=now), top=_local_top, home=home)
    handler = hook_session_start if event == "session-start" else hook_prompt
    return handler(where, hook)
