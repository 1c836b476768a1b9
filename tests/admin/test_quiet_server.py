"""`slowave up` is quiet as promised: an ordinary visit logs nothing, a refusal one line."""

from __future__ import annotations

import logging
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from tests.admin.live import live_server


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_an_ordinary_visit_leaves_the_console_empty(tmp_path: Path) -> None:
    with live_server(tmp_path, SLOWAVE_EMBEDDER="hash") as base:
        for path in ("/static/admin/css/base.css", "/static/admin/js/core.js"):
            with urllib.request.urlopen(f"{base}{path}") as reply:
                assert reply.status == 200 and len(reply.read()) > 100
        with urllib.request.urlopen(f"{base}/favicon.ico") as reply:
            assert reply.status == 200 and reply.headers["Content-Type"] == "image/svg+xml"
            assert b"<svg" in reply.read()
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.build_opener(_NoRedirect).open(f"{base}/")
        assert caught.value.code == 302 and caught.value.headers["Location"] == "/admin/"
        with urllib.request.urlopen(f"{base}/admin/login/") as reply:
            assert b'rel="icon"' in reply.read()
    console = (tmp_path / "up.log").read_text()
    for noise in ("StreamingHttpResponse", "Not Found", "Traceback", "Warning"):
        assert noise not in console, console


@pytest.mark.django_db
def test_a_refused_control_logs_one_line_without_a_traceback(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    viewer = User.objects.create_user("viewer", password="viewer-pass-123", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_memory"))
    client.force_login(viewer)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        reply = client.post(reverse("admin:memory_memory_forget", args=[1]), {"reason": "no"})
    assert reply.status_code == 403
    refused = [r for r in caplog.records if r.name == "django.request"]
    assert [r.getMessage() for r in refused] == [
        "Forbidden (Permission denied): /admin/memory/memory/1/forget/"
    ]
    assert refused[0].exc_info is None
