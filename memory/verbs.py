"""The five agent verbs, written once: MCP lists them as tools, REST serves them as routes.

Each verb names its input model (memory.schemas), the service that runs it, the shape of its
reply's `data` (memory.replies.verbs, which the service returns) and the description the
agent reads (memory.descriptions). mcp_bridge/tools.py and memory/api/verbs.py both read
VERBS; nothing here validates, calls or wraps.

The services are imported here, so listing tools imports them too. That stays cheap because
each service keeps its heavy imports (the embedding runtime, the vector index) inside the
functions that need them; tests/mcp_bridge/test_startup.py guards the handshake budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from memory import descriptions
from memory.replies import verbs as replies
from memory.schemas import ActivateIn, CommitIn, FeedbackIn, RecallIn, RememberIn
from memory.services.activate import session_activate
from memory.services.commit import session_commit
from memory.services.feedback import feedback_submit
from memory.services.recall import retrieval_recall
from memory.services.remember import memory_remember


@dataclass(frozen=True)
class Verb:
    name: str  # the MCP tool name; the REST route is `/api/<route>`
    model: type[BaseModel]  # what the service's `data` argument is
    service: Callable[..., Any]  # called as service(data=..., now=...[, client=...])
    reply: Any  # the TypedDict (or union of them) the service returns
    description: str
    # Only activate records who is calling; the others are keyed by session_id.
    takes_client: bool = False

    @property
    def route(self) -> str:
        return self.name.removeprefix("slowave_")

    def input_schema(self) -> dict[str, Any]:
        return self.model.model_json_schema()


VERBS: dict[str, Verb] = {
    verb.name: verb
    for verb in (
        Verb(
            "slowave_activate",
            ActivateIn,
            session_activate,
            replies.ActivateOut,
            descriptions.ACTIVATE,
            takes_client=True,
        ),
        Verb(
            "slowave_remember",
            RememberIn,
            memory_remember,
            replies.RememberOut,
            descriptions.REMEMBER,
        ),
        Verb("slowave_recall", RecallIn, retrieval_recall, replies.RecallOut, descriptions.RECALL),
        Verb(
            "slowave_feedback",
            FeedbackIn,
            feedback_submit,
            replies.FeedbackOut,
            descriptions.FEEDBACK,
        ),
        Verb("slowave_commit", CommitIn, session_commit, replies.CommitOut, descriptions.COMMIT),
    )
}
