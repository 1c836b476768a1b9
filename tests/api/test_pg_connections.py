"""PostgreSQL connections do not pile up under ASGI: a live `slowave up` closes each request's.

Under uvicorn each request runs in its own context and opens its own connection. With
persistent connections (conn_max_age > 0) Django left it open at the end of the request and
nothing closed it later: it lingered until the garbage collector reached it, and `slowave
bench load` ran PostgreSQL out of clients ("too many clients", 500s on GET /api/memories).
"""

from __future__ import annotations

import json
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from tests.admin.live import live_server
from tests.pg_support import admin_url, fresh_postgres_database

TOKEN = secrets.token_urlsafe(24)
PATHS = (
    "memories",
    "memories?q=deploy&limit=5",
    "memories/sch_1",
    "sessions",
    "procedures?status=active",
    "stats",
)
MOST_CONNECTIONS = 3  # the one `up` migrated with, and a request or two still finishing


@contextmanager
def _up(home: Path, database_url: str) -> Iterator[str]:
    """`slowave up` on `database_url` with an env token; yields its base URL.

    Not tests.api.live.slowave_up: that one makes its staff token with a CLI run that does
    not see DATABASE_URL, so the token would land in an unmigrated SQLite file in `home`.
    """
    with live_server(
        home,
        ready="/api/health",
        DATABASE_URL=database_url,
        SLOWAVE_API_TOKENS=TOKEN,
        SLOWAVE_ALLOW_ANONYMOUS_LOCAL="false",
    ) as base:
        yield base


@pytest.fixture(scope="module")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A live server on a fresh PostgreSQL database: (base URL, database name)."""
    with fresh_postgres_database() as url:
        with _up(tmp_path_factory.mktemp("pg-connections"), url) as base:
            yield base, urlsplit(url).path.lstrip("/")


def _get(base: str, path: str) -> int:
    request = urllib.request.Request(
        f"{base}/api/{path}", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            envelope = json.loads(response.read())
            assert envelope["ok"] is True, envelope
            return response.status
    except urllib.error.HTTPError as exc:  # GET memories/sch_1 is a 404 on an empty store
        assert exc.code == 404, exc.read()
        return exc.code


def _connections(database: str) -> list[tuple[str, str]]:
    with psycopg.connect(admin_url(), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT coalesce(state, ''), left(query, 60) FROM pg_stat_activity WHERE datname = %s",
            (database,),
        ).fetchall()
    return [(state, query) for state, query in rows]


def _settled(database: str, *, within: float = 1.0) -> list[tuple[str, str]]:
    """The database's connections once the last requests' own have had time to close.

    A closed connection is gone from pg_stat_activity within milliseconds of its response;
    a leaked one stays until the server's garbage collector happens to reach it (seconds,
    or never), so waiting longer would only let a leak slip through.
    """
    deadline = time.monotonic() + within
    while len(found := _connections(database)) > MOST_CONNECTIONS and time.monotonic() < deadline:
        time.sleep(0.2)
    return found


def test_it_closes_each_requests_connection(pg_server: tuple[str, str]) -> None:
    base, database = pg_server
    paths = [PATHS[i % len(PATHS)] for i in range(60)]
    statuses = [_get(base, path) for path in paths[:20]]
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses += list(pool.map(lambda path: _get(base, path), paths[20:]))
    assert len(statuses) == 60 and statuses.count(404) == 10, statuses
    connections = _settled(database)
    assert len(connections) <= MOST_CONNECTIONS, f"{len(connections)} left open: {connections}"
