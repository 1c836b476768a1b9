"""Lexical search (spec §4) behind one interface, one module per database engine.

Engines: `sqlite_fts5` (FTS5, bm25) and `postgres_tsvector` (stored English tsvector, GIN,
ts_rank_cd); the database's engine (memory.engines) names the one it holds. Both are tested
on the same rows by one parity test (tests/memory/test_lexical_engines.py). User text is
tokenised and quoted, never passed as syntax (memory.lexical.query). Adding an engine is one
module here.
"""

from __future__ import annotations

import threading
from typing import Protocol

from memory.engines import storage_engine
from memory.lexical.query import FTS_KINDS, check_kind, fts_query, scope_key

__all__ = [
    "FTS_KINDS",
    "LexicalIndex",
    "document_frequencies",
    "fts_query",
    "get_engine",
    "index",
    "index_many",
    "remove",
    "rows_with_term",
    "scope_key",
    "search",
    "tidy",
]


class LexicalIndex(Protocol):
    name: str

    def index_many(self, kind: str, rows: list[tuple[int, str, str]]) -> None:
        """(row id, scope, content) rows, each replacing the row's earlier text, in one
        statement of each kind for the batch."""

    def remove(self, kind: str, row_id: int) -> None: ...

    def search(
        self, kind: str, text: str, scopes: list[str], limit: int
    ) -> list[tuple[int, float]]: ...

    def rows_with_term(self, kind: str, term: str, scopes: list[str], limit: int) -> list[int]:
        """Ids of up to `limit` rows holding the token `term` (stemmed as the index stems)."""
        ...

    def document_frequencies(
        self, kind: str, terms: list[str], scopes: list[str]
    ) -> dict[str, int]: ...


_engines: dict[str, LexicalIndex] = {}
_lock = threading.Lock()


def get_engine() -> LexicalIndex:
    """The engine the database in use holds (one instance per engine and process)."""
    name = storage_engine().lexical
    engine = _engines.get(name)
    if engine is None:
        with _lock:
            if name == "tsvector":
                from memory.lexical.postgres_tsvector import TsvectorLexical

                engine = _engines.setdefault(name, TsvectorLexical())
            else:
                from memory.lexical.sqlite_fts5 import Fts5Lexical

                engine = _engines.setdefault(name, Fts5Lexical())
    return engine


def index(kind: str, row_id: int, scope: str, content: str) -> None:
    index_many(kind, [(row_id, scope, content)])


def index_many(kind: str, rows: list[tuple[int, str, str]]) -> None:
    check_kind(kind)
    if rows:
        get_engine().index_many(kind, rows)


def remove(kind: str, row_id: int) -> None:
    """Drop a row from the kind's lexical index; a row not there is no error."""
    check_kind(kind)
    get_engine().remove(kind, row_id)


def search(kind: str, text: str, scopes: list[str], limit: int) -> list[tuple[int, float]]:
    """(row id, score) best first; empty when the text has no tokens."""
    check_kind(kind)
    if not fts_query(text) or not scopes:
        return []
    return get_engine().search(kind, text, scopes, limit)


def rows_with_term(kind: str, term: str, scopes: list[str], limit: int) -> list[int]:
    """Ids of up to `limit` rows holding the token `term` (stemmed as the index stems), in
    no particular order: the postings a session-level score sums (retrieval/sessions.py)."""
    check_kind(kind)
    if not scopes or not term:
        return []
    return get_engine().rows_with_term(kind, term, scopes, limit)


def document_frequencies(kind: str, terms: list[str], scopes: list[str]) -> dict[str, int]:
    """Document frequency of each term in one round trip per 200 terms."""
    check_kind(kind)
    if not scopes:
        return {term: 0 for term in terms}
    return get_engine().document_frequencies(kind, terms, scopes)


def tidy() -> dict[str, int]:
    """Per kind, the index segments the engine merged into one (nothing merged: left out).
    An engine whose index needs no merging (PostgreSQL's GIN) has no `tidy`, and nothing is
    done."""
    engine = get_engine()
    merge = getattr(engine, "tidy", None)
    if merge is None:
        return {}
    merged = {kind: int(merge(kind)) for kind in FTS_KINDS}
    return {kind: n for kind, n in merged.items() if n}
