"""Admin pages reached through the admin's own links: public ids arrive quoted (`_` as `_5F`).

Django's links quote primary keys, so `sess_ab12` becomes `sess_5Fab12` in a URL. Every page and
control must look the object up by the unquoted id, and a public id pasted into a URL as people
read it (`sch_7`, `proc_sess_…`) opens the same page.
"""

from __future__ import annotations

import pytest
from django.contrib.admin.utils import quote
from django.test import Client
from django.urls import reverse

from memory.models import ForgetLog, Procedure
from tests import factories

pytestmark = pytest.mark.django_db


def _world() -> dict[str, str]:
    scope = factories.fresh_scope("quoted")
    opened = factories.open_session(scope, "Keep notes on invoices")
    (memory_id,) = factories.remember(scope, opened["session_id"], "Invoices go out monthly.")
    factories.commit(
        opened["session_id"],
        procedure={"summary": "Send invoices", "steps": [{"summary": "generate them"}]},
    )
    shown = factories.retrieval(scope, "When do invoices go out?")
    assert memory_id in [m["memory_id"] for m in shown["memories"]]
    return {
        "memory": memory_id,
        "session": opened["session_id"],
        "retrieval": shown["retrieval_id"],
        "procedure": Procedure.objects.get(session_id=opened["session_id"]).pk,
    }


def _page(client: Client, model: str, object_id: str) -> str:
    reply = client.get(reverse(f"admin:memory_{model}_change", args=[object_id]))
    assert reply.status_code == 200, reply
    return reply.content.decode()


def test_it_opens_retrieval_session_and_procedure_pages_at_their_quoted_urls(
    admin_client: Client,
) -> None:
    ids = _world()
    assert "_5F" in quote(ids["retrieval"])  # the spelling the admin's own links use
    retrieval = _page(admin_client, "retrieval", quote(ids["retrieval"]))
    assert "Exposed to the agent (0)" not in retrieval and ids["memory"] in retrieval
    session = _page(admin_client, "session", quote(ids["session"]))
    assert "Events (0)" not in session and "Invoices go out monthly." in session
    procedure = _page(admin_client, "procedure", quote(ids["procedure"]))
    assert "Suppress (forget)" in procedure and "(success)" in procedure


def test_it_suppresses_and_restores_a_procedure_at_its_quoted_url(admin_client: Client) -> None:
    ids = _world()
    quoted = quote(ids["procedure"])
    forget = reverse("admin:memory_procedure_forget", args=[quoted])
    assert admin_client.get(forget).status_code == 200
    done = admin_client.post(forget, {"reason": "superseded by the new billing run"})
    assert done.status_code == 302
    assert Procedure.objects.get(pk=ids["procedure"]).status == "forgotten"
    back = admin_client.post(reverse("admin:memory_procedure_unforget", args=[quoted]))
    assert back.status_code == 302
    assert Procedure.objects.get(pk=ids["procedure"]).status == "active"
    assert list(ForgetLog.objects.values_list("action", flat=True).order_by("pk")) == [
        "forget",
        "unforget",
    ]


def test_it_opens_a_memory_at_a_pasted_public_id(admin_client: Client) -> None:
    ids = _world()
    page = _page(admin_client, "memory", ids["memory"])  # /admin/memory/memory/sch_7/change/
    assert "Invoices go out monthly." in page and "deleted" not in page


def test_it_says_a_missing_object_is_missing_instead_of_forbidding_it(
    admin_client: Client,
) -> None:
    reply = admin_client.get(reverse("admin:memory_procedure_forget", args=["proc_sess_nope"]))
    assert reply.status_code == 302 and reply["Location"] == reverse("admin:index")
    page = admin_client.get(reply["Location"])
    assert "doesn’t exist" in page.content.decode() or "doesn't exist" in page.content.decode()
