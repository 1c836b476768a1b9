"""The reads ranking runs on the memory tables, written once for every engine.

memory.retrieval (candidates, context, scope facts, session evidence) asks the engine for these
rows instead of holding SQL of its own. They stay hand-written: building the ORM query cost more
than running it, several times per recall. The statements are the same on SQLite and PostgreSQL;
what differs is how an engine binds a list of values (`any_of`, `chunks`) and which Python types
its driver hands back (`row_values`), each in its engine module. Table and column names are the
ones memory.models declares (this layer sits below the models and cannot import them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, cast

# The columns MemoryRow reads, in its field order (memory.retrieval.candidates).
MEMORY_ROWS = (
    "SELECT m.id, m.type, m.content, m.scope, m.status, m.origin, m.generalization_stage, "
    "m.salience, m.superseded_by_id, m.occurred_at, m.created_at, m.provenance, m.embedding, "
    "m.passages, e.session_id, e.seq FROM memory_memory m "
    "LEFT JOIN memory_event e ON e.id = m.source_event_id "
    "WHERE m.status IN (%s, %s) AND {ids}"
)
# Indexes of the columns of MEMORY_ROWS an engine may hand back in its own types.
OCCURRED_AT, CREATED_AT, PROVENANCE, EMBEDDING, PASSAGES = 9, 10, 11, 12, 13

MEMORIES_AT = (
    "SELECT m.id, e.session_id, e.seq FROM memory_memory m "
    "JOIN memory_event e ON e.id = m.source_event_id WHERE {sessions} AND {seqs}"
)
MEMORY_SESSIONS = (
    "SELECT m.id, e.session_id FROM memory_memory m "
    "JOIN memory_event e ON e.id = m.source_event_id WHERE m.status IN (%s, %s) AND {ids}"
)
# Association edges touching any of the ids (either end), at or above a weight.
ASSOCIATION_EDGES = (
    "SELECT src_id, dst_id, weight FROM memory_association "
    "WHERE weight >= %s AND ({src} OR {dst})"
)
# Scopes other than the request's holding promoted (stage >= 1) memories, with their stages.
PROMOTED_SCOPES = (
    "SELECT DISTINCT scope, generalization_stage FROM memory_memory "
    "WHERE generalization_stage >= 1 AND status IN (%s, %s) AND NOT scope = %s"
)
# The event each memory was remembered from (recall's provenance evidence).
SOURCE_EVENTS = (
    "SELECT m.id, e.id, e.recorded_at, e.occurred_at, e.content FROM memory_memory m "
    "JOIN memory_event e ON e.id = m.source_event_id WHERE {ids}"
)
MEMORIES_IN_STATUS = "SELECT id FROM memory_memory WHERE status = %s AND {ids}"
SESSION_LENGTHS = (
    "SELECT e.session_id, COUNT(*) FROM memory_memory m "
    "JOIN memory_event e ON e.id = m.source_event_id WHERE {sessions} GROUP BY e.session_id"
)

# The scope's remembering sessions, at most the cap, by a loose index scan over (scope,
# source_session): one seek per session. DISTINCT over the memories joined to their events read
# every memory of the scope: 18 ms for 10k memories remembered in one session.
SCOPE_FACTS = (
    "WITH RECURSIVE found(session, n) AS ("
    "SELECT (SELECT MIN(source_session_id) FROM memory_memory "
    "WHERE scope = %(scope)s AND source_event_id IS NOT NULL), 1 "
    "UNION ALL SELECT (SELECT MIN(source_session_id) FROM memory_memory "
    "WHERE scope = %(scope)s AND source_session_id > found.session "
    "AND source_event_id IS NOT NULL), n + 1 "
    "FROM found WHERE found.session IS NOT NULL AND n < %(cap)s) "
    "SELECT {eligible}, "
    "(SELECT content FROM memory_memory WHERE scope = %(scope)s ORDER BY id DESC LIMIT 1), "
    "(SELECT COUNT(*) FROM (SELECT 1 FROM memory_session "
    "WHERE scope = %(scope)s AND ended_by = %(imported)s LIMIT 1) AS imported), "
    "(SELECT COUNT(session) FROM found WHERE n <= %(cap)s)"
)
# The scope's memories in the two statuses, counted (an engine that keeps the count reads it).
ELIGIBLE_COUNTED = (
    "(SELECT COUNT(*) FROM memory_memory WHERE scope = %(scope)s AND status IN (%(active)s, "
    "%(stale)s))"
)


class RankingReads:
    """The reads themselves; an engine class supplies `db`, `any_of`, `chunks`, `row_values`."""

    db: Any
    # The SCOPE_FACTS subquery that gives the scope's memories in the two statuses.
    eligible = ELIGIBLE_COUNTED

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """A condition that `column` is one of `values` (not empty), and its parameters."""
        raise NotImplementedError

    def chunks(self, values: Sequence[Any]) -> Iterator[Sequence[Any]]:
        """`values` in lists short enough for one statement each."""
        raise NotImplementedError

    def row_values(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """A MEMORY_ROWS row with aware UTC datetimes, a dict provenance and bytes vectors."""
        raise NotImplementedError

    def _rows(self, sql: str, params: Sequence[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
        with self.db.cursor() as cursor:
            cursor.execute(sql, params)
            return list(cursor.fetchall())

    def memory_rows(self, ids: Sequence[int], statuses: Sequence[str]) -> list[tuple[Any, ...]]:
        """MEMORY_ROWS for the memories among `ids` in one of the two `statuses`."""
        if not ids:
            return []
        where, params = self.any_of("m.id", ids)
        rows = self._rows(MEMORY_ROWS.format(ids=where), [*statuses, *params])
        return [self.row_values(row) for row in rows]

    def association_edges(
        self, ids: Sequence[int], min_weight: float
    ) -> list[tuple[int, int, float]]:
        """(src, dst, weight) of the association edges with either end among `ids`, of at
        least `min_weight`."""
        if not ids:
            return []
        src, src_params = self.any_of("src_id", ids)
        dst, dst_params = self.any_of("dst_id", ids)
        rows = self._rows(
            ASSOCIATION_EDGES.format(src=src, dst=dst), [min_weight, *src_params, *dst_params]
        )
        return [(int(a), int(b), float(w)) for a, b, w in rows]

    def promoted_scopes(
        self, scope: str, statuses: Sequence[str]
    ) -> set[tuple[str, int]]:
        """(scope, stage) of the memories in `statuses` promoted to stage 1 or more, outside
        `scope`."""
        return {(str(s), int(g)) for s, g in self._rows(PROMOTED_SCOPES, [*statuses, scope])}

    def source_events(
        self, ids: Sequence[int]
    ) -> dict[int, tuple[int, datetime, datetime | None, str]]:
        """memory id -> (event id, recorded_at, occurred_at, content) of the event it was
        remembered from, for those of `ids` with one."""
        if not ids:
            return {}
        where, params = self.any_of("m.id", ids)
        rows = self._rows(SOURCE_EVENTS.format(ids=where), params)
        return {int(m): (int(e), cast(datetime, utc(rec)), utc(occ), str(text)) for m, e, rec, occ, text in rows}

    def memories_in_status(self, ids: Sequence[int], status: str) -> set[int]:
        """Those of `ids` whose memory is in `status`."""
        if not ids:
            return set()
        where, params = self.any_of("id", ids)
        rows = self._rows(MEMORIES_IN_STATUS.format(ids=where), [status, *params])
        return {int(pk) for (pk,) in rows}

    def memories_at(
        self, sessions: Sequence[str], seqs: Sequence[int]
    ) -> list[tuple[int, str, int]]:
        """(memory id, session, seq) of memories remembered in one of `sessions` at one of
        `seqs` (every pair of the two lists: the caller keeps the pairs it wants)."""
        if not sessions or not seqs:
            return []
        in_sessions, session_params = self.any_of("e.session_id", sessions)
        in_seqs, seq_params = self.any_of("e.seq", seqs)
        sql = MEMORIES_AT.format(sessions=in_sessions, seqs=in_seqs)
        rows = self._rows(sql, [*session_params, *seq_params])
        return [(int(pk), str(session), int(seq)) for pk, session, seq in rows]

    def memory_sessions(self, ids: Sequence[int], statuses: Sequence[str]) -> dict[int, str]:
        """memory id -> the session it was remembered in, for those of `ids` with one."""
        out: dict[int, str] = {}
        for chunk in self.chunks(ids):
            where, params = self.any_of("m.id", chunk)
            rows = self._rows(MEMORY_SESSIONS.format(ids=where), [*statuses, *params])
            out.update({int(pk): str(session) for pk, session in rows})
        return out

    def session_lengths(self, sessions: Sequence[str]) -> dict[str, int]:
        """Memories remembered per session, for those of `sessions` with any."""
        out: dict[str, int] = {}
        for chunk in self.chunks(sessions):
            where, params = self.any_of("e.session_id", chunk)
            rows = self._rows(SESSION_LENGTHS.format(sessions=where), params)
            out.update({str(session): int(n) for session, n in rows})
        return out

    def scope_facts(
        self, *, scope: str, session_cap: int, statuses: Sequence[str], imported: str
    ) -> tuple[int, str | None, bool, int]:
        """(memories in `statuses`, the newest memory's content, whether a session ended by
        `imported`, remembering sessions counted up to `session_cap`) of one scope."""
        active, stale = statuses
        params = {
            "scope": scope,
            "cap": session_cap,
            "active": active,
            "stale": stale,
            "imported": imported,
        }
        sql = SCOPE_FACTS.format(eligible=self.eligible)
        ((eligible, newest, held, sessions),) = self._rows(sql, params)
        return int(eligible), newest, bool(held), int(sessions)


def utc(value: datetime | str | None) -> datetime | None:
    """A stored time (UTC) as an aware datetime, from text or a naive or aware datetime."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def decoded(value: Any) -> Any:
    """A JSON column as Python: drivers hand it back as text (Django decodes JSONField itself).
    Decoded per row: a value shared between rows would be one careless write from changing
    them all."""
    return json.loads(value) if isinstance(value, str) else value


def blob(value: bytes | memoryview | None) -> bytes | None:
    return bytes(value) if isinstance(value, memoryview) else value
