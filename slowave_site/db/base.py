"""Django's SQLite backend, rebound to pysqlite3 so extensions can be loaded.

Python builds such as pyenv's ship a ``sqlite3`` module without
``enable_load_extension``. Django's backend binds ``sqlite3.dbapi2`` at import
time, so we import it while ``sqlite3`` resolves to pysqlite3 and restore the
standard module afterwards: the rest of the process keeps the stdlib module.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from typing import TYPE_CHECKING

import pysqlite3
import pysqlite3.dbapi2
import sqlite_vec
from django.db.utils import OperationalError

_BACKEND_MODULES = [
    "django.db.backends.sqlite3._functions",
    "django.db.backends.sqlite3.client",
    "django.db.backends.sqlite3.creation",
    "django.db.backends.sqlite3.features",
    "django.db.backends.sqlite3.introspection",
    "django.db.backends.sqlite3.operations",
    "django.db.backends.sqlite3.schema",
    "django.db.backends.sqlite3.base",
]


def _import_rebound_backend():
    saved = {name: sys.modules.get(name) for name in ("sqlite3", "sqlite3.dbapi2")}
    for name in _BACKEND_MODULES:
        sys.modules.pop(name, None)
    sys.modules["sqlite3"] = pysqlite3
    sys.modules["sqlite3.dbapi2"] = pysqlite3.dbapi2
    try:
        return importlib.import_module("django.db.backends.sqlite3.base")
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


_sqlite_base = _import_rebound_backend()
Database = pysqlite3.dbapi2

if TYPE_CHECKING:
    # The rebound module is loaded dynamically; type-check against Django's own backend.
    from django.db.backends.sqlite3.base import DatabaseWrapper as _SQLiteDatabaseWrapper
else:
    _SQLiteDatabaseWrapper = _sqlite_base.DatabaseWrapper


# What a write transaction raises once the path no longer names the file this connection opened
# (memory.errors maps it to storage_missing).
FILE_GONE = "the database file was deleted or replaced under this process"


def file_identity(path: str) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file at `path`, None when nothing is there."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


# path -> the file this process last opened there: a later connection must not create a fresh,
# empty store where that file was deleted, and /api/health compares against it.
OPENED: dict[str, tuple[int, int]] = {}


def forget_file(path: str) -> None:
    """The caller removes the file at `path` on purpose: a later connection may create it anew."""
    OPENED.pop(path, None)


def file_in_place(path: str) -> bool:
    """False once the file this process opened at `path` is gone or replaced."""
    opened = OPENED.get(path)
    return opened is None or file_identity(path) == opened


# One write transaction at a time per process and file. SQLite admits one writer anyway, but a
# thread whose BEGIN IMMEDIATE finds the file locked sleeps in SQLite's busy handler (1, 2, 5,
# ... up to 100 ms a nap) however soon the writer ahead of it commits: with 16 agents on 4
# threads most of a write's latency was those naps. Threads of one process queue here instead
# and start the moment the turn is free; other processes (the worker, `up --workers N`) still
# meet at SQLite's lock under the busy timeout.
_WRITERS: dict[str, threading.Lock] = {}
_WRITERS_LOCK = threading.Lock()


def writer_turn(path: str) -> threading.Lock:
    with _WRITERS_LOCK:
        return _WRITERS.setdefault(path, threading.Lock())


class DatabaseWrapper(_SQLiteDatabaseWrapper):
    Database = Database
    # The file this connection opened; None for an in-memory database.
    opened_identity: tuple[int, int] | None = None
    # The process's writer turn this connection holds for its open transaction.
    _turn: threading.Lock | None = None

    def file_in_place(self) -> bool:
        """False once the file this process opened at the path is gone or replaced."""
        path = self._file_path()
        return path is None or file_in_place(path)

    def _file_path(self) -> str | None:
        name = str(self.settings_dict["NAME"])
        return None if self.is_in_memory_db() or name.startswith("file:") else name

    def get_new_connection(self, conn_params):
        path = self._file_path()
        if path and path in OPENED and file_identity(path) is None:
            raise OperationalError(FILE_GONE)
        conn = super().get_new_connection(conn_params)
        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
        path = self._file_path()
        self.opened_identity = file_identity(path) if path else None
        if path and self.opened_identity:
            OPENED[path] = self.opened_identity
        return conn

    def _start_transaction_under_autocommit(self):
        # A write into an unlinked file would be acknowledged and lost on restart: refuse it
        # before BEGIN when the path names another file (or none) than the one opened.
        path = self._file_path()
        if path and self.opened_identity and file_identity(path) != self.opened_identity:
            raise OperationalError(FILE_GONE)
        if path and self._turn is None:
            turn = writer_turn(path)
            # As long as SQLite would have waited for the lock; the same error when it is out.
            if not turn.acquire(timeout=float(self.settings_dict["OPTIONS"].get("timeout", 5))):
                raise OperationalError("database is locked")
            self._turn = turn
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._end_turn()
            raise

    def _end_turn(self) -> None:
        turn, self._turn = self._turn, None
        if turn is not None:
            turn.release()

    def _commit(self):
        try:
            return super()._commit()
        finally:
            # A failed COMMIT leaves the transaction open: its rollback ends the turn.
            if self.connection is None or not self.connection.in_transaction:
                self._end_turn()

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._end_turn()

    def _close(self):
        try:
            return super()._close()
        finally:
            self._end_turn()
