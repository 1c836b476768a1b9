"""One Host/Origin/Content-Type policy for `/api/` and `/mcp`, against a live `slowave up`.

Tokenless loopback access is on (the default), so without the policy a web page could read
every memory through DNS rebinding (its name re-pointed at 127.0.0.1: a foreign Host) and
open sessions with a "simple" cross-site POST (text/plain, a foreign Origin). Both surfaces
must refuse those with the API's error envelope, take the names SLOWAVE_ALLOWED_HOSTS adds,
and leave the admin's same-origin form posts alone.
"""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.admin.live import live_server
from tests.api.live import staff_token
from tests.api.support import fresh_scope

EXTRA_HOST = "slowave.test"
ADMIN_PASSWORD = "live-staff-pw-1"  # what tests.api.live.staff_token sets


@dataclass(frozen=True)
class Server:
    port: int
    home: Path

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def envelope(self) -> dict[str, Any]:
        assert self.headers.get("Content-Type", "").startswith("application/json"), self.body
        return json.loads(self.body)

    def error_code(self) -> str:
        envelope = self.envelope()
        assert envelope["ok"] is False, envelope
        return envelope["error"]["code"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("host-policy")
    with live_server(
        home,
        ready="/api/health",
        SLOWAVE_EMBEDDER="hash",  # nothing here ranks memories
        SLOWAVE_ALLOWED_HOSTS=EXTRA_HOST,
    ) as base:
        staff_token(home)  # the admin login the last test signs in with
        yield Server(port=urlsplit(base).port or 80, home=home)


def send(
    server: Server,
    method: str,
    path: str,
    body: bytes | None = None,
    *,
    host: str | None = None,
    **headers: str,
) -> Reply:
    """A raw request: http.client sends exactly the Host and Content-Type given."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or f"127.0.0.1:{server.port}")
        for name, value in headers.items():
            connection.putheader(name.replace("_", "-"), value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return Reply(response.status, response.msg, response.read())
    finally:
        connection.close()


def _activate_body(scope: str) -> bytes:
    return json.dumps({"task": "read the notes", "initial_goal": "g", "scope": scope}).encode()


def _sessions(server: Server, scope: str) -> int:
    reply = send(server, "GET", f"/api/sessions?scope={scope}")
    assert reply.status == 200, reply.body
    return len(reply.envelope()["data"]["sessions"])


MCP_PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


def test_it_refuses_a_foreign_host_on_rest_and_mcp_with_the_envelope(server: Server) -> None:
    # DNS rebinding: the page's own name in Host, the visitor's loopback as the address.
    rebound = f"attacker.example:{server.port}"
    read = send(server, "GET", "/api/memories", host=rebound)
    assert read.status == 421 and read.error_code() == "host_not_allowed"
    assert "SLOWAVE_ALLOWED_HOSTS" in read.envelope()["error"]["message"]
    mcp = send(
        server,
        "POST",
        "/mcp",
        MCP_PING,
        host=rebound,
        Content_Type="application/json",
        **MCP_ACCEPT,
    )
    assert mcp.status == 421 and mcp.error_code() == "host_not_allowed"
    # The same request under this machine's own names goes through.
    for name in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "localhost"):
        assert send(server, "GET", "/api/memories", host=name).status == 200, name


def test_it_takes_the_names_slowave_allowed_hosts_adds_on_both_surfaces(server: Server) -> None:
    named = f"{EXTRA_HOST}:{server.port}"
    assert send(server, "GET", "/api/memories", host=named).status == 200
    mcp = send(
        server,
        "POST",
        "/mcp",
        MCP_PING,
        host=named,
        Content_Type="application/json",
        Origin=f"http://{named}",
        **MCP_ACCEPT,
    )
    assert mcp.status == 200, mcp.body
    assert json.loads(mcp.body)["result"] == {}


def test_it_refuses_a_simple_cross_site_post_and_writes_nothing(server: Server) -> None:
    scope = fresh_scope("csrf")
    # What a page's fetch(..., {mode: "no-cors", body}) sends: no preflight, text/plain.
    cross_site = send(
        server,
        "POST",
        "/api/activate",
        _activate_body(scope),
        Content_Type="text/plain;charset=UTF-8",
        Origin="https://attacker.example",
    )
    assert cross_site.status == 403 and cross_site.error_code() == "origin_not_allowed"
    # Without an Origin (not a browser), text/plain is still not the API's media type.
    plain = send(server, "POST", "/api/activate", _activate_body(scope), Content_Type="text/plain")
    assert plain.status == 415 and plain.error_code() == "unsupported_media_type"
    assert "application/json" in plain.envelope()["error"]["message"]
    form = send(
        server,
        "POST",
        "/api/activate",
        b"task=x",
        Content_Type="application/x-www-form-urlencoded",
    )
    assert form.status == 415 and form.error_code() == "unsupported_media_type"
    no_type = send(server, "POST", "/api/activate", _activate_body(scope))
    assert no_type.status == 415, no_type.body
    assert _sessions(server, scope) == 0
    # A JSON post from a page on this server's own origin is the API working as meant.
    same = send(
        server,
        "POST",
        "/api/activate",
        _activate_body(scope),
        Content_Type="application/json",
        Origin=server.origin,
    )
    assert same.status == 200, same.body
    assert _sessions(server, scope) == 1


def test_it_refuses_a_foreign_origin_even_with_json(server: Server) -> None:
    scope = fresh_scope("origin")
    for origin in ("http://attacker.example", "null", f"http://attacker.example:{server.port}"):
        reply = send(
            server,
            "POST",
            "/api/activate",
            _activate_body(scope),
            Content_Type="application/json",
            Origin=origin,
        )
        assert reply.status == 403 and reply.error_code() == "origin_not_allowed", origin
        read = send(server, "GET", "/api/memories", Origin=origin)
        assert read.status == 403 and read.error_code() == "origin_not_allowed", origin
    assert _sessions(server, scope) == 0


def test_it_applies_the_content_type_and_origin_rules_to_mcp(server: Server) -> None:
    plain = send(server, "POST", "/mcp", MCP_PING, Content_Type="text/plain", **MCP_ACCEPT)
    assert plain.status == 415 and plain.error_code() == "unsupported_media_type"
    foreign = send(
        server,
        "POST",
        "/mcp",
        MCP_PING,
        Content_Type="application/json",
        Origin="https://attacker.example",
        **MCP_ACCEPT,
    )
    assert foreign.status == 403 and foreign.error_code() == "origin_not_allowed"
    fine = send(
        server,
        "POST",
        "/mcp",
        MCP_PING,
        Content_Type="application/json",
        Origin=server.origin,
        **MCP_ACCEPT,
    )
    assert fine.status == 200, fine.body


def test_it_leaves_the_admins_same_origin_form_login_working(server: Server) -> None:
    page = send(server, "GET", "/admin/login/")
    assert page.status == 200
    cookie = re.search(r"csrftoken=([^;]+)", page.headers.get("Set-Cookie", ""))
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.body)
    assert cookie and token, page.headers
    form = (
        f"csrfmiddlewaretoken={token.group(1).decode()}&username=staff"
        f"&password={ADMIN_PASSWORD}&next=/admin/"
    ).encode()
    login = send(
        server,
        "POST",
        "/admin/login/",
        form,
        Content_Type="application/x-www-form-urlencoded",
        Origin=server.origin,
        Cookie=f"csrftoken={cookie.group(1)}",
    )
    assert login.status == 302 and login.headers["Location"] == "/admin/", login.body[:500]
    assert any(c.startswith("sessionid=") for c in login.headers.get_all("Set-Cookie") or [])
