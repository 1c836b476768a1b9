"""`POST /api/import` takes what `slowave import` takes: SLOWAVE_IMPORT_MAX_BYTES, a leading BOM.

Django's own 2.5 MB request cap (DATA_UPLOAD_MAX_MEMORY_SIZE) stays on the other routes; the
import route's limit is the one setting the CLI applies too (tests/cli/test_import_edges.py),
and a refusal names it.
"""

from __future__ import annotations

import json
import urllib.error
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory.models import Session
from memory.services.tokens import token_create
from tests.api.live import slowave_up
from tests.api.support import err, fresh_scope, ok, post

pytestmark = pytest.mark.django_db
REMOTE = {"REMOTE_ADDR": "192.0.2.10"}


@pytest.fixture
def staff() -> dict[str, str]:
    get_user_model().objects.create_user(username="limits-staff", password="x", is_staff=True)
    token = token_create(username="limits-staff", name="limits", now=timezone.now())[1]
    return {"HTTP_AUTHORIZATION": f"Bearer {token}", **REMOTE}


def _lines(count: int, key: str = "big") -> str:
    row = {"session_key": key, "role": "user", "content": "Releases happen on Thursdays. " * 3}
    return (json.dumps(row) + "\n") * count


def test_it_takes_a_transcript_past_djangos_upload_cap(client, settings, staff) -> None:
    content = _lines(30_000)
    assert len(content.encode()) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    body = {"scope": fresh_scope("big"), "content": content, "dry_run": True}
    report = ok(post(client, "import", body, **staff))
    assert report["lines"] == 30_000 and report["would_create"] == ["big"]


def test_it_refuses_content_past_slowave_import_max_bytes_and_names_it(
    client, settings, staff
) -> None:
    settings.SLOWAVE_IMPORT_MAX_BYTES = 200
    scope = fresh_scope("limit")
    content = _lines(3)
    error = err(
        post(client, "import", {"scope": scope, "content": content}, **staff), 400, "invalid_input"
    )
    size = len(content.encode())
    assert error["field_errors"][0]["path"] == "content"
    assert f"content is {size} bytes" in error["message"]
    assert "at most 200 bytes (SLOWAVE_IMPORT_MAX_BYTES)" in error["message"]
    # A body far past what 200 bytes of content can make is refused before it is parsed.
    huge = {"scope": scope, "content": "x" * 70_000}
    error = err(post(client, "import", huge, **staff), 400, "invalid_input")
    assert "SLOWAVE_IMPORT_MAX_BYTES" in error["message"], error
    assert not Session.objects.filter(scope=scope).exists()


def test_it_accepts_a_byte_order_mark_at_the_start_of_the_content(client, staff) -> None:
    scope = fresh_scope("bom")
    content = "\ufeff" + _lines(2, key="bom")
    report = ok(post(client, "import", {"scope": scope, "content": content}, **staff))
    assert report["sessions_created"] and report["events"] == 2


def test_it_takes_the_same_big_transcript_from_a_live_server(tmp_path: Path) -> None:
    # Under uvicorn, as agents and `curl` reach it; and the limit still applies there.
    content = _lines(30_000, key="live")
    with slowave_up(tmp_path, SLOWAVE_EMBEDDER="hash", SLOWAVE_IMPORT_MAX_BYTES="5000000") as live:
        body = {"scope": fresh_scope("live"), "content": content, "dry_run": True}
        assert live.call("import", body)["lines"] == 30_000
        with pytest.raises(urllib.error.HTTPError) as refused:
            live.call("import", {**body, "content": content + _lines(10_000, key="live")})
    error = json.loads(refused.value.read())["error"]
    assert refused.value.code == 400 and error["field_errors"][0]["path"] == "content"
    assert "at most 5000000 bytes (SLOWAVE_IMPORT_MAX_BYTES)" in error["message"]
