"""A procedure's page shows how it fared when agents used it, and warns when harm dominates."""

from __future__ import annotations

import pytest
from django.contrib.admin.utils import quote
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memory.schemas import FeedbackIn
from memory.services.feedback import feedback_submit
from tests import factories

pytestmark = pytest.mark.django_db
TASK = "Rotate the production API tokens"


def _used(scope: str, procedure_id: str, effect: str) -> None:
    shown = factories.retrieval(scope, TASK)
    assert procedure_id in [p["procedure_id"] for p in shown["procedures"]], shown
    feedback_submit(
        data=FeedbackIn(
            retrieval_id=shown["retrieval_id"],
            coverage="complete",
            memory_feedback=[
                {"memory_id": m["memory_id"], "assessment": "irrelevant"}
                for m in shown["memories"]
            ],
            procedure_feedback=[
                {
                    "procedure_id": procedure_id,
                    "use": "used",
                    "effect": effect,
                    "contribution": "followed its steps",
                }
            ],
        ),
        now=timezone.now(),
    )


def test_it_counts_helped_no_effect_and_harmed_and_warns_when_harm_dominates(
    admin_client: Client,
) -> None:
    scope = factories.fresh_scope("track")
    opened = factories.open_session(scope, TASK)
    factories.commit(
        opened["session_id"],
        goal=TASK,
        procedure={
            "summary": "Rotate the production API tokens with the rotation job",
            "steps": [{"summary": "run the rotation job"}],
        },
    )
    procedure_id = f"proc_{opened['session_id']}"
    url = reverse("admin:memory_procedure_change", args=[quote(procedure_id)])
    _used(scope, procedure_id, "helped")
    page = admin_client.get(url).content.decode()
    assert "helped 1 · no effect 0 · harmed 0" in page and "harm dominates" not in page
    _used(scope, procedure_id, "harmed")
    _used(scope, procedure_id, "harmed")
    page = admin_client.get(url).content.decode()
    assert "helped 1 · no effect 0 · harmed 2" in page and "harm dominates" in page
