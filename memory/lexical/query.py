"""What every lexical engine shares: user text to tokens (never syntax), a scope as one token."""

from __future__ import annotations

import hashlib

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


def check_kind(kind: str) -> None:
    if kind not in FTS_KINDS:
        raise ValueError(f"unknown lexical kind {kind!r}")
