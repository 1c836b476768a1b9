"""all-MiniLM-L6-v2 through ONNX Runtime, as sentence-transformers computes it.

The `tokenizers` library's tokenizer (truncated at the model's max_seq_length, padded per
batch), the exported transformer, mean pooling over the attention mask and L2 normalisation:
the vectors of the torch model within float32 rounding. Imports onnxruntime and tokenizers,
never torch. Which embedder serves a process is `memory.embedders.serving`'s choice.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
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
BATCH_TOKENS = 384
INT8_NAME = f"{BASE_NAME}+onnx-int8"
# Batches run side by side on at most this many threads: the cores are shared with the other
# Slowave processes (web, worker, each agent's mcp_serve).
MAX_AUTO_THREADS = 4
log = logging.getLogger(__name__)


def default_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_AUTO_THREADS, cores))


class _Runtime:
    """A loaded tokenizer and inference session: pooled, unnormalised vectors of texts.

    The session runs each batch on the calling thread (one intra-op thread); a text list of
    several batches runs them `threads` at a time on a pool of threads instead. Per-operator
    threads met at a barrier after each of the graph's ~400 operators: on a shared machine a
    descheduled thread stalled both, and it spent 1.2x the CPU time of whole batches side by
    side."""

    def __init__(self, directory: Path, *, quantized: bool, threads: int, max_length: int):
        self.max_length = max_length
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        # The saved tokenizer pads every text to a fixed 128 and truncates there; the model
        # reads up to max_seq_length (256) tokens, and each batch is padded to its longest here.
        tokenizer.enable_truncation(max_length=max_length)
        self.pad_id = int((tokenizer.padding or {}).get("pad_id", 0))
        tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3  # errors only: stderr is the agent's log under mcp_serve
        # No arena: it keeps the peak of every batch shape for good (a batch of 64 texts of 256
        # tokens left 1.2 GB resident); plain malloc hands it back (release_memory).
        options.enable_cpu_mem_arena = False
        path = directory / (INT8_FILE if quantized else FP32_FILE)
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = tokenizer
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.threads = threads or default_threads()
        self._pool: ThreadPoolExecutor | None = None

    def vectors(self, texts: list[str]) -> np.ndarray:
        """Each distinct text encoded once, in batches of like token counts."""
        distinct = list(dict.fromkeys(texts))
        tokens = [e.ids for e in self.tokenizer.encode_batch(distinct)]
        out = np.zeros((len(distinct), DIMENSIONS), dtype=np.float32)

        def one(rows: list[int]) -> None:
            out[rows] = self._pooled([tokens[i] for i in rows])

        batches = token_batches([len(t) for t in tokens], budget=BATCH_TOKENS, most=BATCH_SIZE)
        if len(batches) > 1 and self.threads > 1:
            list(self._workers().map(one, batches))
        else:
            for rows in batches:
                one(rows)
        if len(distinct) == len(texts):
            return out
        at = {text: row for row, text in enumerate(distinct)}
        return out[[at[text] for text in texts]]

    def _workers(self) -> ThreadPoolExecutor:
        if self._pool is None:  # under the embedder's turn: one encode at a time
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="onnx-batch")
        return self._pool

    def _pooled(self, tokens: list[list[int]]) -> np.ndarray:
        """Mean pooling of one batch, padded to its longest text."""
        width = max(map(len, tokens))
        ids = np.full((len(tokens), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(tokens), width), dtype=np.int64)
        for row, text in enumerate(tokens):
            ids[row, : len(text)] = text
            mask[row, : len(text)] = 1
        # One sequence per text: every token type is 0.
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
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
        return model.vectors(texts)

    def encode(self, texts: list[str], *, yielding: bool = False) -> np.ndarray:
        """`yielding`: long work that steps aside, batch by batch, for any other encode, and
        hands the memory its batches took back to the system afterwards."""
        runtime = self.load()
        if yielding:
            return self._encode_yielding(runtime, texts)
        with self._turns.turn(yielding=False):
            return _normalise(runtime.vectors(texts))
