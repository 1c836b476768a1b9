"""Scenarios needing their own servers: 13 (continuity after restart), 14 (idle reaper), and
all-or-nothing batch remember when the server is killed mid-call."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from tests.acceptance.cycle import activate, err, fresh_scope, ok
from tests.e2e_support import spawn_server


def _rows(db_path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        return conn.execute(sql, params).fetchall()


def test_it_keeps_continuity_ids_valid_across_restarts(tmp_path):
    scope = fresh_scope()
    with spawn_server(home=tmp_path) as first:
        started = activate(first, scope, "Begin a long migration")
    with spawn_server(home=tmp_path) as second:
        again = activate(
            second, scope, "Resume the long migration", continuity_id=started["continuity_id"]
        )
    assert (
        again["continuity_state"] == "continued"
        and again["continuity_id"] == started["continuity_id"]
    )


def test_it_reaps_idle_sessions_through_the_commit_path(tmp_path):
    scope = fresh_scope()
    env = {"SLOWAVE_SESSION_IDLE_TIMEOUT": "1", "SLOWAVE_REAPER_POLL_SECONDS": "0.05"}
    with spawn_server(home=tmp_path, env=env) as client:
        opened = activate(client, scope, "A task the agent abandons")
    time.sleep(1.5)
    with spawn_server(home=tmp_path, env=env) as client:
        error = err(
            client.call(
                "slowave_recall",
                {"session_id": opened["session_id"], "scope": scope, "query": "anything"},
            )
        )
        assert error["message"] == f"session is already ended: {opened['session_id']}"
        ((ended_by, outcome, feedback, episodes),) = _rows(
            client.db_path,
            "SELECT ended_by, outcome, feedback_status, episodes_state FROM memory_session "
            "WHERE id = ?",
            opened["session_id"],
        )
    assert (ended_by, outcome, episodes) == ("reaper", "unknown", "formed")
    assert feedback in ("incomplete", "complete")


def test_it_reaps_idle_sessions_in_the_background(tmp_path):
    scope = fresh_scope()
    env = {"SLOWAVE_SESSION_IDLE_TIMEOUT": "1", "SLOWAVE_REAPER_POLL_SECONDS": "0.05"}
    with spawn_server(home=tmp_path, env=env) as client:
        opened = activate(client, scope, "A task left idle while the server runs")
        deadline = time.monotonic() + 10
        status = None
        while time.monotonic() < deadline:
            ((status,),) = _rows(
                client.db_path,
                "SELECT ended_by FROM memory_session WHERE id = ?",
                opened["session_id"],
            )
            if status == "reaper":
                break
            time.sleep(0.1)
    assert status == "reaper"


def test_it_keeps_sessions_open_when_the_timeout_is_zero(tmp_path):
    scope = fresh_scope()
    env = {"SLOWAVE_SESSION_IDLE_TIMEOUT": "0", "SLOWAVE_REAPER_POLL_SECONDS": "0.05"}
    with spawn_server(home=tmp_path, env=env) as client:
        opened = activate(client, scope, "A task that may idle")
        time.sleep(1.2)
        ok(
            client.call(
                "slowave_recall",
                {"session_id": opened["session_id"], "scope": scope, "query": "x y z"},
            )
        )


@pytest.mark.parametrize("delay", [0.3, 1.0, 2.0])
def test_it_writes_all_or_none_of_a_batch_when_killed(tmp_path, delay):
    scope = fresh_scope()
    batch = [
        {"content": f"Service {i} exposes metrics on port {9000 + i}", "type": "fact"}
        for i in range(256)
    ]
    with spawn_server(home=tmp_path) as client:
        opened = activate(client, scope, "Catalogue service ports")
        ok(
            client.call(
                "slowave_recall",
                {"session_id": opened["session_id"], "scope": scope, "query": "warm"},
            )
        )
        caller = threading.Thread(
            target=lambda: _swallow(
                client.call,
                "slowave_remember",
                {"scope": scope, "session_id": opened["session_id"], "memories": batch},
            ),
            daemon=True,
        )
        caller.start()
        time.sleep(delay)
        client.kill()
        caller.join(timeout=15)
        db_path = client.db_path
    (memories,) = _rows(db_path, "SELECT count(*) FROM memory_memory WHERE scope = ?", scope)[0:1]
    (events,) = _rows(
        db_path,
        "SELECT count(*) FROM memory_event WHERE session_id = ? AND kind = 'remember'",
        opened["session_id"],
    )[0:1]
    assert (memories[0], events[0]) in ((0, 0), (256, 256))
    assert _rows(db_path, "PRAGMA integrity_check") == [("ok",)]


def _swallow(fn, *args):
    try:
        fn(*args)
    except BaseException:  # the server is killed under the call on purpose
        pass
