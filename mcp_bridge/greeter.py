"""The MCP handshake answered from the first instant, before Django and the SDK are imported.

Lives here: the process's stdin reader, started by `manage.py mcp_serve` (and `slowave
mcp-serve`) before anything heavy is imported; its answers to a client's opening `initialize`
and `tools/list` from a cache of what the SDK itself answered in an earlier run of the same
code; the cache (one JSON file in SLOWAVE_HOME, keyed by a digest of the sources that shape
those answers). Does not live here: the protocol (the SDK, mcp_bridge.server, reads every
line this reader read and answers them all; the answers the greeter already gave are dropped
there), diagnosing bad lines (mcp_bridge.frames).

Why: importing the SDK and setting up Django cost about a second of CPU that a client's
handshake used to wait for; now the handshake overlaps it. Only the exact opening
`initialize`, `notifications/initialized`, `tools/list` is answered, so the order of replies
is the SDK's; anything else stops the greeter and the SDK answers as before. With no cache
(first run, changed sources, another SDK) the greeter answers nothing.

Only the standard library is imported here: this module is on the path it makes fast.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import logging
import os
import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

CACHE_NAME = "mcp-handshake.json"
CACHE_FORMAT = 1
# An opening request is small; a longer line is never one the greeter answers.
MAX_GREETED_LINE = 64 * 1024
_PROJECT = Path(__file__).resolve().parent.parent
# What the tool list, descriptions, instructions and server version are made of.
_SOURCE_DIRS = ("mcp_bridge", "memory")

_INITIALIZE_KEYS = {"protocolVersion", "capabilities", "clientInfo", "_meta"}

_greeter: Greeter | None = None


def greet_early() -> None:
    """Claim stdin and start answering the handshake; call before importing Django."""
    global _greeter
    if _greeter is not None:
        return
    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:  # fd 0 closed: frames.claimed_stdin serves the empty input
        return
    # As the SDK does when it reads stdin itself: nothing else in the process, nor a child
    # it starts, can take protocol bytes.
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    home = Path(os.environ.get("SLOWAVE_HOME") or Path.home() / ".slowave").expanduser()
    _greeter = Greeter(private, cache_path=home / CACHE_NAME, key=source_key())
    _greeter.start()


def current() -> Greeter | None:
    """The greeter `greet_early` started in this process, if any."""
    return _greeter


def source_key() -> str:
    """A digest of what the cached answers depend on: our sources and the SDK install."""
    digest = hashlib.sha256(f"{CACHE_FORMAT}".encode())
    for folder in _SOURCE_DIRS:
        for path in sorted((_PROJECT / folder).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            _stamp(digest, str(path))
    pyproject = _PROJECT / "pyproject.toml"
    if pyproject.exists():
        _stamp(digest, str(pyproject))  # the server's version
    for package in ("mcp", "mcp_types"):
        spec = importlib.util.find_spec(package)  # finds without importing
        origin = spec.origin if spec is not None else None
        if origin is not None:
            _stamp(digest, origin)
    return digest.hexdigest()


def _stamp(digest: Any, path: str) -> None:
    # Size and modification time, not contents: reading every source cost 20 ms of the
    # window, and an edit that keeps both is caught anyway (observe refreshes the cache).
    stat = os.stat(path)
    digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns};".encode())


def id_key(request_id: object) -> str:
    # As the SDK correlates ids: "7" and 7 are one request.
    if isinstance(request_id, str):
        try:
            return json.dumps(int(request_id))
        except ValueError:
            pass
    return json.dumps(request_id)


class Greeter:
    """Reads stdin into a queue (the SDK's transport reads `readline`), answering the opening
    handshake itself until `hand_over`."""

    def __init__(self, fd: int, *, cache_path: Path, key: str) -> None:
        self._fd = fd
        self._binary = os.fdopen(fd, "rb", closefd=False)  # never closed: a read may block on it
        self._lines: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._cache_path, self._key = cache_path, key
        self._cache = _load_cache(cache_path, key)
        self._handed_over = False
        self._greeting = self._cache is not None  # still answering the opening exchange
        self._version: str | None = None  # the version the greeter's initialize negotiated
        self._initialized = False
        self._answered: dict[str, Any] = {}  # id -> the result the greeter sent
        self._watched: dict[str, str] = {}  # id -> method, for requests whose answer is cached
        self._captured: dict[str, dict[str, Any]] = {}
        self._capture_version: str | None = None
        self._versions: tuple[list[str], str] | None = None

    def start(self) -> None:
        threading.Thread(target=self._read, name="mcp-stdin", daemon=True).start()

    @contextmanager
    def claimed_stdin(self) -> Iterator[Greeter]:
        """This reader as the transport's stdin; fd 0 is given back afterwards."""
        try:
            yield self
        finally:
            os.dup2(self._fd, 0)

    def readline(self) -> bytes:
        line = self._lines.get()
        if not line:
            self._lines.put(line)  # end of input stays the end
        return line

    def hand_over(self, *, handshake_versions: Sequence[str], latest: str) -> None:
        """From now on the SDK answers everything; the versions it negotiates, for the cache."""
        with self._lock:
            self._handed_over = True
            self._versions = (list(handshake_versions), latest)

    def watching(self, request_id: object) -> bool:
        key = id_key(request_id)
        with self._lock:
            return key in self._answered or key in self._watched

    def observe(self, request_id: object, message: dict[str, Any]) -> bool:
        """The SDK's answer to a watched request; True: the greeter already sent it, drop it."""
        key = id_key(request_id)
        with self._lock:
            sent = self._answered.pop(key, None)
            method = self._watched.pop(key, None)
        result = message.get("result")
        if sent is not None and result != sent:
            logger.warning("the cached MCP handshake differed from the SDK's answer; refreshed")
        if method is not None and isinstance(result, dict):
            self._capture(method, result)
        return sent is not None

    # --- the reader thread ---------------------------------------------------------------

    def _read(self) -> None:
        while True:
            try:
                raw = self._binary.readline()
            except OSError:
                raw = b""
            # Answered (and noted) before the SDK can see the line, so its answer is dropped.
            try:
                self._note(raw)
            except Exception:  # the reader must outlive any line; the SDK judges it anyway
                logger.debug("greeter: a line it could not read", exc_info=True)
                with self._lock:
                    self._greeting = False
            self._lines.put(raw)
            if not raw:
                return

    def _note(self, raw: bytes) -> None:
        message = _request(raw)
        with self._lock:
            if message is not None and "id" in message:
                if message["method"] in ("initialize", "tools/list"):
                    self._watched[id_key(message["id"])] = message["method"]
            if not self._greeting or self._handed_over:
                return
            reply = self._reply(message)
            if reply is None:
                self._greeting = False  # anything unexpected: the SDK answers from here on
                return
            request_id, result = reply
            if result is None:
                return  # notifications/initialized: nothing is owed
            line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})
            try:
                _write_all(1, (line + "\n").encode())
            except OSError:
                self._greeting = False
                return
            self._answered[id_key(request_id)] = result

    def _reply(self, message: dict[str, Any] | None) -> tuple[object, dict[str, Any] | None] | None:
        """(id, result) for the next message of the opening exchange; None: not one."""
        if message is None or self._cache is None:
            return None
        method, params = message["method"], message.get("params")
        if method == "initialize" and self._version is None and "id" in message:
            version = _requested_version(params)
            versions = self._cache["versions"]
            if version is None:
                return None
            negotiated = version if version in self._cache["handshake"] else self._cache["latest"]
            entry = versions.get(negotiated)
            if entry is None:
                return None
            self._version = negotiated
            return message["id"], entry["initialize"]
        if method == "notifications/initialized" and self._version is not None:
            if "id" in message or self._initialized:
                return None
            self._initialized = True
            return None, None
        if method == "tools/list" and self._initialized and "id" in message:
            if params is not None and (not isinstance(params, dict) or set(params) - {"_meta"}):
                return None  # a cursor, or params the SDK may refuse: its call
            entry = self._cache["versions"][self._version]
            return message["id"], entry["tools/list"]
        return None

    # --- the cache -----------------------------------------------------------------------

    def _capture(self, method: str, result: dict[str, Any]) -> None:
        if method == "initialize":
            version = result.get("protocolVersion")
            self._capture_version = version if isinstance(version, str) else None
            self._captured = {"initialize": result}
            return
        version = self._capture_version
        if method != "tools/list" or version is None or "initialize" not in self._captured:
            return
        if result.get("nextCursor") is not None:
            return  # a partial list cannot be replayed as the whole
        self._captured["tools/list"] = result
        with self._lock:
            versions = self._versions
        if versions is None:
            return
        cache = self._cache if self._cache is not None else {}
        entries = dict(cache.get("versions", {})) if cache.get("handshake") == versions[0] else {}
        if entries.get(version) == self._captured:
            return
        entries[version] = self._captured
        document = {
            "format": CACHE_FORMAT,
            "key": self._key,
            "handshake": versions[0],
            "latest": versions[1],
            "versions": entries,
        }
        _save_cache(self._cache_path, document)
        self._cache = document


def _request(raw: bytes) -> dict[str, Any] | None:
    """`raw` as a JSON-RPC request or notification object, or None."""
    if len(raw) > MAX_GREETED_LINE:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nesting too deep
        return None
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return None
    if not isinstance(value.get("method"), str):
        return None
    if "id" in value:
        request_id = value["id"]
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return None
    return value


def _requested_version(params: object) -> str | None:
    """The protocol version an `initialize` asks for, if its params are plainly well formed."""
    if not isinstance(params, dict) or set(params) - _INITIALIZE_KEYS:
        return None
    capabilities, client = params.get("capabilities"), params.get("clientInfo")
    if not isinstance(capabilities, dict) or not all(
        isinstance(v, dict) for v in capabilities.values()
    ):
        return None
    if not isinstance(client, dict) or not all(
        isinstance(client.get(k), str) for k in ("name", "version")
    ):
        return None
    version = params.get("protocolVersion")
    return version if isinstance(version, str) else None


def _load_cache(path: Path, key: str) -> dict[str, Any] | None:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("key") != key:
        return None
    if document.get("format") != CACHE_FORMAT or not isinstance(document.get("versions"), dict):
        return None
    return document


def _save_cache(path: Path, document: dict[str, Any]) -> None:
    import tempfile  # here, not on the startup path: only a first start or a refresh saves

    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".mcp-handshake-")
        with os.fdopen(fd, "w") as out:
            json.dump(document, out)
        os.replace(temporary, path)
    except OSError as exc:  # a read-only home: the next start is as slow as this one
        logger.info("could not cache the MCP handshake in %s: %s", path, exc)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        written = os.write(fd, data)
        data = data[written:]
