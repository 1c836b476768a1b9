"""The control panel's gate and its actions: login required, controls only through services."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memory.models import ForgetLog, Memory
from memory.schemas import ActivateIn, RememberIn
from memory.services.activate import session_activate
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo

pytestmark = pytest.mark.django_db
ADMIN_CODE = Path(__file__).resolve().parents[2] / "memory" / "admin"
WRITES = re.compile(r"\.(save|update|delete|create|bulk_create|get_or_create|update_or_create)\(")


def _memories(*contents: str) -> list[Memory]:
    now = timezone.now()
    opened = session_activate(
        data=ActivateIn(task="notes", initial_goal="g", scope="project:adm"),
        client=ClientInfo(),
        now=now,
    )
    stored = memory_remember(
        data=RememberIn(
            scope="project:adm",
            session_id=opened["session_id"],
            memories=[{"content": c, "type": "fact"} for c in contents],
        ),
        now=now,
    )
    return [Memory.objects.get(pk=int(r["data"]["memory_id"][4:])) for r in stored["results"]]


def test_it_sends_anonymous_people_to_the_login_page(client: Client) -> None:
    urls = [
        reverse("slowave-dashboard"),
        reverse("admin:index"),
        reverse("admin:memory_memory_forget", args=[1]),
        reverse("admin:memory_memory_unforget", args=[1]),
    ]
    urls += [
        reverse(f"admin:{m._meta.app_label}_{m._meta.model_name}_changelist")
        for m in admin.site._registry
    ]
    for url in urls:
        reply = client.get(url)
        assert reply.status_code == 302 and reply["Location"].startswith("/admin/login/"), url
    assert client.post(reverse("admin:memory_memory_unforget", args=[1])).status_code == 302


def test_it_suppresses_and_restores_in_bulk_through_the_services(admin_client: Client) -> None:
    memories = _memories("Bulk fact one about caching.", "Bulk fact two about queues.")
    url = reverse("admin:memory_memory_changelist")
    picked = {ACTION_CHECKBOX_NAME: [m.pk for m in memories]}
    confirm = admin_client.post(url, {"action": "suppress_selected", "index": 0, **picked})
    assert confirm.status_code == 200 and b"Reason" in confirm.content  # asks why first
    assert not ForgetLog.objects.exists()
    blank = admin_client.post(url, {"action": "suppress_selected", "reason": "  ", **picked})
    assert blank.status_code == 200 and not ForgetLog.objects.exists()
    done = admin_client.post(
        url, {"action": "suppress_selected", "reason": "wrong project", **picked}
    )
    assert done.status_code == 302
    logs = list(ForgetLog.objects.order_by("pk"))
    assert [(g.action, g.prior_status, g.reason, g.actor) for g in logs] == [
        ("forget", "active", "wrong project", "admin")
    ] * 2
    assert set(
        Memory.objects.filter(pk__in=picked[ACTION_CHECKBOX_NAME]).values_list("status", flat=True)
    ) == {"forgotten"}
    admin_client.post(url, {"action": "restore_selected", "index": 0, **picked})
    assert set(
        Memory.objects.filter(pk__in=picked[ACTION_CHECKBOX_NAME]).values_list("status", flat=True)
    ) == {"active"}
    assert ForgetLog.objects.filter(action="unforget").count() == 2


def test_it_withholds_controls_from_view_only_staff(client: Client) -> None:
    (memory,) = _memories("A fact a viewer may read but not suppress.")
    viewer = User.objects.create_user("viewer", password="viewer-pass-123", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_memory"))
    client.force_login(viewer)
    page = client.get(reverse("admin:memory_memory_change", args=[memory.pk]))
    assert page.status_code == 200 and b"suppress-button" not in page.content
    assert (
        client.post(
            reverse("admin:memory_memory_forget", args=[memory.pk]), {"reason": "no"}
        ).status_code
        == 403
    )
    changelist = client.get(reverse("admin:memory_memory_changelist"))
    assert b"suppress_selected" not in changelist.content
    assert Memory.objects.get(pk=memory.pk).status == "active"


def test_it_keeps_orm_writes_out_of_the_admin() -> None:
    """Admin code reads through selectors and writes only by calling services."""
    offenders = [
        f"{path.name}:{n}"
        for path in sorted(ADMIN_CODE.glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if WRITES.search(line)
    ]
    assert offenders == []
