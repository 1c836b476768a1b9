"""What each server process of `slowave up --workers N` does for itself around its lifespan.

Lives here: registering the process as a holder of the store (so `slowave restore` refuses
while any of them serves) and warming its own embedding model. `slowave up` sets
SERVER_PROCESS_ENV before uvicorn starts the processes; a single-process `up` registers and
warms in the command itself, and so does nothing here. Also `serve`, which starts them
(uvicorn's supervisor, on a socket of our own). Does not live here: the migrations and the
embedded worker (slowave_site/management/commands/up.py).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

SERVER_PROCESS_ENV = "SLOWAVE_UP_SERVER_PROCESS"
ROLE = "slowave up worker"


@contextmanager
def server_process() -> Iterator[None]:
    if os.environ.get(SERVER_PROCESS_ENV) != "1":
        yield
        return
    # Here, not at the top: `serve` is also imported where Django is not set up (the bench's
    # floor server), and holders imports models.
    from memory.services.holders import store_hold
    from memory.services.warming import serving_warm_up_in_background

    with store_hold(role=ROLE):
        serving_warm_up_in_background()
        yield


def _listening_socket(host: str, port: int) -> socket.socket:
    # uvicorn's own Config.bind_socket() leaves proto at 0, and asyncio sets TCP_NODELAY only
    # on sockets whose proto is IPPROTO_TCP: every reply on a kept-alive connection then waited
    # ~45 ms for a delayed ACK (Nagle). Named explicitly here, every accepted socket is no-delay.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def serve(app: str, *, host: str, port: int, workers: int, log_level: str = "warning") -> None:
    """`app` (an import string) under uvicorn: in this process, or in `workers` processes that
    uvicorn's supervisor starts, restarts if one dies, and stops on SIGINT/SIGTERM."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    if workers == 1:
        uvicorn.run(app, host=host, port=port, log_level=log_level)
        return
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, workers=workers)
    Multiprocess(config, sockets=[_listening_socket(host, port)]).run()
