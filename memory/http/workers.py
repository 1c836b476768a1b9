"""The one pool of SLOWAVE_HTTP_WORKERS threads that runs the calls arriving over HTTP.

MCP tool calls at `/mcp` and the REST routes of memory.api (agent verbs, reads, staff
controls, and their token checks) run here; `/api/health` and the API docs, which read no
data, do not. A burst of requests therefore queues for a free thread instead of each getting
its own thread and its own database connection. Django alone would give every request to a
sync view a fresh thread (asgiref's per-request ThreadSensitiveContext), with no upper bound.

The ASGI lifespan owns the pool (`http_workers()`, entered by mcp_bridge.http): outside a
server (the test client, `runserver` without lifespan) `run_in_http_worker` falls back to
Django's own thread for the request, which is also the thread that holds a test's transaction.

Heavy calls (a body over HEAVY_CALL_CHARS: a long cue, a big remember batch) take at most
SLOWAVE_HTTP_WORKERS - 1 threads at once (`admitted`), so however many arrive, one thread stays
for short calls; with a single worker there is nothing to keep.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections

from memory.retrieval.facets import HEAVY_CUE_CHARS

T = TypeVar("T")
# A body this long may carry a heavy cue (memory.retrieval.facets).
HEAVY_CALL_CHARS = HEAVY_CUE_CHARS

_pool: ThreadPoolExecutor | None = None
_heavy_lanes: asyncio.Semaphore | None = None


@contextmanager
def http_workers() -> Iterator[ThreadPoolExecutor]:
    """Start the pool for the server's lifetime; calls made meanwhile run in its threads."""
    global _pool, _heavy_lanes
    workers = settings.SLOWAVE_HTTP_WORKERS
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="slowave-http")
    previous, _pool = _pool, pool
    previous_lanes, _heavy_lanes = _heavy_lanes, asyncio.Semaphore(max(1, workers - 1))
    try:
        yield pool
    finally:
        _pool, _heavy_lanes = previous, previous_lanes
        # Requests have ended by now; a call still running finishes and closes its
        # connection in its own thread, and nothing queued is worth starting.
        pool.shutdown(wait=False, cancel_futures=True)


@asynccontextmanager
async def admitted(*, size: int) -> AsyncIterator[None]:
    """Around handing a call of `size` characters to the pool: a heavy one first waits for a
    heavy lane (awaiting, so it holds no thread meanwhile). Outside a server, no wait."""
    lanes = _heavy_lanes
    if lanes is None or size <= HEAVY_CALL_CHARS:
        yield
        return
    async with lanes:
        yield


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
