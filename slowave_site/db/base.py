"""Django's SQLite backend, rebound to pysqlite3 so extensions can be loaded.

Python builds such as pyenv's ship a ``sqlite3`` module without
``enable_load_extension``. Django's backend binds ``sqlite3.dbapi2`` at import
time, so we import it while ``sqlite3`` resolves to pysqlite3 and restore the
standard module afterwards: the rest of the process keeps the stdlib module.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

import pysqlite3
import pysqlite3.dbapi2
import sqlite_vec

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


class DatabaseWrapper(_SQLiteDatabaseWrapper):
    Database = Database

    def get_new_connection(self, conn_params):
        conn = super().get_new_connection(conn_params)
        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
        return conn
