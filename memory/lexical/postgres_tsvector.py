"""PostgreSQL's lexical engine: `lex_<kind>` tables with a stored English `tsvector` and a GIN
index (migration 0006), scored by `ts_rank_cd` (only ranks are fused downstream). Tokens are
`[a-z0-9]+`, so they are safe as tsquery lexemes."""

from __future__ import annotations

from django.db import connection

from memory.text import tokens


class TsvectorLexical:
    name = "tsvector"

    def index_many(self, kind: str, rows: list[tuple[int, str, str]]) -> None:
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO lex_{kind}(row_id, scope, content) VALUES (%s, %s, %s) "
                "ON CONFLICT (row_id) DO UPDATE SET scope = EXCLUDED.scope, "
                "content = EXCLUDED.content",
                rows,
            )

    def remove(self, kind: str, row_id: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM lex_{kind} WHERE row_id = %s", [row_id])

    def search(
        self, kind: str, text: str, scopes: list[str], limit: int
    ) -> list[tuple[int, float]]:
        terms = " | ".join(dict.fromkeys(tokens(text)))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT row_id, ts_rank_cd(tsv, q) AS score "
                f"FROM lex_{kind}, to_tsquery('english', %s) AS q "
                "WHERE tsv @@ q AND scope = ANY(%s) ORDER BY score DESC, row_id LIMIT %s",
                [terms, list(scopes), limit],
            )
            return [(int(row_id), float(score)) for row_id, score in cursor]

    def rows_with_term(self, kind: str, term: str, scopes: list[str], limit: int) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT row_id FROM lex_{kind} WHERE tsv @@ to_tsquery('english', %s) "
                "AND scope = ANY(%s) LIMIT %s",
                [term, list(scopes), limit],
            )
            return [int(row_id) for (row_id,) in cursor]

    def document_frequencies(
        self, kind: str, terms: list[str], scopes: list[str]
    ) -> dict[str, int]:
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
