"""mcp_bridge.sdk_packages: the serving process imports the SDK's server half only.

Each check runs in a fresh interpreter: this one has imported the whole SDK already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import mcp

from mcp_bridge.sdk_packages import register_bare_packages
from tests.e2e_support import REPO_ROOT

# What mcp_bridge.server imports of the SDK, then which modules came with it.
_PROBE = """
import json, sys
from mcp_bridge.sdk_packages import register_bare_packages
done = register_bare_packages() if sys.argv[1] == "bare" else None
import mcp.types, mcp.server.lowlevel, mcp.server.stdio, mcp.server.context, mcp.shared.message
from mcp.server.lowlevel import Server
loaded = [m for m in ("mcp.client", "mcp.server.mcpserver") if m in sys.modules]
print(json.dumps({"done": done, "loaded": loaded, "server": Server.__module__}))
"""


def _probe(mode: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, object] = json.loads(out)
    return result


def test_the_server_modules_load_without_the_client_or_mcpserver() -> None:
    assert _probe("bare") == {
        "done": True,
        "loaded": [],
        "server": "mcp.server.lowlevel.server",
    }


def test_without_it_the_package_imports_bring_both() -> None:
    # What the registration saves: shows the check above is not vacuous.
    assert _probe("full")["loaded"] == ["mcp.client", "mcp.server.mcpserver"]


def test_it_leaves_an_imported_sdk_alone() -> None:
    assert register_bare_packages() is False
    assert sys.modules["mcp"] is mcp
    assert hasattr(mcp, "ClientSession")
