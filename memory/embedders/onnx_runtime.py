"""all-MiniLM-L6-v2 through ONNX Runtime, as sentence-transformers computes it.

The `tokenizers` library's tokenizer (truncated at the model's max_seq_length, padded per
batch), the exported transformer, mean pooling over the attention mask and L2 normalisation:
the vectors of the torch model within float32 rounding. Imports onnxruntime and tokenizers,
never torch. Which embedder serves a process is `memory.embedders.serving`'s choice.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from memory.embedders.base import (
    BATCH_SIZE,
    DIMENSIONS,
    EmbedderUnavailable,
    LoadedOnce,
    _normalise,
    token_batches,
)
from memory.embedders.export_files import (
    FP32_FILE,
    INT8_FILE,
    TOKENIZER_FILE,
    manifest_read,
)

# fp32 keeps the torch embedder's name: its vectors are the same (within ~1e-6), so stored
# vectors, kept benchmark stores and logged retrievals stay comparable. int8 weights move a
# vector by up to a few hundredths: a different embedder, named so.
BASE_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# Padded tokens per batch (memory.embedders.base.token_batches says what it measured).
BATCH_TOKENS = 1024
INT8_NAME = f"{BASE_NAME}+onnx-int8"
# Past 4 threads a batch of this small model gains little, and the cores are shared with the
# other Slowave processes (web, worker, each agent's mcp_serve).
MAX_AUTO_THREADS = 4
log = logging.getLogger(__name__)


def default_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_AUTO_THREADS, cores))


class _Runtime:
    """A loaded tokenizer and inference session: pooled, unnormalised vectors for one batch."""

    def __init__(self, directory: Path, *, quantized: bool, threads: int, max_length: int):
        self.max_length = max_length
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        # The saved tokenizer pads every text to a fixed 128 and truncates there; the model
        # reads up to max_seq_length (256) tokens and sentence-transformers pads per batch.
        tokenizer.enable_truncation(max_length=max_length)
        padding = tokenizer.padding or {}
        tokenizer.enable_padding(
            pad_id=padding.get("pad_id", 0),
            pad_type_id=padding.get("pad_type_id", 0),
            pad_token=padding.get("pad_token", "[PAD]"),
        )
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or default_threads()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # errors only: stderr is the agent's log under mcp_serve
        # No arena: it keeps the peak of every batch shape for good (a batch of 64 texts of 256
        # tokens left 1.2 GB resident); plain malloc hands it back (release_memory).
        options.enable_cpu_mem_arena = False
        # Idle threads sleep instead of spinning: the cores are shared, and a reply waits on
        # retrieval far longer than on a thread's wake-up.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        path = directory / (INT8_FILE if quantized else FP32_FILE)
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = tokenizer
        self.inputs = {i.name for i in self.session.get_inputs()}

    def run(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": mask,
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (hidden,) = self.session.run(
            ["last_hidden_state"], {k: v for k, v in feeds.items() if k in self.inputs}
        )
        weights = mask[:, :, None].astype(np.float32)
        summed = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
        return summed / np.clip(weights.sum(axis=1), 1e-9, None)


class OnnxEmbedder(LoadedOnce[_Runtime]):
    """The export in `directory` (fp32, or its int8 weights with `quantized`)."""

    _log = log
    _load_failed = "the ONNX embedding model failed to load: %s"

    def __init__(
        self,
        directory: Path,
        *,
        quantized: bool = False,
        threads: int = 0,
        max_seq_length: int | None = None,
    ) -> None:
        super().__init__()
        self.directory = Path(directory)
        self.quantized = quantized
        self._threads = threads
        self._max_seq_length = max_seq_length  # else the manifest's

    @property
    def name(self) -> str:
        return INT8_NAME if self.quantized else BASE_NAME

    def _open(self) -> _Runtime:
        max_length = self._max_seq_length
        if max_length is None:
            manifest: dict[str, Any] = manifest_read(self.directory) or {}
            max_length = int(manifest.get("max_seq_length", 0)) or None
        if max_length is None:
            raise EmbedderUnavailable(f"no manifest in {self.directory}")
        return _Runtime(
            self.directory, quantized=self.quantized, threads=self._threads, max_length=max_length
        )

    def _run(self, model: _Runtime, texts: list[str], batch_size: int) -> np.ndarray:
        return model.run(texts)

    def encode(self, texts: list[str], *, yielding: bool = False) -> np.ndarray:
        """`yielding`: long work that steps aside, batch by batch, for any other encode, and
        hands the memory its batches took back to the system afterwards."""
        runtime = self.load()
        if yielding:
            return self._encode_yielding(runtime, texts)
        # Longest first, as sentence-transformers orders a batch: the vectors are the same
        # ones in the same order.
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        batches = token_batches(
            texts, budget=BATCH_TOKENS, most=BATCH_SIZE, longest=runtime.max_length
        )
        with self._turns.turn(yielding=False):
            for rows in batches:
                out[rows] = runtime.run([texts[i] for i in rows])
        return _normalise(out)
