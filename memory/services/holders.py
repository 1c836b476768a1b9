"""Who is using the SQLite store, and whether a lease holder's process is still alive.

Processes that use the store (`slowave up`, `mcp_serve`, workers, the CLI commands) register
for their lifetime with `store_hold`; `slowave restore` takes the store for itself with
`store_exclusive` and is refused while anyone is registered. A registration is a lock on a file
in `<database>-holders/`, so a process killed with SIGKILL needs no clean-up: the kernel drops its
locks, and the next `store_exclusive` deletes the note it left. PostgreSQL stores are not
registered (restore does not handle them).

Pass leases name their holder `host:pid:token`; `holder_gone` says whether that process is
known to have exited, so its lease can be taken over at once instead of after it expires.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

from django.utils import timezone

from memory.engines import storage_engine
from memory.errors import StorageBusy

log = logging.getLogger(__name__)

STORE_LOCK = "store.lock"
# How to stop each kind of registered process, for the message that refuses a restore.
HOW_TO_STOP = {
    "slowave up": "press Ctrl-C where it runs, or `kill {pid}`",
    "mcp_serve": "quit the agent that started this MCP server, or `kill {pid}`",
    "slowave up worker": "stop the `slowave up` that started it (Ctrl-C where it runs); "
    "its supervisor restarts a server process killed alone",
    "celery worker": "stop the `slowave up` that started it, or the worker itself (Ctrl-C "
    "where it runs, or `kill {pid}`)",
}
_held: list[ExitStack] = []  # process-lifetime registrations (store_register)


def holders_directory(database: Path) -> Path:
    return Path(f"{database}-holders")


def _locked(fd: int, operation: int) -> bool:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _open(path: Path, flags: int) -> int:
    return os.open(path, flags | os.O_CLOEXEC, 0o600)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _waited(fd: int, operation: int, *, forever: bool) -> bool:
    """Wait a moment quietly (a holder tidying up holds the lock that long); then give up, or
    (forever) say why in one line and wait as long as the restore that holds it takes."""
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        time.sleep(0.02)
        if _locked(fd, operation):
            return True
    if not forever:
        return False
    log.warning("a restore of the store is in progress; waiting for it to finish")
    fcntl.flock(fd, operation)
    return True


def _store_lock(directory: Path, operation: int, *, wait: bool) -> int | None:
    """An fd holding `operation` on the directory's store.lock, or None (wait=False, taken).

    The last one out deletes the lock file (`_tidy`), so a lock won on a file that is no longer
    at its path is worthless: then try again on the new one.
    """
    while True:
        directory.mkdir(mode=0o700, exist_ok=True)
        try:
            fd = _open(directory / STORE_LOCK, os.O_RDWR | os.O_CREAT)
        except FileNotFoundError:
            continue  # the directory was tidied away between the two calls
        if not _locked(fd, operation) and not _waited(fd, operation, forever=wait):
            os.close(fd)
            return None
        if _same_file(fd, directory / STORE_LOCK):
            return fd
        os.close(fd)


def _tidy(directory: Path, fd: int) -> None:
    """Leave no files behind once nobody uses the store (`fd` must hold the lock exclusively,
    on the file at the path: then nobody else can be deleting it)."""
    if not _same_file(fd, directory / STORE_LOCK) or any(directory.glob("*.json")):
        return
    (directory / STORE_LOCK).unlink(missing_ok=True)
    with suppress(OSError):
        directory.rmdir()


def _release(directory: Path, fd: int) -> None:
    with suppress(OSError):
        if _locked(fd, fcntl.LOCK_EX):  # the last holder out, and no restore waiting
            _tidy(directory, fd)
    os.close(fd)


def _register(stack: ExitStack, role: str) -> None:
    database = storage_engine().database_file()
    if database is None:
        return
    directory = holders_directory(database)
    shared = _store_lock(directory, fcntl.LOCK_SH, wait=True)
    assert shared is not None
    stack.callback(_release, directory, shared)
    note = directory / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
    fd = _open(note, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    stack.callback(os.close, fd)
    stack.callback(lambda: note.unlink(missing_ok=True))  # runs before the two above
    fcntl.flock(fd, fcntl.LOCK_EX)
    info = {
        "pid": os.getpid(),
        "role": role,
        "command": " ".join(sys.argv)[:300],
        "since": timezone.now().isoformat(timespec="seconds"),
    }
    os.write(fd, json.dumps(info).encode())


@contextmanager
def store_hold(*, role: str) -> Iterator[None]:
    """Register this process as using the store while the block runs.

    Never stops the caller: a store directory it cannot write is the caller's problem to
    report, not this registry's (the process then runs unregistered).
    """
    with ExitStack() as stack:
        try:
            _register(stack, role)
        except OSError as exc:
            log.debug("not registered as a holder of the store: %s", exc)
        yield


def store_register(*, role: str) -> None:
    """`store_hold` for the rest of the process (a Celery worker, which has no block to wrap)."""
    stack = ExitStack()
    stack.enter_context(store_hold(role=role))
    _held.append(stack)


def store_holders(*, database: Path) -> list[dict[str, Any]]:
    """The live registrations; notes left by processes that died are deleted on the way."""
    found: list[dict[str, Any]] = []
    for note in sorted(holders_directory(database).glob("*.json")):
        try:
            fd = _open(note, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            if _locked(fd, fcntl.LOCK_EX):
                note.unlink(missing_ok=True)  # its process is gone, and its lock with it
                continue
            with suppress(ValueError):
                info = json.loads(os.read(fd, 4096) or b"{}")
                if isinstance(info, dict) and all(o.get("pid") != info.get("pid") for o in found):
                    found.append(info)  # a process may register twice (`slowave worker`)
        finally:
            os.close(fd)
    return found


def _refusal(database: Path, holders: list[dict[str, Any]]) -> str:
    if not holders:
        return (
            f"another Slowave process is opening {database} right now, so nothing was changed; "
            "retry once it has started, then stop it"
        )
    lines = []
    for info in holders:
        pid, role = info.get("pid", "?"), str(info.get("role", "a Slowave process"))
        hint = HOW_TO_STOP.get(role, "let it finish, or `kill {pid}`").format(pid=pid)
        lines.append(f"pid {pid} ({role}, since {info.get('since', '?')}): {hint}")
    return (
        f"{database} is in use, so nothing was changed; stop these processes and retry:\n  "
        + "\n  ".join(lines)
    )


@contextmanager
def store_exclusive(*, database: Path) -> Iterator[None]:
    """Hold the store alone while the block runs; StorageBusy (naming who) if anyone uses it.

    Processes that start meanwhile wait at registration until the block is done.
    """
    directory = holders_directory(database)
    try:
        fd = _store_lock(directory, fcntl.LOCK_EX, wait=False)
    except OSError as exc:
        raise StorageBusy(f"cannot lock {database} for the restore: {exc}") from None
    if fd is None:
        raise StorageBusy(_refusal(database, store_holders(database=database)))
    try:
        store_holders(database=database)  # sweeps the notes of processes that died
        yield
    finally:
        with suppress(OSError):
            _tidy(directory, fd)
        os.close(fd)


def local_host() -> str:
    """This machine as lease holders name it: the host name and, where readable, the PID
    namespace, so containers sharing a host name never judge each other's process ids."""
    name = socket.gethostname()[:60]
    try:
        namespace = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return name
    return f"{name}~{namespace.removeprefix('pid:[').removesuffix(']')}"


def holder_name() -> str:
    return f"{local_host()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _holder_process(holder: str) -> tuple[str, int] | None:
    parts = holder.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1])


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")  # a zombie has exited; its parent has not reaped it yet


def holder_gone(holder: str) -> bool:
    """True only when the holder is known dead: its process, on this machine, has exited.
    A holder on another machine, or one not named `host:pid:token`, is presumed alive."""
    process = _holder_process(holder)
    if process is None or process[1] <= 0:
        return False
    host, pid = process
    return host == local_host() and not pid_alive(pid)


def holder_describe(holder: str) -> str:
    process = _holder_process(holder)
    if process is None:
        return repr(holder)
    host, pid = process
    where = "this machine" if host == local_host() else f"host {host.split('~')[0]}"
    return f"process {pid} on {where}"
