"""The verb registry: one table that MCP and REST both read, naming the real services.

Each service takes the verb's input model as `data` and is declared to return the verb's reply
shape, which is what the OpenAPI document shows for the route and what tests/api/test_replies.py
checks the service's actual replies against.
"""

from __future__ import annotations

import typing

import pytest

from mcp_bridge.tools import TOOLS
from memory.api import verbs as rest_verbs
from memory.api.replies import VERB_REPLIES
from memory.verbs import VERBS

NAMES = sorted(VERBS)


def test_it_is_the_table_the_mcp_tools_are() -> None:
    assert TOOLS is VERBS
    assert list(VERBS) == [
        "slowave_activate",
        "slowave_remember",
        "slowave_recall",
        "slowave_feedback",
        "slowave_commit",
    ]


@pytest.mark.parametrize("name", NAMES)
def test_it_names_a_service_taking_the_input_model_and_returning_the_reply(name: str) -> None:
    verb = VERBS[name]
    hints = typing.get_type_hints(verb.service)
    assert hints["data"] is verb.model
    assert hints["return"] == verb.reply
    assert ("client" in hints) is verb.takes_client


@pytest.mark.parametrize("name", NAMES)
def test_it_is_the_table_the_rest_routes_are(name: str) -> None:
    verb = VERBS[name]
    [operation] = [
        op
        for path_view in rest_verbs.router.path_operations.values()
        for op in path_view.operations
        if op.operation_id == f"memory_api_{verb.route}"
    ]
    assert operation.summary == name
    assert operation.methods == ["POST"]
    reply = operation.openapi_extra["responses"][200]["content"]["application/json"]["schema"]
    assert reply == {"$ref": f"#/components/schemas/{VERB_REPLIES[name].__name__}"}
    assert VERB_REPLIES[name].model_fields["data"].annotation == verb.reply
