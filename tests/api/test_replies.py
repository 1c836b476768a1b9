"""Every route's success reply matches the schema the OpenAPI document declares for its 200.

One scenario drives the real services through every route: cold and warm activations, single
and batch remembers, a paged recall with full evidence and its continuation, single and batch
feedback with a rejected target, closing and re-closing commits, every read, the staff
controls and both imports. Each 200 body is validated against its operation's declared schema
(refs resolved in the document itself), whose reply models refuse unknown keys: a key a
service adds, drops or retypes fails here. The scenario must reach every operation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from jsonschema import Draft202012Validator, FormatChecker

from memory.services.tokens import token_create
from tests.api.support import VERIFIED, fresh_scope, post
from tests.cli.runner import slowave

pytestmark = pytest.mark.django_db

LONG = " ".join(f"The billing service retries failed request {i} after {i}s." for i in range(60))
SERVICES = ("billing", "search", "checkout", "inventory", "shipping", "accounts", "reports")
PARTS = ("queue", "cache", "database", "worker", "gateway")
# Many related facts: more than one page of recall holds, so it pages.
FACTS = [
    f"The {SERVICES[i % 7]} service {PARTS[i % 5]} retries failed requests {i + 2} times"
    for i in range(40)
]
TASK = "Review retry settings"
QUERY = "How many times do services retry failed requests?"
TRANSCRIPT = '{"session_key": "chat-1", "role": "user", "content": "Retries go up to five."}\n'


class Api:
    """The test client, checking each 200 against the document's schema for its operation."""

    def __init__(self, client: Client, document: dict[str, Any], staff: str) -> None:
        self.client, self.document = client, document
        self.staff = {"HTTP_AUTHORIZATION": f"Bearer {staff}"}
        self.operations = [
            (re.compile("^" + re.sub(r"\{\w+\}", "[^/]+", path) + "$"), method, operation)
            for path, methods in document["paths"].items()
            for method, operation in methods.items()
        ]
        self.reached: set[str] = set()

    def _check(self, method: str, path: str, response: Any) -> Any:
        assert response.status_code == 200, (method, path, response.content)
        body = response.json()
        [operation] = [
            op for pattern, m, op in self.operations if m == method and pattern.match(path)
        ]
        schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
        root = {**schema, "components": self.document["components"]}
        validator = Draft202012Validator(root, format_checker=FormatChecker())
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
        assert not errors, (method, path, errors[:5])
        self.reached.add(operation["operationId"])
        return body["data"]

    def get(self, path: str, **query: Any) -> Any:
        return self._check("get", f"/api/{path}", self.client.get(f"/api/{path}", query))

    def post(self, path: str, body: Any, *, staff: bool = False) -> Any:
        headers = self.staff if staff else {}
        return self._check("post", f"/api/{path}", post(self.client, path, body, **headers))


@pytest.fixture
def api(client: Client) -> Api:
    get_user_model().objects.create_user(username="replies-staff", password="x", is_staff=True)
    token = token_create(username="replies-staff", name="replies", now=timezone.now())[1]
    return Api(client, client.get("/api/openapi.json").json(), token)


def _activate(api: Api, scope: str, task: str) -> dict[str, Any]:
    return api.post("activate", {"task": task, "initial_goal": "g", "scope": scope})


def _answer_all(api: Api, *replies: dict[str, Any]) -> None:
    """Feedback covering everything shown, as a batch of one record per retrieval."""
    items = [
        {
            "retrieval_id": r["retrieval_id"],
            "coverage": "complete",
            "memory_feedback": [
                {"memory_id": m["memory_id"], "assessment": "used"} for m in r["memories"]
            ],
            "procedure_feedback": [
                {"procedure_id": p["procedure_id"], "use": "used", "contribution": "followed it"}
                for p in r["procedures"]
            ],
        }
        for r in replies
    ]
    api.post("feedback", {"items": items})


def _commit(api: Api, session_id: str, **extra: Any) -> dict[str, Any]:
    body = {
        "session_id": session_id,
        "final_goal": "done",
        "outcome": "success",
        "outcome_summary": "done",
        "verification": VERIFIED,
    }
    return api.post("commit", body | extra)


def _first_session(api: Api, scope: str) -> None:
    """Cold start (with a near-twin scope elsewhere), remembers, a procedure and a trajectory."""
    opened = _activate(api, scope, TASK)
    assert opened["memory_state"] == "cold_start"
    session = {"scope": scope, "session_id": opened["session_id"]}
    api.post("remember", {**session, "content": LONG, "type": "fact"})
    batch = [{"content": fact, "type": "fact"} for fact in FACTS]
    batch.append({"content": LONG, "type": "fact", "occurred_at": "2026-05-08T13:56:00Z"})
    stored = api.post("remember", {**session, "memories": batch})
    assert stored["results"][-1]["data"]["disposition"] == "matched"
    _answer_all(api, opened)
    procedure = {"summary": "Tune service retries", "steps": [{"summary": "count retries"}]}
    trajectory = [
        {"kind": "action", "summary": "called slowave_recall"},
        {"kind": "observation", "summary": "retries are per service", "status": "succeeded"},
    ]
    closed = _commit(
        api, opened["session_id"], final_goal=TASK, procedure=procedure, trajectory=trajectory
    )
    assert closed["trajectory_lifecycle_filtered"] == 1


def _second_session(api: Api, scope: str) -> str:
    """A warm start, a paged recall with full evidence, partial and rejected feedback."""
    opened = _activate(api, scope, TASK)
    assert opened["memories"] and opened["procedures"]
    session = {"scope": scope, "session_id": opened["session_id"]}
    recalled = api.post("recall", {**session, "query": QUERY, "evidence": "full"})
    assert recalled["more_available"] and recalled["procedures"][0]["steps"]
    page = api.post("recall", {**session, "continue_from": recalled["continue_from"]})
    # A token budget shows the long memory cut, with its full length.
    cue = "After how many seconds does the billing service retry failed request 7?"
    budgeted = api.post("recall", {**session, "query": cue, "max_tokens": 256})
    assert any(m.get("content_chars") == len(LONG) for m in budgeted["memories"]), budgeted
    shown = recalled["memories"][0]["memory_id"]
    api.post(
        "feedback",
        {
            "retrieval_id": recalled["retrieval_id"],
            "memory_feedback": [
                {"memory_id": shown, "assessment": "used", "effect": "helped"},
                {"memory_id": "sch_999999", "assessment": "used"},
            ],
        },
    )
    _answer_all(api, opened, recalled, page, budgeted)
    return opened["session_id"]


def _third_session(api: Api, scope: str) -> str:
    """Events but no recall (a session note), left open with a retrieval lacking feedback."""
    opened = _activate(api, scope, "retry settings of a new service")
    for i in range(3):
        api.post(
            "remember",
            {
                "scope": scope,
                "session_id": opened["session_id"],
                "content": f"Client {i} pays yearly",
                "type": "decision",
            },
        )
    gap = _activate(api, scope, TASK)  # stays open with outstanding feedback
    assert api.get(f"sessions/{gap['session_id']}")["retrievals"][0]["gap"] is not None
    _answer_all(api, opened)
    assert "session_note" in _commit(api, opened["session_id"])
    assert _commit(api, opened["session_id"])["already_ended"] is True
    return gap["retrieval_id"]


def _reads(api: Api, scope: str, retrieval_id: str, session_id: str) -> None:
    listed = api.get("memories", scope=scope, limit=200)
    memory_id = listed["memories"][0]["id"]
    api.get(f"memories/{memory_id}")
    api.get("sessions", scope=scope)
    api.get(f"sessions/{session_id}")
    api.get(f"retrievals/{retrieval_id}")
    procedure_id = api.get("procedures", scope=scope)["procedures"][0]["id"]
    api.get(f"procedures/{procedure_id}")
    api.get("stats", scope=scope)
    api.get("stats")
    api.get("health")


def _staff(api: Api, scope: str, export: str) -> None:
    memory_id = api.get("memories", scope=scope)["memories"][0]["id"]
    api.post(f"memories/{memory_id}/forget", {"reason": "wrong"}, staff=True)
    assert (
        api.post(f"memories/{memory_id}/forget", {"reason": "again"}, staff=True)["changed"]
        is False
    )
    assert api.get(f"memories/{memory_id}")["forget_log"]
    api.post(f"memories/{memory_id}/unforget", "", staff=True)
    procedure_id = api.get("procedures", scope=scope)["procedures"][0]["id"]
    api.post(f"procedures/{procedure_id}/forget", {"reason": "outdated"}, staff=True)
    api.post(f"procedures/{procedure_id}/unforget", {"reason": "still right"}, staff=True)
    target = {"scope": fresh_scope("replies-import"), "content": TRANSCRIPT}
    assert api.post("import", {**target, "dry_run": True}, staff=True)["would_create"]
    api.post("import", target, staff=True)
    other = api.post("import", {"format": "export", "content": export, "remap": True}, staff=True)
    assert other["remapped"]["Event"] == 1


def _export_of_another_store(tmp_path: Path) -> str:
    """An export whose integer ids collide with this store's, made through the real CLI."""
    home, transcript = tmp_path / "other", tmp_path / "t.jsonl"
    home.mkdir()
    transcript.write_text(TRANSCRIPT)
    for args in (("migrate", "-v", "0"), ("import", str(transcript), "--scope", "project:other")):
        assert slowave(home, *args).code == 0
    exported = slowave(home, "export", "--scope", "project:other")
    assert exported.code == 0, exported.err
    return exported.out


def test_it_answers_every_route_with_the_declared_reply(api: Api, tmp_path: Path) -> None:
    scope = fresh_scope("replies")
    _activate(api, scope.replace("replies", "REPLIES"), "a near twin of the scope")
    _first_session(api, scope)
    session_id = _second_session(api, scope)
    retrieval_id = _third_session(api, scope)
    _reads(api, scope, retrieval_id, session_id)
    _staff(api, scope, _export_of_another_store(tmp_path))

    operations = {op["operationId"] for ms in api.document["paths"].values() for op in ms.values()}
    assert api.reached == operations
