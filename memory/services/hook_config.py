"""The hook entries `slowave setup claude-code|codex --hooks` merges into the client's file.

Claude Code reads ~/.claude/settings.json (a project's .claude/settings.json); Codex reads
~/.codex/hooks.json (a project's .codex/hooks.json). Both run a hook as a shell command in the
session's directory with the event's JSON on stdin (session_id, transcript_path, cwd,
hook_event_name, and source or prompt) and give the model what it prints on exit 0, so one
`slowave hook EVENT` serves both. Codex's Stop hands over its own rollout file as
`transcript_path`, which `slowave hook stop` captures as it captures a Claude Code transcript.

Each entry runs `slowave hook EVENT` by the absolute path of this installation's script, with
SLOWAVE_DB_PATH (and SLOWAVE_MODEL_DIR) set as the MCP server's entry sets them, so a hook
reads and writes the store the agent's tools use. Merging keeps every other hook and setting;
an entry whose command is already there is not added again.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from django.conf import settings

from memory.errors import InvalidInput

# Per client, its event -> (our hook, its timeout in seconds, a little above the hook's own).
HOOK_EVENTS = {
    "claude-code": {
        "SessionStart": ("session-start", 15),
        "UserPromptSubmit": ("prompt", 15),
        "Stop": ("stop", 35),
        "SessionEnd": ("stop", 35),
        "PreCompact": ("stop", 35),
    },
    "codex": {
        "SessionStart": ("session-start", 15),
        "UserPromptSubmit": ("prompt", 15),
        "Stop": ("stop", 35),
    },
}
HOOK_CLIENTS = tuple(HOOK_EVENTS)
HOOK_FILES = {"claude-code": (".claude", "settings.json"), "codex": (".codex", "hooks.json")}


def _slowave() -> list[str]:
    """The console script next to this interpreter (a venv's bin), else on PATH, else this
    interpreter running the CLI."""
    beside = Path(sys.executable).parent / "slowave"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("slowave")
    if found:
        return [found]
    return [sys.executable, "-c", "from slowave_site.cli import main; main()"]


def hook_command(event: str) -> str:
    env = {
        "SLOWAVE_DB_PATH": str(settings.SLOWAVE_DB_PATH),
        "SLOWAVE_MODEL_DIR": str(settings.SLOWAVE_MODEL_DIR),
    }
    prefix = " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
    return f"{prefix} {shlex.join([*_slowave(), 'hook', event])}"


def hooks_config(client: str = "claude-code") -> dict[str, Any]:
    """The `hooks` object of `client`'s hook file for Slowave's hooks."""
    return {
        event: [{"hooks": [{"type": "command", "command": hook_command(ours), "timeout": t}]}]
        for event, (ours, t) in HOOK_EVENTS[client].items()
    }


def hooks_target(*, project: Path | None, client: str = "claude-code") -> Path:
    """The user's hook file of `client` under HOME (~/.claude/settings.json,
    ~/.codex/hooks.json), or the project's (`project`/.claude/settings.json, …/.codex/…)."""
    folder, name = HOOK_FILES[client]
    if project is not None:
        return Path(project) / folder / name
    return Path(os.path.expanduser("~")) / folder / name


def _commands(entries: list[Any]) -> set[str]:
    return {
        str(hook.get("command"))
        for entry in entries
        if isinstance(entry, dict)
        for hook in entry.get("hooks", [])
        if isinstance(hook, dict)
    }


def hooks_write(*, target: Path, config: dict[str, Any]) -> dict[str, list[str]]:
    """Merge `config` into the settings file at `target`; per event, the commands added."""
    existing: dict[str, Any] = {}
    if target.exists():
        try:
            existing = json.loads(target.read_text() or "{}")
        except json.JSONDecodeError as exc:
            raise InvalidInput.for_field(
                "path", f"{target} is not valid JSON ({exc}); fix or move it first"
            ) from None
        if not isinstance(existing, dict) or not isinstance(existing.get("hooks", {}), dict):
            raise InvalidInput.for_field("path", f"{target}: hooks must be a JSON object")
    hooks = dict(existing.get("hooks", {}))
    added: dict[str, list[str]] = {}
    for event, entries in config.items():
        present = list(hooks.get(event, []))
        have = _commands(present)
        new = [e for e in entries if not _commands([e]) <= have]
        if new:
            hooks[event] = present + new
            added[event] = sorted(c for e in new for c in _commands([e]))
    if added:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_text(json.dumps({**existing, "hooks": hooks}, indent=2) + "\n")
        os.replace(tmp, target)
    return added
