"""Helpers for REST tests: JSON posts through Django's test client, envelope checks."""

from __future__ import annotations

import json
from typing import Any

from tests import factories
from tests.factories import VERIFIED


def fresh_scope(name: str = "api") -> str:
    return factories.fresh_scope(name)


def post(client: Any, path: str, body: Any, **extra: Any) -> Any:
    payload = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post(f"/api/{path}", data=payload, content_type="application/json", **extra)


def ok(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.content
    envelope = response.json()
    assert envelope["ok"] is True, envelope
    return envelope["data"]


def err(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    envelope = response.json()
    assert envelope["ok"] is False and envelope["error"]["code"] == code, envelope
    return envelope["error"]


def seed(client: Any, scope: str, content: str) -> str:
    """A memory stored in a throwaway session that is then committed cleanly."""
    opened = ok(
        post(client, "activate", {"task": "seed the scope", "initial_goal": "seed", "scope": scope})
    )
    stored = ok(
        post(
            client,
            "remember",
            {
                "scope": scope,
                "session_id": opened["session_id"],
                "content": content,
                "type": "fact",
            },
        )
    )
    ok(
        post(
            client,
            "commit",
            {
                "session_id": opened["session_id"],
                "final_goal": "seed",
                "outcome": "success",
                "outcome_summary": "seeded",
                "verification": VERIFIED,
            },
        )
    )
    return stored["memory_id"]
