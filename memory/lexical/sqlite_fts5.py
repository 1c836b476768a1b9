"""SQLite's lexical engine: FTS5 tables `fts_<kind>` scored by `-bm25()` over their content.

Each row also carries its scope as one opaque token (`scope_key`), so a match is narrowed to the
asked scopes inside the index: filtering an unindexed scope column read every matching row of
every scope, 19 ms for a document-frequency lookup at 100k memories in 10 scopes against 0.9 ms
this way.

Every write transaction adds a segment (a b-tree) to a table's index, and FTS5's automerge
leaves several: 100k memories remembered 256 at a time left ten, and each search reads every
one. Merged, finding a recall's 2.4k matching rows took 1.15 ms of CPU instead of 2.0 and a
document frequency a third as long; bm25 over the rows found (~6 ms there) is the same. `tidy`
merges them (the consolidation pass `tidy_lexical`): the same rows, postings and scores.
"""

from __future__ import annotations

from django.db import connection

from memory.lexical.query import fts_query, scope_key

# A table's index is merged into one segment once its largest holds less than this share of its
# pages: after the others, written since, have grown to a third of it. A merge rewrites the
# whole index, so each row is rewritten a bounded number of times as the store grows, and a
# few small segments beside a large one (what automerge leaves between merges) cost a search
# little.
TIDY_SHARE = 0.75


def _within(match: str, scopes: list[str]) -> str:
    """An FTS5 query: `match` on the content column, in one of the scopes."""
    keys = " OR ".join(scope_key(scope) for scope in dict.fromkeys(scopes))
    return f"content : ({match}) AND scope_key : ({keys})"


class Fts5Lexical:
    name = "fts5"

    def index_many(self, kind: str, rows: list[tuple[int, str, str]]) -> None:
        final = {row_id: (scope, content) for row_id, scope, content in rows}  # a row's last text
        with connection.cursor() as cursor:
            cursor.executemany(f"DELETE FROM fts_{kind} WHERE rowid = %s", [[k] for k in final])
            cursor.executemany(
                f"INSERT INTO fts_{kind}(rowid, content, scope, scope_key) VALUES (%s, %s, %s, %s)",
                [[key, content, scope, scope_key(scope)] for key, (scope, content) in final.items()],
            )

    def remove(self, kind: str, row_id: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM fts_{kind} WHERE rowid = %s", [row_id])

    def search(
        self, kind: str, text: str, scopes: list[str], limit: int
    ) -> list[tuple[int, float]]:
        with connection.cursor() as cursor:
            cursor.execute(
                # Only the content column weighs in the score (scope and scope_key weigh 0).
                f"SELECT rowid, -bm25(fts_{kind}, 1.0, 0.0, 0.0) AS score FROM fts_{kind} "
                f"WHERE fts_{kind} MATCH %s ORDER BY score DESC, rowid LIMIT %s",
                [_within(fts_query(text), scopes), limit],
            )
            return [(int(row_id), float(score)) for row_id, score in cursor]

    def rows_with_term(self, kind: str, term: str, scopes: list[str], limit: int) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT rowid FROM fts_{kind} WHERE fts_{kind} MATCH %s LIMIT %s",
                [_within(f'"{term}"', scopes), limit],
            )
            return [int(row_id) for (row_id,) in cursor]

    def document_frequencies(
        self, kind: str, terms: list[str], scopes: list[str]
    ) -> dict[str, int]:
        part = f"SELECT %s, count(*) FROM fts_{kind} WHERE fts_{kind} MATCH %s"
        out: dict[str, int] = {}
        for start in range(0, len(terms), 200):
            chunk = terms[start : start + 200]
            params: list[str] = []
            for term in chunk:
                params += [term, _within(f'"{term}"', scopes)]
            with connection.cursor() as cursor:
                cursor.execute(" UNION ALL ".join([part] * len(chunk)), params)
                out.update({term: int(df) for term, df in cursor})
        return out

    def segments(self, kind: str) -> list[int]:
        """The leaf pages of each b-tree the kind's index is made of (the `_idx` table names
        every non-empty one, with its pages' numbers)."""
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT max(pgno) FROM fts_{kind}_idx GROUP BY segid")
            return [int(pages) for (pages,) in cursor.fetchall()]

    def tidy(self, kind: str) -> int:
        """Merge the kind's index into one segment (FTS5 'optimize') when its largest holds
        less than TIDY_SHARE of its pages; the segments merged (0: none)."""
        pages = self.segments(kind)
        if len(pages) < 2 or max(pages) >= TIDY_SHARE * sum(pages):
            return 0
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO fts_{kind}(fts_{kind}) VALUES ('optimize')")
        return len(pages)
