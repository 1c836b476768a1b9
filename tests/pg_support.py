"""A throwaway PostgreSQL database per use, on the server the machine runs (127.0.0.1:5432).

`SLOWAVE_TEST_POSTGRES_URL` names the maintenance database to connect to (default: the
`postgres` database as user `postgres`, trust auth); each use creates `slowave_test_<hex>`
and drops it afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg

ADMIN_URL = os.environ.get(
    "SLOWAVE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def _admin(sql: str) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(sql)


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """Yield the DATABASE_URL of a new, empty database; drop it on exit."""
    name = f"slowave_test_{uuid.uuid4().hex[:12]}"
    _admin(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(ADMIN_URL)._replace(path=f"/{name}"))
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
