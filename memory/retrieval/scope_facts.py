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


def scope_facts(scope: str) -> ScopeFacts:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT "
            "(SELECT COUNT(*) FROM memory_memory WHERE scope = %s AND status IN (%s, %s)), "
            "(SELECT content FROM memory_memory WHERE scope = %s ORDER BY id DESC LIMIT 1), "
            "(SELECT COUNT(*) FROM (SELECT 1 FROM memory_session "
            "WHERE scope = %s AND ended_by = %s LIMIT 1) AS found)",
            [
                scope,
                Memory.Status.ACTIVE,
                Memory.Status.STALE,
                scope,
                scope,
                Session.EndedBy.IMPORT,
            ],
        )
        eligible, newest, imported = cursor.fetchone()
    return ScopeFacts(eligible=eligible, newest_content=newest or "", imported=bool(imported))
