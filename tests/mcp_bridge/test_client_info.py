"""Who is calling comes from the MCP handshake and settings, never from tool arguments."""

from __future__ import annotations

import sqlite3
from contextlib import closing

from tests.e2e_support import spawn_server


def test_it_records_client_info_from_initialize_and_identity_from_settings() -> None:
    # The hash embedder keeps this adapter check fast; retrieval quality is not under test.
    env = {"SLOWAVE_CLIENT_IDENTITY": "laptop-7", "SLOWAVE_EMBEDDER": "hash"}
    with spawn_server(env=env, client_name="agent-x", client_version="4.2") as client:
        envelope = client.call(
            "slowave_activate",
            {"task": "Check client info", "initial_goal": "Stored", "scope": "project:info"},
        )
        assert envelope["ok"], envelope
        session_id = envelope["data"]["session_id"]
        with closing(sqlite3.connect(client.db_path)) as db:
            row = db.execute(
                "SELECT client_name, client_version, client_identity FROM memory_session"
                " WHERE id = ?",
                (session_id,),
            ).fetchone()
    assert row == ("agent-x", "4.2", "laptop-7")
