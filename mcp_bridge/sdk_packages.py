"""The SDK's two top packages (`mcp`, `mcp.server`) as bare packages, for a serving process.

Lives here: `register_bare_packages`, which `manage.py mcp_serve` calls before it imports
mcp_bridge.server. Does not live here: anything that uses the SDK (mcp_bridge.server).

Why: `mcp/__init__.py` re-exports the client side (ClientSession, the stdio client, the
session group...) and `mcp/server/__init__.py` the high-level MCPServer (its resources
pull httpx); importing any submodule runs both first. A stdio server needs neither:
mcp_bridge.server imports the low-level server, the stdio transport and the types by their
own modules. Registered as bare packages (their search path, none of their code), the
submodules load as usual and the re-exports are never built: about a seventh of the SDK's
import, on the path to the first answered tool call.

Only for the serving process: elsewhere (tests, the bench's client) `from mcp import ...`
needs the real package, so nothing here runs on import. Does nothing when the SDK is already
imported or not installed. Imports nothing of the SDK itself.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types

# Parents first: a child's spec is found on its parent's search path.
BARE_PACKAGES = ("mcp", "mcp.server")


def register_bare_packages() -> bool:
    """Put `BARE_PACKAGES` in sys.modules without running their `__init__`; True if done."""
    if any(name in sys.modules for name in BARE_PACKAGES):
        return False
    registered: list[str] = []
    for name in BARE_PACKAGES:
        spec = importlib.util.find_spec(name)  # the parent is in sys.modules: no import
        if spec is None or spec.submodule_search_locations is None:
            for done in reversed(registered):
                del sys.modules[done]
            return False
        sys.modules[name] = _bare(name, spec)
        registered.append(name)
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, sys.modules[name])
    return True


def _bare(name: str, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
    module = importlib.util.module_from_spec(spec)  # attributes set, code not executed
    module.__doc__ = f"{name}, registered without its re-exports (mcp_bridge.sdk_packages)"
    return module
