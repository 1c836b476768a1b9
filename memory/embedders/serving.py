"""Which embedder serves this process: the ONNX export when fresh, else torch.

A missing or stale export is made on first use in a child process, so that the serving
process (mcp_serve, `slowave up`, the worker) never imports torch itself; the child pays the
torch import once, and one stderr line says so. When no export can be had, torch serves,
with one warning line saying why and what to run.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

from memory.embedders.base import Embedder, EmbedderUnavailable
from memory.embedders.export_files import ExportStatus, bundled_model_path, export_status
from memory.embedders.onnx_runtime import BASE_NAME, INT8_NAME, OnnxEmbedder
from memory.embedders.torch_model import SentenceTransformerEmbedder

EXPORT_TIMEOUT_SECONDS = 900
PROJECT_ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger(__name__)


def source_path(configured: str) -> Path:
    """The model SLOWAVE_EMBEDDING_MODEL names, else the bundled one."""
    return Path(configured).expanduser().resolve() if configured else bundled_model_path()


def export_in_child(*, source: Path, model_dir: Path) -> ExportStatus:
    """Run the export in a child process (it imports torch; this process does not)."""
    status = export_status(source=source, model_dir=model_dir)
    if status.fresh:
        return status
    Path(model_dir).mkdir(parents=True, exist_ok=True)  # an unusable place fails here, at once
    from memory.embedders.export import torch_installed

    log.warning(
        "slowave: exporting the embedding model to ONNX in %s, once (%s); this first start %s",
        status.directory,
        status.reason,
        "imports torch in a child process, ~20-60 s"
        if torch_installed()
        else "builds it from the model's weights in a child process (no torch), ~20 s",
    )
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")])
        )
    }
    command = [sys.executable, "-m", "memory.embedders.export", "--models", str(model_dir)]
    child = subprocess.run(
        [*command, "--source", str(source)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,  # stdout is the protocol stream under mcp_serve
        text=True,
        timeout=EXPORT_TIMEOUT_SECONDS,
    )
    status = export_status(source=source, model_dir=model_dir)
    if child.returncode != 0 and not status.fresh:
        lines = (child.stderr or child.stdout).strip().splitlines() or ["(no output)"]
        raise OSError(f"the export exited with {child.returncode}: {lines[-1]}")
    return status


class ServingEmbedder:
    """The ONNX export (fp32, or int8 with `quantized`), decided on first use.

    `auto_export`: make a missing or stale export first (what serving processes do); without
    it, a missing export falls back to torch at once (`slowave doctor` changes nothing)."""

    def __init__(
        self,
        *,
        source: str,
        model_dir: Path,
        quantized: bool = False,
        threads: int = 0,
        auto_export: bool = True,
    ) -> None:
        self._source = source
        self._model_dir = Path(model_dir)
        self.quantized = quantized
        self._threads = threads
        self._auto_export = auto_export
        self._inner: OnnxEmbedder | SentenceTransformerEmbedder | None = None
        self.fallback_reason: str | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        if self._inner is not None:
            return self._inner.name
        return INT8_NAME if self.quantized else BASE_NAME

    @property
    def serving(self) -> Embedder:
        """The embedder that answers (resolving it, and exporting if need be, on first use)."""
        with self._lock:
            if self._inner is None:
                self._inner = self._choose()
            return self._inner

    @property
    def available(self) -> bool:
        return bool(getattr(self.serving, "available", True))

    def encode(self, texts: list[str], *, yielding: bool = False) -> np.ndarray:
        return self.serving.encode(texts, yielding=yielding)

    def _choose(self) -> OnnxEmbedder | SentenceTransformerEmbedder:
        try:
            source = source_path(self._source)
            if self._auto_export:
                status = export_in_child(source=source, model_dir=self._model_dir)
            else:
                status = export_status(source=source, model_dir=self._model_dir)
            if not status.fresh:
                raise EmbedderUnavailable(status.reason)
            embedder = OnnxEmbedder(
                status.directory, quantized=self.quantized, threads=self._threads
            )
            embedder.load()  # a damaged file falls back now, not at every call
            return embedder
        except EmbedderUnavailable as exc:
            self.fallback_reason = str(exc)
        except Exception as exc:  # any failure leaves torch to serve
            self.fallback_reason = f"{type(exc).__name__}: {exc}"
        log.warning(
            "slowave: embedding with torch (sentence-transformers), not ONNX: %s; "
            "run `slowave embedder export` to fix",
            self.fallback_reason,
        )
        return SentenceTransformerEmbedder(self._source)

    def describe(self) -> dict[str, Any]:
        """What serves, for `slowave doctor` (resolves the embedder)."""
        inner = self.serving
        kind = "torch" if isinstance(inner, SentenceTransformerEmbedder) else "onnx"
        if kind == "onnx" and self.quantized:
            kind = "onnx-int8"
        return {"serving": kind, "name": inner.name, "fallback_reason": self.fallback_reason}
