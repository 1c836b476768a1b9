"""The five MCP tools as a table: name → input model, service, description.

No logic lives here: `server.py` validates, calls and wraps; the services do the work.
Services are named by dotted path and imported on first call, so listing tools never pays
for (or breaks on) whatever a service module imports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.module_loading import import_string
from pydantic import BaseModel

from mcp_bridge import descriptions
from memory.schemas import ActivateIn, CommitIn, FeedbackIn, RecallIn, RememberIn


@dataclass(frozen=True)
class Tool:
    name: str
    model: type[BaseModel]
    service_path: str
    description: str
    # Only activate records who is calling; the others are keyed by session_id.
    takes_client: bool = False

    @property
    def service(self) -> Callable[..., dict[str, Any]]:
        return import_string(self.service_path)  # cached by sys.modules after the first call

    def input_schema(self) -> dict[str, Any]:
        return self.model.model_json_schema()


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "slowave_activate",
            ActivateIn,
            "memory.services.activate.session_activate",
            descriptions.ACTIVATE,
            takes_client=True,
        ),
        Tool(
            "slowave_remember",
            RememberIn,
            "memory.services.remember.memory_remember",
            descriptions.REMEMBER,
        ),
        Tool(
            "slowave_recall",
            RecallIn,
            "memory.services.recall.retrieval_recall",
            descriptions.RECALL,
        ),
        Tool(
            "slowave_feedback",
            FeedbackIn,
            "memory.services.feedback.feedback_submit",
            descriptions.FEEDBACK,
        ),
        Tool(
            "slowave_commit",
            CommitIn,
            "memory.services.commit.session_commit",
            descriptions.COMMIT,
        ),
    )
}
