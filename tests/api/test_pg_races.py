"""Parallel calls on PostgreSQL: a live `slowave up`, real threads, no 5xx and nothing lost.

Coding agents issue tool calls in parallel. On PostgreSQL a session's writers once computed
the next event `seq` as max+1 without a claim (`event_unique_seq` 500s), and two sessions
remembering the same text both read "no active memory" and both inserted
(`memory_unique_active_hash` 500s). SQLite's BEGIN IMMEDIATE hid both.
"""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.admin.live import live_server
from tests.pg_support import fresh_postgres_database

TOKEN = secrets.token_urlsafe(24)
PARALLEL = 8


@pytest.fixture(scope="module")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A live server on a fresh PostgreSQL database: (base URL, database URL)."""
    with fresh_postgres_database() as url:
        with live_server(
            tmp_path_factory.mktemp("pg-races"),
            ready="/api/health",
            DATABASE_URL=url,
            SLOWAVE_API_TOKENS=TOKEN,
            SLOWAVE_ALLOW_ANONYMOUS_LOCAL="false",
        ) as base:
            yield base, url


def _post(base: str, verb: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{base}/api/{verb}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _activate(base: str, scope: str) -> str:
    status, envelope = _post(
        base, "activate", {"task": "ship the release", "initial_goal": "shipped", "scope": scope}
    )
    assert status == 200, envelope
    return envelope["data"]["session_id"]


def _parallel(calls: list[tuple[str, dict[str, Any]]], base: str) -> list[tuple[int, dict]]:
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        return list(pool.map(lambda call: _post(base, *call), calls))


def _failures(replies: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    return [(status, envelope) for status, envelope in replies if status != 200]


def _rows(database_url: str, sql: str, *args: Any) -> list[tuple]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        return conn.execute(sql, args).fetchall()


def test_parallel_remembers_in_one_session_all_land(pg_server: tuple[str, str]) -> None:
    base, database_url = pg_server
    scope = "project:pg-one-session"
    session_id = _activate(base, scope)
    calls = [
        (
            "remember",
            {
                "scope": scope,
                "session_id": session_id,
                "content": f"The deploy host number {i} runs Debian {i + 10}.",
                "type": "fact",
            },
        )
        for i in range(4 * PARALLEL)
    ]
    # recalls in the same session race the remembers for the next event seq too
    calls += [
        ("recall", {"scope": scope, "session_id": session_id, "query": f"deploy host {i}"})
        for i in range(PARALLEL)
    ]
    replies = _parallel(calls, base)
    assert _failures(replies) == []
    seqs = _rows(
        database_url,
        "SELECT e.seq FROM memory_event e WHERE e.session_id = %s ORDER BY e.seq",
        session_id,
    )
    # activate's event, then one per remember and per recall, numbered without a gap
    assert [s for (s,) in seqs] == list(range(1, len(seqs) + 1))
    assert len(seqs) == 1 + len(calls)
    memories = _rows(
        database_url, "SELECT count(*) FROM memory_memory WHERE scope = %s", scope
    )
    assert memories == [(4 * PARALLEL,)]


def test_parallel_sessions_remembering_one_text_match_it(pg_server: tuple[str, str]) -> None:
    base, database_url = pg_server
    scope = "project:pg-same-text"
    sessions = [_activate(base, scope) for _ in range(PARALLEL)]
    calls = [
        (
            "remember",
            {
                "scope": scope,
                "session_id": session_id,
                "content": f"Release {round_} is tagged from the main branch only.",
                "type": "fact",
            },
        )
        for round_ in range(3)
        for session_id in sessions
    ]
    replies = _parallel(calls, base)
    assert _failures(replies) == []
    dispositions = sorted(envelope["data"]["disposition"] for _, envelope in replies)
    assert dispositions.count("created") == 3 and dispositions.count("matched") == 3 * (
        PARALLEL - 1
    )
    memory_ids = {envelope["data"]["memory_id"] for _, envelope in replies}
    assert len(memory_ids) == 3
    active = _rows(
        database_url,
        "SELECT count(*) FROM memory_memory WHERE scope = %s AND status = 'active'",
        scope,
    )
    assert active == [(3,)]
    # every call's evidence is kept: one support row per remember
    supports = _rows(
        database_url, "SELECT count(*) FROM memory_support WHERE scope = %s", scope
    )
    assert supports[0][0] >= len(calls)
