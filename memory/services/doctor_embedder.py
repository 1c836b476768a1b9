"""`slowave doctor`'s embedder checks: which embedder serves, the ONNX export, the model.

Read-only, like the rest of doctor: a missing export is reported, not made, and nothing here
imports torch unless torch is what serves (the export's agreement with torch is read from its
manifest).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import DatabaseError

from memory.embedder_record import record_conflict, record_read, store_holds_vectors
from memory.embedders.export_files import export_status
from memory.embedders.serving import ServingEmbedder, source_path
from memory.embeddings import EmbedderUnavailable, SentenceTransformerEmbedder, get_embedder


# Doctor's result row: defined here, in the module doctor.py builds on, so that the two do not
# import each other.
@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _status(*, verify: bool = False) -> Any:
    return export_status(
        source=source_path(settings.SLOWAVE_EMBEDDING_MODEL),
        model_dir=settings.SLOWAVE_MODEL_DIR,
        verify=verify,
    )


def export_state() -> str:
    """fresh | missing | stale (for the dashboard's health panel)."""
    try:
        return str(_status().state)
    except Exception as exc:  # a missing model package says so here, not as a 500
        return f"unknown ({type(exc).__name__})"


def _onnx_configured() -> bool:
    return settings.SLOWAVE_EMBEDDER in ("onnx", "onnx-int8")


def check_export() -> Check:
    try:
        status = _status(verify=True)
    except Exception as exc:
        return Check("onnx export", "fail", f"cannot read the model: {exc}")
    if not status.fresh:
        status_word = "warn" if _onnx_configured() else "ok"
        return Check(
            "onnx export",
            status_word,
            f"{status.state}: {status.reason} — run `slowave embedder export` "
            "(a serving process also makes it on first start)",
        )
    manifest = status.manifest or {}
    check = manifest.get("verification", {})
    versions = manifest.get("versions", {})
    against = check.get("reference", "torch fp32")  # a graph built without torch: itself
    return Check(
        "onnx export",
        "ok",
        f"{status.directory}: max |diff| vs {against} {check.get('fp32_max_abs_diff', 0):.1e}, "
        f"int8 {check.get('int8_max_abs_diff', 0):.1e} (min cosine "
        f"{check.get('int8_min_cosine', 0):.3f}) on {check.get('sentences', 0)} sentences; "
        f"exported {manifest.get('exported_at', '?')} with torch "
        f"{versions.get('torch', 'absent')}, "
        f"onnxruntime {versions.get('onnxruntime', '?')}",
    )


def check_embedder() -> Check:
    """What serves, predicted from the settings and the export (no model is loaded)."""
    mode = settings.SLOWAVE_EMBEDDER
    if mode == "hash":
        return Check("embedder", "warn", "hash (SLOWAVE_EMBEDDER=hash: the test embedder)")
    if mode == "sentence-transformers":
        return Check("embedder", "ok", "torch (SLOWAVE_EMBEDDER=sentence-transformers)")
    try:
        status = _status()
    except Exception as exc:
        return Check("embedder", "fail", f"cannot read the model: {exc}")
    if status.fresh:
        weights = "int8" if mode == "onnx-int8" else "fp32"
        return Check("embedder", "ok", f"ONNX Runtime, {weights} weights, from {status.directory}")
    return Check(
        "embedder",
        "warn",
        f"ONNX Runtime once the export exists (SLOWAVE_EMBEDDER={mode}; {status.reason}): the "
        "first serving process makes it, and torch serves where it cannot",
    )


def check_store_embedder() -> Check:
    """Which embedder wrote this store's vectors (its record) against the configured one."""
    configured = get_embedder().name  # the configured one's name; no model is loaded
    try:
        record, conflict = record_read(), record_conflict(get_embedder())
        holds = store_holds_vectors()
    except DatabaseError as exc:  # not migrated yet: the migrations check says so
        return Check("store embedder", "warn", f"cannot read the record: {exc}")
    if conflict is not None:
        return Check("store embedder", "fail", conflict)
    if record is None or not holds:
        return Check(
            "store embedder", "ok", f"no vectors yet: the first encode records {configured}"
        )
    digest = f", weights {record.digest[:12]}" if record.digest else ""
    how = "an existing store, read as fp32" if record.recorded_by == "existing_store" else ""
    return Check(
        "store embedder",
        "ok",
        f"vectors written by {record.name} ({record.precision}{digest}), recorded "
        f"{record.recorded_at:%Y-%m-%d %H:%M}{f' ({how})' if how else ''}; this process "
        "embeds with the same",
    )


def check_model() -> Check:
    """Encode one text with the embedder that serves (never exporting on the way)."""
    embedder: Any
    if settings.SLOWAVE_EMBEDDER == "sentence-transformers":
        embedder = SentenceTransformerEmbedder(settings.SLOWAVE_EMBEDDING_MODEL)
    else:  # with SLOWAVE_EMBEDDER=hash too: the model production would serve
        embedder = ServingEmbedder(
            source=settings.SLOWAVE_EMBEDDING_MODEL,
            model_dir=settings.SLOWAVE_MODEL_DIR,
            quantized=settings.SLOWAVE_EMBEDDER == "onnx-int8",
            threads=settings.SLOWAVE_EMBEDDER_THREADS,
            auto_export=False,
        )
    if isinstance(getattr(embedder, "serving", embedder), SentenceTransformerEmbedder):
        _quiet_transformers()
    try:
        vectors = embedder.encode(["doctor"])
    except EmbedderUnavailable as exc:
        return Check("model", "fail", f"the offline model did not load: {exc}")
    norm = float(np.linalg.norm(vectors[0]))
    if vectors.shape != (1, 384) or abs(norm - 1.0) > 1e-3:
        return Check(
            "model", "fail", f"unexpected embedding shape {vectors.shape} or norm {norm:.3f}"
        )
    served = embedder.describe()["serving"] if hasattr(embedder, "describe") else "torch"
    note = (
        " (SLOWAVE_EMBEDDER=hash is set: replies use the test embedder)"
        if settings.SLOWAVE_EMBEDDER == "hash"
        else ""
    )
    return Check(
        "model",
        "warn" if note else "ok",
        f"all-MiniLM-L6-v2 offline via {served}: 384-d unit vectors{note}",
    )


def _quiet_transformers() -> None:
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # doctor's report, not a loading bar, is the output
    except ImportError:
        pass
