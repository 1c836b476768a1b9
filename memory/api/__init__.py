"""REST routes under `/api/` (spec §12): the five agent verbs, read-only inspection, staff controls.

Adapters only: each route authenticates (ninja `auth`), validates the raw body with the same
pydantic models as the MCP tools, calls a service or selector and returns the MCP envelope.
Routes are async only to do that work, token check included, in the HTTP worker pool
(memory.http.workers). Errors are raised and mapped to HTTP statuses in
slowave_site/api.py, which mounts `router`.

Here: `router`, assembled from verbs.py, reads.py and staff.py in that order (the order of
the paths in the OpenAPI document). Request bodies live in bodies.py, reply envelopes in
replies.py (the `data` they document in schemas/), the ninja auth classes in auth.py, the
read routes' queries and data in read_data.py. Each route spells out its operation id
(`memory_api_<view>`, what ids were when the routes shared one module): client generators
name methods after them, so they must not follow the module layout.
"""

from __future__ import annotations

from ninja import Router

from memory.api import reads, staff, verbs
from memory.api.auth import CallerAuth
from memory.api.bodies import BODY_MODELS, REF_TEMPLATE
from memory.api.replies import REPLY_MODELS

__all__ = ["BODY_MODELS", "REF_TEMPLATE", "REPLY_MODELS", "router"]

router = Router(auth=CallerAuth(), tags=["slowave"])
for part in (verbs, reads, staff):
    router.add_router("", part.router)
