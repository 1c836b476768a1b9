"""Text helpers shared by storage and ranking: normalisation, tokens, light stemming."""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from functools import lru_cache

import Stemmer

TOKEN_RE = re.compile(r"[a-z0-9]+")
WHITESPACE_RE = re.compile(r"\s+")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)


def normalize(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return WHITESPACE_RE.sub(" ", folded).strip()


def normalized_hash(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


def tokens(text: str) -> list[str]:
    """Lower-case word tokens without stopwords, in order (duplicates kept)."""
    return [t for t in TOKEN_RE.findall(text.lower()) if t not in STOPWORDS]


def stem(token: str) -> str:
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            return token[: -len(suffix)]
    return token


_snowball = threading.local()  # a PyStemmer stemmer is not to be shared between threads


@lru_cache(maxsize=131_072)
def snowball(token: str) -> str:
    """The English Snowball (Porter 2) stem: "migrate" and "migrations" both give "migrat"."""
    stemmer = getattr(_snowball, "stemmer", None)
    if stemmer is None:
        stemmer = _snowball.stemmer = Stemmer.Stemmer("english")
    return str(stemmer.stemWord(token))


# The longest memory (memory.schemas); a longer text (a whole cue, rendering an excerpt) is
# seen once, and 65,536 of them kept would be gigabytes.
CACHED_STEMS_CHARS = 8_000


def stems(text: str, *, full: bool = False) -> frozenset[str]:
    """Stemmed token set (`full`: Snowball stems, else the light suffix rule); cached because
    ranking sees the same memories query after query."""
    if len(text) > CACHED_STEMS_CHARS:
        return _stems(text, full)
    return _cached_stems(text, full)


def _stems(text: str, full: bool) -> frozenset[str]:
    rule = snowball if full else stem
    return frozenset(rule(t) for t in tokens(text))


_cached_stems = lru_cache(maxsize=65_536)(_stems)
