"""The five MCP tools: the agent verbs of memory.verbs, by tool name.

No logic lives here: `server.py` validates, calls and wraps; the services do the work. The
table itself (input model, service, reply shape, description) is memory.verbs, which the
REST routes read too.
"""

from __future__ import annotations

from memory.verbs import VERBS, Verb

Tool = Verb
TOOLS: dict[str, Tool] = VERBS
