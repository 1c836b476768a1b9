"""Lexical search (spec §4): user text is tokenised and quoted, never passed as syntax.

SQLite: FTS5 tables scored by `-bm25()` over their content column. Each row also carries its
scope as one opaque token (`scope_key`), so a match is narrowed to the asked scopes inside the
index: filtering an unindexed scope column read every matching row of every scope, 19 ms for a
document-frequency lookup at 100k memories in 10 scopes against 0.9 ms this way.
PostgreSQL: `lex_<kind>` tables with a stored `tsvector` and a GIN index, scored by
`ts_rank_cd` (only ranks are fused downstream).
Tokens are `[a-z0-9]+`, so they are safe as tsquery lexemes too.
"""

from __future__ import annotations

import hashlib

from django.db import connection

from memory.text import tokens

FTS_KINDS = ("memory", "episode", "procedure")


def fts_query(text: str) -> str:
    """An OR query of quoted tokens, or '' when the text has no searchable token."""
    unique = list(dict.fromkeys(tokens(text)))
    return " OR ".join(f'"{t}"' for t in unique)


def scope_key(scope: str) -> str:
    """The scope as one FTS5 token: `s` and 64 bits of its hash in decimal (the porter
    stemmer leaves a token ending in a digit alone)."""
    digest = hashlib.blake2b(scope.encode(), digest_size=8).digest()
    return f"s{int.from_bytes(digest, 'big')}"


def _within(match: str, scopes: list[str]) -> str:
    """An FTS5 query: `match` on the content column, in one of the scopes."""
    keys = " OR ".join(scope_key(scope) for scope in dict.fromkeys(scopes))
    return f"content : ({match}) AND scope_key : ({keys})"


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def index(kind: str, row_id: int, scope: str, content: str) -> None:
    _check(kind)
    if _postgres():
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO lex_{kind}(row_id, scope, content) VALUES (%s, %s, %s) "
                "ON CONFLICT (row_id) DO UPDATE SET scope = EXCLUDED.scope, "
                "content = EXCLUDED.content",
                [row_id, scope, content],
            )
        return
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM fts_{kind} WHERE rowid = %s", [row_id])
        cursor.execute(
            f"INSERT INTO fts_{kind}(rowid, content, scope, scope_key) VALUES (%s, %s, %s, %s)",
            [row_id, content, scope, scope_key(scope)],
        )


def remove(kind: str, row_id: int) -> None:
    """Drop a row from the kind's lexical index; a row not there is no error."""
    _check(kind)
    if _postgres():
        sql = f"DELETE FROM lex_{kind} WHERE row_id = %s"
    else:
        sql = f"DELETE FROM fts_{kind} WHERE rowid = %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [row_id])


def search(kind: str, text: str, scopes: list[str], limit: int) -> list[tuple[int, float]]:
    """(row id, -bm25) best first; empty when the text has no tokens."""
    _check(kind)
    query = fts_query(text)
    if not query or not scopes:
        return []
    if _postgres():
        terms = " | ".join(dict.fromkeys(tokens(text)))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT row_id, ts_rank_cd(tsv, q) AS score "
                f"FROM lex_{kind}, to_tsquery('english', %s) AS q "
                "WHERE tsv @@ q AND scope = ANY(%s) ORDER BY score DESC, row_id LIMIT %s",
                [terms, list(scopes), limit],
            )
            return [(int(row_id), float(score)) for row_id, score in cursor]
    with connection.cursor() as cursor:
        cursor.execute(
            # Only the content column weighs in the score (scope and scope_key weigh 0).
            f"SELECT rowid, -bm25(fts_{kind}, 1.0, 0.0, 0.0) AS score FROM fts_{kind} "
            f"WHERE fts_{kind} MATCH %s ORDER BY score DESC, rowid LIMIT %s",
            [_within(query, scopes), limit],
        )
        return [(int(row_id), float(score)) for row_id, score in cursor]


def rows_with_term(kind: str, term: str, scopes: list[str], limit: int) -> list[int]:
    """Ids of up to `limit` rows holding the token `term` (stemmed as the index stems), in
    no particular order: the postings a session-level score sums (retrieval/sessions.py)."""
    _check(kind)
    if not scopes or not term:
        return []
    with connection.cursor() as cursor:
        if _postgres():
            cursor.execute(
                f"SELECT row_id FROM lex_{kind} WHERE tsv @@ to_tsquery('english', %s) "
                "AND scope = ANY(%s) LIMIT %s",
                [term, list(scopes), limit],
            )
        else:
            cursor.execute(
                f"SELECT rowid FROM fts_{kind} WHERE fts_{kind} MATCH %s LIMIT %s",
                [_within(f'"{term}"', scopes), limit],
            )
        return [int(row_id) for (row_id,) in cursor]


def document_frequencies(kind: str, terms: list[str], scopes: list[str]) -> dict[str, int]:
    """Document frequency of each term in one round trip per 200 terms."""
    _check(kind)
    out: dict[str, int] = {}
    if not scopes:
        return {term: 0 for term in terms}
    if _postgres():
        return _pg_document_frequencies(kind, terms, scopes)
    part = f"SELECT %s, count(*) FROM fts_{kind} WHERE fts_{kind} MATCH %s"
    for start in range(0, len(terms), 200):
        chunk = terms[start : start + 200]
        params: list[str] = []
        for term in chunk:
            params += [term, _within(f'"{term}"', scopes)]
        with connection.cursor() as cursor:
            cursor.execute(" UNION ALL ".join([part] * len(chunk)), params)
            out.update({term: int(df) for term, df in cursor})
    return out


def _pg_document_frequencies(kind: str, terms: list[str], scopes: list[str]) -> dict[str, int]:
    part = (
        f"SELECT %s, count(*) FROM lex_{kind} "
        "WHERE tsv @@ to_tsquery('english', %s) AND scope = ANY(%s)"
    )
    out: dict[str, int] = {}
    for start in range(0, len(terms), 200):
        chunk = terms[start : start + 200]
        params: list[str | list[str]] = []
        for term in chunk:
            params += [term, term, list(scopes)]
        with connection.cursor() as cursor:
            cursor.execute(" UNION ALL ".join([part] * len(chunk)), params)
            out.update({term: int(df) for term, df in cursor})
    return out


def _check(kind: str) -> None:
    if kind not in FTS_KINDS:
        raise ValueError(f"unknown lexical kind {kind!r}")
