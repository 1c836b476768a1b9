"""What every embedder shares: the Embedder protocol, its error, the vector size, the helpers
that make a vector a unit one, the one-encode-at-a-time turns, and the hashing embedder that
unit tests of pure mechanics use. Imports no model library.
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import numpy as np

from memory.text import TOKEN_RE

DIMENSIONS = 384
BATCH_SIZE = 64
# A yielding encode (a long cue's facets) runs in batches this small: each is one turn at the
# model, so a short call waiting meanwhile goes next, and the activations of one batch of
# 256-token texts stay a few tens of MB.
YIELD_BATCH = 8


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    def encode(self, texts: list[str], *, yielding: bool = False) -> np.ndarray: ...


class EmbedderUnavailable(RuntimeError):
    pass


class HashEmbedder:
    """Signed feature hashing of unigrams and bigrams; deterministic and instant.

    Text without an `[a-z0-9]` word (CJK, emoji, "!!!") hashes its characters instead, so
    "🙂🙂" meets "🙂" and not "!!!"; text without a visible character gets `FALLBACK`."""

    name = "hash-384"

    def encode(self, texts: list[str], *, yielding: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            words = TOKEN_RE.findall(text.lower()) or [c for c in text if not c.isspace()]
            for feature in words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]:
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % DIMENSIONS] += 1.0 if (value >> 32) & 1 else -1.0
        return _normalise(out)


class _Turns:
    """One encode at a time, like a lock; a caller that yields waits while anyone else does."""

    def __init__(self) -> None:
        self._free = threading.Condition()
        self._busy = False
        self._waiting = 0  # callers that do not yield, waiting for a turn

    @contextmanager
    def turn(self, *, yielding: bool) -> Iterator[None]:
        with self._free:
            self._waiting += not yielding
            try:
                while self._busy or (yielding and self._waiting):
                    self._free.wait()
            finally:
                self._waiting -= not yielding
            self._busy = True
        try:
            yield
        finally:
            with self._free:
                self._busy = False
                self._free.notify_all()


# Where a text's vector would have no direction (the hash of text without a visible character,
# or a model answering zeros or NaN): one fixed unit vector, so such texts meet each other and
# stay near-orthogonal to the rest.
FALLBACK = np.full(DIMENSIONS, DIMENSIONS**-0.5, dtype=np.float32)


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    blank = ~(np.isfinite(norms) & (norms > 0))
    units = matrix / np.where(blank, 1.0, norms)
    units[blank[:, 0]] = FALLBACK
    return units.astype(np.float32)


def release_memory() -> None:
    """Hand freed heap memory back to the system (glibc only; elsewhere a no-op). A long cue's
    batches leave hundreds of MB free but held in the thread's heap, for good."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
