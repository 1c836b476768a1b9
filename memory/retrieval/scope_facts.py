"""What ranking needs to know about the request scope, read in one round trip per cue (the
statement is the engine's: memory/engines/ranking.py)."""

from __future__ import annotations

from dataclasses import dataclass

from memory.engines import storage_engine
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
    """`session_cap`: count the scope's remembering sessions up to this many (0: not at all).
    A memory's source session is its source event's (remember and consolidation set both)."""
    eligible, newest, imported, sessions = storage_engine().scope_facts(
        scope=scope,
        session_cap=session_cap,
        statuses=(Memory.Status.ACTIVE, Memory.Status.STALE),
        imported=Session.EndedBy.IMPORT,
    )
    return ScopeFacts(
        eligible=eligible,
        newest_content=newest or "",
        imported=imported,
        remembered_sessions=sessions,
    )
