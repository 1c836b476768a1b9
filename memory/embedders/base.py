"""What every embedder shares: the Embedder protocol, its error, the vector size, the helpers
that make a vector a unit one, the one-encode-at-a-time turns, and the hashing embedder that
unit tests of pure mechanics use. Imports no model library.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, Protocol, TypeVar

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


M = TypeVar("M")


class LoadedOnce(Generic[M]):
    """What the model embedders share: the model loaded on first use, once, behind a lock (a
    failed load is remembered: every later call answers EmbedderUnavailable, and the reply
    degrades to lexical_only), one encode at a time, and the yielding encode.

    A subclass opens its model (`_open`) and runs one batch of texts through it (`_run`)."""

    _log = logging.getLogger("memory.embeddings")
    _load_failed = "embedding model failed to load: %s"

    def __init__(self) -> None:
        self._model: M | None = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        self._turns = _Turns()

    def _open(self) -> M:
        raise NotImplementedError

    def _run(self, model: M, texts: list[str], batch_size: int) -> np.ndarray:
        """The unnormalised vectors of one batch."""
        raise NotImplementedError

    def load(self) -> M:
        with self._lock:
            if self._model is None and self._failed is None:
                try:
                    self._model = self._open()
                except Exception as exc:  # the reply degrades to lexical_only
                    self._failed = f"{type(exc).__name__}: {exc}"
                    self._log.error(self._load_failed, self._failed)
            if self._model is None:
                raise EmbedderUnavailable(self._failed or "model not loaded")
            return self._model

    @property
    def available(self) -> bool:
        try:
            self.load()
        except EmbedderUnavailable:
            return False
        return True

    def _encode_yielding(self, model: M, texts: list[str]) -> np.ndarray:
        """Long work that steps aside, batch by batch, for any other encode, and hands the
        memory its batches took back to the system afterwards."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for rows in longest_first(texts, YIELD_BATCH):
            with self._turns.turn(yielding=True):
                out[rows] = self._run(model, [texts[i] for i in rows], YIELD_BATCH)
        release_memory()
        return _normalise(out)


def longest_first(texts: list[str], size: int) -> list[list[int]]:
    """Batches of text positions, longest text first, as sentence-transformers orders a batch
    itself: texts of like length pad alike."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    return [order[start : start + size] for start in range(0, len(order), size)]


def token_batches(lengths: list[int], *, budget: int, most: int) -> list[list[int]]:
    """Batches of text positions, longest first, each of at most `most` texts and about `budget`
    tokens once padded to its first (longest) text's token count. Texts of like length pad
    alike, so a batch of LoCoMo turns holds ~2 % padding (sized by a character estimate, 37 %).
    ONNX Runtime runs MiniLM fastest in small batches: on one thread, LoCoMo turns in batches
    of ~300 padded tokens took 0.8x the CPU time of ~1,000 and 0.6x that of ~2,000 (the
    feed-forward's activations stay in the core's cache)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches, start = [], 0
    while start < len(order):
        size = max(1, min(most, budget // max(1, lengths[order[start]])))
        batches.append(order[start : start + size])
        start += size
    return batches
