"""What each server process of `slowave up --workers N` does for itself around its lifespan.

Lives here: registering the process as a holder of the store (so `slowave restore` refuses
while any of them serves) and warming its own embedding model. `slowave up` sets
SERVER_PROCESS_ENV before uvicorn starts the processes; a single-process `up` registers and
warms in the command itself, and so does nothing here. Does not live here: the supervisor
(uvicorn's) or the migrations and the embedded worker (memory.management.commands.up).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

SERVER_PROCESS_ENV = "SLOWAVE_UP_SERVER_PROCESS"
ROLE = "slowave up worker"


@contextmanager
def server_process() -> Iterator[None]:
    if os.environ.get(SERVER_PROCESS_ENV) != "1":
        yield
        return
    from memory.embeddings import warm_up_in_background
    from memory.services.holders import store_hold

    with store_hold(role=ROLE):
        warm_up_in_background()
        yield
