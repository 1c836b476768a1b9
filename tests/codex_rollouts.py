"""Codex rollout files written the way Codex writes them (codex-rs RolloutLine: `timestamp`,
`type`, `payload`), with the context, reasoning, tool and event lines around the conversation
that a reader must leave out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NOISE = "zebra77-tool-output"  # only ever in a tool call's output: must never be stored


def line(at: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "payload": payload}


def message(at: str, role: str, text: str, **extra: Any) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    payload = {"type": "message", "role": role, "content": [{"type": part, "text": text}]}
    return line(at, "response_item", {**payload, **extra})


def opening(session: str, cwd: str, at: str = "2026-05-04T10:00:00.000Z") -> list[dict[str, Any]]:
    """What Codex writes before the user's first words: the session's meta, the developer's
    instructions, AGENTS.md and the environment as user messages, the turn's context."""
    return [
        line(
            at,
            "session_meta",
            {
                "id": session,
                "timestamp": at,
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.128.0",
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {"text": "You are Codex, a coding agent."},
                "git": {"branch": "main"},
            },
        ),
        message(at, "developer", "<permissions instructions>Ask before writing.</permissions>"),
        message(
            at,
            "user",
            f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\nRun make test.\n"
            "</INSTRUCTIONS>",
        ),
        message(at, "user", f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>"),
        line(
            at,
            "turn_context",
            {"cwd": cwd, "approval_policy": "on-request", "model": "gpt-5.4", "summary": "auto"},
        ),
    ]


def _clock(second: int) -> str:
    return f"2026-05-04T10:{second // 60:02d}:{second % 60:02d}"


def exchange(question: str, answer: str, *, second: int) -> list[dict[str, Any]]:
    """One turn: the question, its echo for the screen, reasoning, a tool call and its output,
    the answer and its echo, the token count."""
    asked, answered = f"{_clock(second)}.100Z", f"{_clock(second + 5)}.900Z"
    return [
        message(asked, "user", question),
        line(asked, "event_msg", {"type": "user_message", "message": question, "images": []}),
        line(
            asked,
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "Searching the repository"}],
                "content": None,
                "encrypted_content": "gAAAAB-opaque",
            },
        ),
        line(
            asked,
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["rg", "queue"]}),
                "call_id": f"call_{second}",
            },
        ),
        line(
            asked,
            "response_item",
            {
                "type": "function_call_output",
                "call_id": f"call_{second}",
                "output": json.dumps({"output": NOISE, "metadata": {"exit_code": 0}}),
            },
        ),
        message(answered, "assistant", answer, phase="final_answer"),
        line(answered, "event_msg", {"type": "agent_message", "message": answer}),
        line(answered, "event_msg", {"type": "token_count", "info": None}),
    ]


def write_rollout(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path
