"""PostgreSQL's lexical engine: `lex_<kind>` tables with a stored English `tsvector` and a GIN
index (migration 0006), scored by `ts_rank_cd` (only ranks are fused downstream). Tokens are
`[a-z0-9]+`, so they are safe as tsquery lexemes. Document frequencies are read from
`lex_<kind>_df`, which triggers keep as rows are written (migration 0015)."""

from __future__ import annotations

from django.db import connection

from memory.text import tokens


class TsvectorLexical:
    name = "tsvector"

    def index_many(self, kind: str, rows: list[tuple[int, str, str]]) -> None:
        final = {row_id: (scope, content) for row_id, scope, content in rows}  # a row's last text
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO lex_{kind}(row_id, scope, content) "
                "SELECT * FROM unnest(%s::bigint[], %s::varchar[], %s::text[]) "
                "ON CONFLICT (row_id) DO UPDATE SET scope = EXCLUDED.scope, "
                "content = EXCLUDED.content",
                [list(final), [s for s, _ in final.values()], [c for _, c in final.values()]],
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
        """Rows of the scopes matching each term's tsquery: for a query of one lexeme (any token
        but a stop word), the sum of that lexeme's counts; for none, 0; for more (never seen
        from a `[a-z0-9]+` token), the rows counted."""
        if not terms:
            return {}
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT t.term, CASE numnode(t.q) WHEN 0 THEN 0 WHEN 1 THEN "
                f"(SELECT coalesce(sum(d.n), 0) FROM lex_{kind}_df AS d "
                "WHERE d.lexeme = btrim(t.q::text, '''') AND d.scope = ANY(%s)) "
                f"ELSE (SELECT count(*) FROM lex_{kind} AS l WHERE l.tsv @@ t.q "
                "AND l.scope = ANY(%s)) END "
                "FROM (SELECT term, to_tsquery('english', term) AS q "
                "FROM unnest(%s::text[]) AS term) AS t",
                [list(scopes), list(scopes), list(dict.fromkeys(terms))],
            )
            return {term: int(df) for term, df in cursor}
