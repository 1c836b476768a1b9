"""The one pool of SLOWAVE_HTTP_WORKERS threads that runs the calls arriving over HTTP.

MCP tool calls at `/mcp` and the REST routes of memory.api (agent verbs, reads, staff
controls, and their token checks) run here; `/api/health` and the API docs, which read no
data, do not. A burst of requests therefore queues for a free thread instead of each getting
its own thread and its own database connection. Django alone would give every request to a
sync view a fresh thread (asgiref's per-request ThreadSensitiveContext), with no upper bound.

The ASGI lifespan owns the pool (`http_workers()`, entered by mcp_bridge.http): outside a
server (the test client, `runserver` without lifespan) `run_in_http_worker` falls back to
Django's own thread for the request, which is also the thread that holds a test's transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections

T = TypeVar("T")

_pool: ThreadPoolExecutor | None = None


@contextmanager
def http_workers() -> Iterator[ThreadPoolExecutor]:
    """Start the pool for the server's lifetime; calls made meanwhile run in its threads."""
    global _pool
    pool = ThreadPoolExecutor(
        max_workers=settings.SLOWAVE_HTTP_WORKERS, thread_name_prefix="slowave-http"
    )
    previous, _pool = _pool, pool
    try:
        yield pool
    finally:
        _pool = previous
        # Requests have ended by now; a call still running finishes and closes its
        # connection in its own thread, and nothing queued is worth starting.
        pool.shutdown(wait=False, cancel_futures=True)


def _in_request_cycle(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    # The connection hygiene Django's request signals would do around a view, in this thread.
    close_old_connections()
    try:
        return func(*args, **kwargs)
    finally:
        close_old_connections()


async def run_in_http_worker(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`func(*args, **kwargs)` in a pool thread once one is free (awaiting meanwhile)."""
    pool = _pool
    if pool is None:
        return await sync_to_async(func, thread_sensitive=True)(*args, **kwargs)
    call = sync_to_async(_in_request_cycle, thread_sensitive=False, executor=pool)
    return await call(func, *args, **kwargs)
