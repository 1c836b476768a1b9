"""The process-wide embedder: which one serves (SLOWAVE_EMBEDDER), `encode`, vector blobs.

The embedders themselves live in `memory.embedders`: the bundled all-MiniLM-L6-v2 served
through ONNX Runtime by default (its export and serving), the torch (sentence-transformers)
one as the fallback and `SLOWAVE_EMBEDDER=sentence-transformers`, and a feature-hashing one
for unit tests; their shared names are re-exported here. The model is loaded lazily, once per
process, behind a lock; nothing is ever downloaded. Every encode first checks the store's
record of the embedder that wrote its vectors (memory.embedder_record) and refuses another.
No vector any embedder returns has norm zero (or holds NaN): sqlite-vec answers a NULL cosine
for a zero vector, and one such row in a scope broke every later search.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from django.conf import settings

from memory import instruments
from memory.embedder_record import record_check
from memory.embedders.base import (
    BATCH_SIZE,
    DIMENSIONS,
    FALLBACK,
    Embedder,
    EmbedderUnavailable,
    HashEmbedder,
)
from memory.embedders.serving import ServingEmbedder
from memory.embedders.torch_model import SentenceTransformerEmbedder

__all__ = [
    "BATCH_SIZE",
    "DIMENSIONS",
    "FALLBACK",
    "Embedder",
    "EmbedderUnavailable",
    "HashEmbedder",
    "SentenceTransformerEmbedder",
    "encode",
    "from_blob",
    "get_embedder",
    "known_vector",
    "to_blob",
    "warm_up_in_background",
]

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
    started = time.perf_counter()
    vectors = _encode(texts, yielding=yielding)
    if vectors is not None:
        instruments.embedding_finished(texts=len(texts), seconds=time.perf_counter() - started)
    return vectors


def _encode(texts: list[str], *, yielding: bool = False) -> np.ndarray | None:
    embedder = get_embedder()
    if isinstance(embedder, ServingEmbedder):
        embedder = embedder.serving  # resolved first: a torch fallback makes fp32 vectors
    record_check(embedder)  # EmbedderMismatch before any vector of another kind is made
    try:
        return embedder.encode(texts, yielding=yielding)
    except EmbedderUnavailable:
        return None


def warm_up_in_background() -> threading.Thread:
    # Unmeasured: its time is mostly the model's load, not an embedding anyone waits for.
    thread = threading.Thread(
        target=lambda: _encode(["warm up"]), name="embedder-warmup", daemon=True
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
