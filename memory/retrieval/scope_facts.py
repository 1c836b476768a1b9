"""What ranking needs to know about the request scope, read in one round trip per cue."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from memory.models import Memory, Session


@dataclass(frozen=True)
class ScopeFacts:
    eligible: int  # active and stale memories: the idf corpus size
    newest_content: str  # content of the scope's latest memory ('' when it has none)
    imported: bool  # the scope holds an imported history (time cues read from its end)
    # sessions that remembered something in the scope, counted up to the cap asked for
    # (asking opens sessions too; those are not part of the history)
    remembered_sessions: int = 0


def scope_facts(scope: str, session_cap: int = 0) -> ScopeFacts:
    """`session_cap`: count the scope's remembering sessions up to this many (0: not at all)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT "
            "(SELECT COUNT(*) FROM memory_memory WHERE scope = %s AND status IN (%s, %s)), "
            "(SELECT content FROM memory_memory WHERE scope = %s ORDER BY id DESC LIMIT 1), "
            "(SELECT COUNT(*) FROM (SELECT 1 FROM memory_session "
            "WHERE scope = %s AND ended_by = %s LIMIT 1) AS found), "
            "(SELECT COUNT(*) FROM (SELECT DISTINCT e.session_id FROM memory_memory m "
            "JOIN memory_event e ON e.id = m.source_event_id WHERE m.scope = %s LIMIT %s) AS s)",
            [
                scope,
                Memory.Status.ACTIVE,
                Memory.Status.STALE,
                scope,
                scope,
                Session.EndedBy.IMPORT,
                scope,
                session_cap,
            ],
        )
        eligible, newest, imported, sessions = cursor.fetchone()
    return ScopeFacts(
        eligible=eligible,
        newest_content=newest or "",
        imported=bool(imported),
        remembered_sessions=int(sessions),
    )
