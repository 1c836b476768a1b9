"""The admin shows what SLOWAVE_SECRETS=redact replaced: on the memory, on the session that
committed or imported it, and on a procedure; kinds and counts, never a value."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memory.models import Memory, Procedure
from memory.schemas import CommitIn
from memory.services.commit import session_commit
from tests.factories import open_session, remember

pytestmark = pytest.mark.django_db
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"


def test_it_lists_the_redacted_fields_on_each_page(admin_client: Client, settings) -> None:
    settings.SLOWAVE_SECRETS = "redact"
    now = timezone.now()
    session_id = open_session("project:adm", "notes", now=now)["session_id"]
    remember("project:adm", session_id, f"Uploads use {AWS_ID} and {AWS_ID[:-1]}Z", now=now)
    session_commit(
        data=CommitIn.model_validate(
            {
                "session_id": session_id,
                "final_goal": "ship",
                "outcome": "success",
                "outcome_summary": "done",
                "verification": {"status": "verified", "summary": f"pushed with {GITHUB}"},
                "procedure": {"summary": "publish", "steps": [{"summary": f"use {GITHUB}"}]},
            }
        ),
        now=now,
    )
    pages = {
        "memory": reverse("admin:memory_memory_change", args=[Memory.objects.get().pk]),
        "session": reverse("admin:memory_session_change", args=[session_id]),
        "procedure": reverse("admin:memory_procedure_change", args=[Procedure.objects.get().pk]),
    }
    html = {name: admin_client.get(url).content.decode() for name, url in pages.items()}
    assert 'id="redactions"' in html["memory"]
    assert "<td>content</td><td>AWS access key ×2</td>" in html["memory"]
    assert "<td>verification.summary</td><td>GitHub token ×1</td>" in html["session"]
    assert "<td>procedure.steps[0].summary</td><td>GitHub token ×1</td>" in html["procedure"]
    assert "verification.summary" not in html["procedure"]
    assert all(AWS_ID not in page and GITHUB not in page for page in html.values())


def test_a_page_with_nothing_redacted_has_no_section(admin_client: Client) -> None:
    session_id = open_session("project:adm", "notes")["session_id"]
    remember("project:adm", session_id, "Uploads run hourly")
    page = admin_client.get(reverse("admin:memory_memory_change", args=[Memory.objects.get().pk]))
    assert page.status_code == 200 and 'id="redactions"' not in page.content.decode()
