"""The MCP adapter: the only module that imports the `mcp` SDK (spec §6.1).

Lives here: the low-level SDK server (tools/list and tools/call handlers), the envelope
wrapping, the stdio serve loop with its background tasks (idle reaper, embedder warm-up) and
the JSON-RPC error written for a stdin line the SDK cannot parse.
Does not live here: validation rules (memory.schemas), behaviour (memory.services), the tool
table (memory.verbs, read through mcp_bridge.tools), reading stdin and diagnosing a bad line
(mcp_bridge.frames).

The low-level API is used rather than MCPServer because MCPServer derives inputSchema from
function signatures and validates arguments itself; we advertise the pydantic models' own
schemas and validate raw arguments so that bad input always comes back as our envelope.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import anyio
import mcp.types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from mcp_bridge import greeter as greeting
from mcp_bridge.frames import Outstanding, Rejection, StdinFrames, claimed_stdin
from mcp_bridge.tools import TOOLS
from memory import instruments
from memory.embeddings import warm_up_in_background
from memory.errors import STORAGE_FAULTS, InvalidInput, SlowaveError, as_slowave_error
from memory.http.workers import admitted
from memory.replies.envelope import Envelope, Failed
from memory.schemas import parse_input

logger = logging.getLogger(__name__)

# If no client lists tools soon after start, warm the embedder anyway.
WARM_UP_FALLBACK_SECONDS = 2.0
# stdio clients allow about 2 s after closing stdin before they send SIGTERM.
SHUTDOWN_GRACE_SECONDS = 1.5

_ABSENT = object()
# Raw `arguments` the SDK would reject before our handler (a list, a string...): the
# middleware parks them here so the handler can answer with an invalid_input envelope.
_raw_arguments: contextvars.ContextVar[object] = contextvars.ContextVar(
    "slowave_raw_arguments", default=_ABSENT
)


def _server_version() -> str:
    try:
        return metadata.version("slowave")
    except metadata.PackageNotFoundError:
        return "0.1.0"


# --- envelope: validate, call the service, wrap (runs in a database thread) ------------------


def execute_tool(name: str, raw: object, client: tuple[str, str]) -> Envelope:
    """Run one tool call to its envelope. Never raises an Exception."""
    close_old_connections()  # the request lifecycle Django would run around a view
    try:
        tool = TOOLS.get(name)
        if tool is None:
            raise InvalidInput(f"unknown tool: {name}; the tools are {', '.join(TOOLS)}")
        data = parse_input(tool.model, {} if raw is None else raw)
        kwargs: dict[str, Any] = {"data": data, "now": timezone.now()}
        if tool.takes_client:
            # Services load on the first call, as tools.py's do: tools/list never pays for them.
            from memory.services.sessions import ClientInfo

            kwargs["client"] = ClientInfo(
                name=client[0], version=client[1], identity=settings.SLOWAVE_CLIENT_IDENTITY
            )
        envelope: Envelope = {"ok": True, "data": tool.service(**kwargs)}
        json.dumps(envelope)  # a reply that cannot be serialised is our bug: report it now
        return envelope
    except Exception as exc:
        return error_envelope(exc, name)
    finally:
        close_old_connections()


def error_envelope(exc: BaseException, tool_name: str) -> Failed:
    error = as_slowave_error(exc)
    if error.code == "internal_error":
        # The client gets a generic message; the operator gets the traceback on stderr.
        logger.error("tool %s failed", tool_name, exc_info=exc)
    elif isinstance(error, STORAGE_FAULTS):
        logger.error("tool %s: %s (%s)", tool_name, error.code, exc.__cause__ or exc)
    elif not isinstance(exc, SlowaveError):
        logger.warning("tool %s: %s (%s)", tool_name, error.code, exc)
    return {"ok": False, "error": error.as_error()}


def _result(envelope: Envelope) -> types.CallToolResult:
    text = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=envelope,
        is_error=not envelope["ok"],
    )


# --- SDK handlers ----------------------------------------------------------------------------


async def run_in_database_thread(
    executor: ThreadPoolExecutor | None, func: Callable[..., Any], *args: Any
) -> Any:
    """`func(*args)` off the event loop: in one shared thread, or in `executor`'s pool.

    The shared thread (stdio) runs calls one at a time in arrival order, and SQLite sees a
    single writer from this process. A pool (HTTP) lets calls from different agents overlap;
    each of its threads has its own Django connection (kept between calls on SQLite, closed
    after every call on PostgreSQL), and SQLite writers queue on the busy timeout.
    """
    if executor is None:
        return await sync_to_async(func, thread_sensitive=True)(*args)
    return await sync_to_async(func, thread_sensitive=False, executor=executor)(*args)


@dataclass
class BridgeState:
    """What the lifespan shares with handlers through `ctx.lifespan_context`."""

    ready: anyio.Event = field(default_factory=anyio.Event)  # migrations applied
    tools_used: anyio.Event = field(default_factory=anyio.Event)  # first tools/list or call
    executor: ThreadPoolExecutor | None = None  # tool calls' threads; None: the shared one


def _client_of(ctx: ServerRequestContext[Any, Any]) -> tuple[str, str]:
    params = ctx.session.client_params
    if params is None:
        return "", ""
    return params.client_info.name or "", params.client_info.version or ""


async def _list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_tool_list())


@functools.cache
def _tool_list() -> list[types.Tool]:
    return [
        types.Tool(name=t.name, description=t.description, input_schema=t.input_schema())
        for t in TOOLS.values()
    ]


async def _call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    raw = _raw_arguments.get()
    if raw is _ABSENT:
        raw = params.arguments
    state: BridgeState = ctx.lifespan_context
    await state.ready.wait()
    started = time.perf_counter()
    try:
        # Over HTTP a long call waits for a heavy lane, so a thread stays for short ones.
        async with admitted(size=len(json.dumps(raw, ensure_ascii=False))):
            envelope = await run_in_database_thread(
                state.executor, execute_tool, params.name, raw, _client_of(ctx)
            )
    except Exception as exc:  # the thread hop itself failed; still answer with an envelope
        envelope = error_envelope(exc, params.name)
    instruments.call_finished(
        surface="mcp",
        tool=params.name if params.name in TOOLS else "unknown",  # labels stay a bounded set
        code="ok" if envelope["ok"] else envelope["error"]["code"],
        seconds=time.perf_counter() - started,
    )
    return _result(envelope)


class _BridgeMiddleware:
    """Keeps malformed `arguments` away from SDK validation; notices the first tool use."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, Mapping):
            raw = params.get("arguments")
            if raw is not None and not isinstance(raw, dict):
                stripped = {k: v for k, v in params.items() if k != "arguments"}
                token = _raw_arguments.set(raw)
                try:
                    return await call_next(dataclasses.replace(ctx, params=stripped))
                finally:
                    _raw_arguments.reset(token)
        result = await call_next(ctx)
        if ctx.method in ("tools/list", "tools/call"):
            state: BridgeState = ctx.lifespan_context
            state.tools_used.set()
        return result


def build_server(
    *,
    prepare: Callable[[], None] | None = None,
    background_worker: bool = True,
    executor: ThreadPoolExecutor | None = None,
) -> Server[Any]:
    """The SDK server; `prepare` (e.g. migrate) runs in the database thread before any call.

    Tool calls run in `executor`'s threads when one is given (HTTP), else all in one shared
    thread (stdio: calls answered in the order they came, as a single client expects).
    """
    server: Server[Any] = Server(
        "slowave",
        version=_server_version(),
        instructions=(
            "Slowave is long-term memory for this agent. Per task: slowave_activate first, "
            "slowave_remember durable claims, slowave_recall when the question shifts, "
            "slowave_feedback on every item shown, slowave_commit with an honest outcome."
        ),
        lifespan=functools.partial(
            _lifespan, prepare=prepare, background_worker=background_worker, executor=executor
        ),
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
    )
    server.middleware.append(_BridgeMiddleware())
    return server


# --- background work around the serve loop ---------------------------------------------------


@asynccontextmanager
async def _lifespan(
    server: Server[Any],
    *,
    prepare: Callable[[], None] | None,
    background_worker: bool,
    executor: ThreadPoolExecutor | None,
) -> AsyncIterator[BridgeState]:
    state = BridgeState(executor=executor)
    async with anyio.create_task_group() as tg:
        # Preparation runs beside the handshake, not before it: initialize and tools/list
        # never touch the database, and only tool calls wait for `ready`.
        tg.start_soon(_prepare, prepare, state.ready)
        tg.start_soon(_warm_up_when_ready, state.tools_used)
        if background_worker and settings.SLOWAVE_SESSION_IDLE_TIMEOUT > 0:
            tg.start_soon(_reaper, state.ready, max(settings.SLOWAVE_REAPER_POLL_SECONDS, 0.01))
        try:
            yield state
        finally:
            tg.cancel_scope.cancel()


class ServerCannotStart(Exception):
    """Preparing the database failed; the server ends rather than answer every call with it."""


async def _prepare(prepare: Callable[[], None] | None, ready: anyio.Event) -> None:
    if prepare is not None:
        # A failure propagates and ends the server: serving on a half-migrated database
        # would turn every call into an internal error.
        try:
            await sync_to_async(prepare, thread_sensitive=True)()
        except Exception as exc:
            fault = as_slowave_error(exc)
            # A store fault is named (storage_read_only, ...), with what to do about it.
            named = isinstance(fault, STORAGE_FAULTS)
            reason = f"{fault.code} ({exc}): {fault.message}" if named else exc
            raise ServerCannotStart(f"preparing the database failed: {reason}") from exc
    ready.set()


def _reap_once() -> list[str]:
    # Loaded when the reaper first runs, not at startup (see execute_tool).
    from memory.services.reaping import session_reap_idle

    close_old_connections()
    try:
        return session_reap_idle(now=timezone.now())
    finally:
        close_old_connections()


async def _reaper(ready: anyio.Event, poll_seconds: float) -> None:
    await ready.wait()
    while True:
        await anyio.sleep(poll_seconds)
        try:
            reaped = await sync_to_async(_reap_once, thread_sensitive=True)()
        except Exception:
            logger.exception("idle-session reaper failed; retrying in %ss", poll_seconds)
            continue
        if reaped:
            logger.info("reaped idle sessions: %s", ", ".join(reaped))


async def _warm_up_when_ready(tools_used: anyio.Event) -> None:
    # The model import hogs the GIL for seconds: wait until the client has had its
    # tools/list answered (or a short grace period passed) so the handshake stays fast.
    with anyio.move_on_after(WARM_UP_FALLBACK_SECONDS):
        await tools_used.wait()
    warm_up_in_background()


# --- stdio transport: the SDK's, fed by our own stdin reader (mcp_bridge.frames) -------------


def _is_message(line: str) -> bool:
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:  # pydantic's ValidationError included
        return False
    return True


async def _answer_rejected(
    rejected: ObjectReceiveStream[Rejection], write_stream: ObjectSendStream[SessionMessage]
) -> None:
    # Through the SDK's writer, so an error line never interleaves with another reply.
    async with rejected:
        async for rejection in rejected:
            error = types.ErrorData(code=rejection.code, message=rejection.message)
            reply = types.JSONRPCError(jsonrpc="2.0", id=rejection.id, error=error)
            await write_stream.send(SessionMessage(reply))


class _AnswerNoting:
    """The write stream handed to the SDK server, telling `outstanding` of each answer sent;
    an answer the greeter already gave (mcp_bridge.greeter) is dropped, not sent twice."""

    def __init__(
        self, inner: Any, outstanding: Outstanding, greeter: greeting.Greeter | None = None
    ) -> None:
        self._inner, self._outstanding, self._greeter = inner, outstanding, greeter

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            await self._inner.send(item)
            return
        greeter = self._greeter
        if greeter is None or message.id is None or not greeter.watching(message.id):
            await self._inner.send(item)
        else:
            # As the transport writes it, so the cache holds the bytes' meaning exactly.
            wire = json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))
            if not greeter.observe(message.id, wire):
                await self._inner.send(item)
        if message.id is not None:
            self._outstanding.answered(message.id)

    async def __aenter__(self) -> _AnswerNoting:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def serve_stdio(
    *, prepare: Callable[[], None] | None = None, background_worker: bool = True
) -> None:
    """Serve MCP over stdin/stdout until the client closes stdin and every call read is answered.

    Raises ServerCannotStart when `prepare` fails: the caller says so and exits non-zero.
    """
    server = build_server(prepare=prepare, background_worker=background_worker)
    send_rejected, receive_rejected = anyio.create_memory_object_stream[Rejection](16)
    outstanding = Outstanding()
    greeter = greeting.current()
    if greeter is not None:
        greeter.hand_over(
            handshake_versions=HANDSHAKE_PROTOCOL_VERSIONS, latest=LATEST_HANDSHAKE_VERSION
        )
    with claimed_stdin() if greeter is None else greeter.claimed_stdin() as binary_stdin:
        frames = StdinFrames(
            binary_stdin,
            accepts=_is_message,
            rejected=send_rejected,
            outstanding=outstanding,
        )
        # The SDK iterates `stdin` and nothing more, so any async iterable of lines will do.
        async with stdio_server(stdin=frames) as (read_stream, write_stream):  # type: ignore[arg-type]
            async with anyio.create_task_group() as tg:
                tg.start_soon(_answer_rejected, receive_rejected, write_stream)
                answers = _AnswerNoting(write_stream, outstanding, greeter)
                await server.run(read_stream, answers, server.create_initialization_options())
                tg.cancel_scope.cancel()
    # Let a call still running in the database thread finish, then close its connection.
    with anyio.move_on_after(SHUTDOWN_GRACE_SECONDS):
        await sync_to_async(close_old_connections, thread_sensitive=True)()
