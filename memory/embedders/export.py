"""Export the sentence-transformers model to ONNX, once: the only place torch is imported.

Where torch is not installed, the same graph is built from the model's weights instead
(memory.embedders.bert_graph), and checked against the fp32 graph it built only. Otherwise
`onnx_export` traces the model's transformer (input_ids, attention_mask, token_type_ids ->
last_hidden_state, batch and sequence axes dynamic) with torch's TorchScript exporter, writes
int8 weights beside it (onnxruntime's dynamic quantisation, per channel), copies the
tokenizer, checks both against torch on fixed sentences and records it all in a manifest. The
directory appears whole or not at all. Runs without Django:

    python -m memory.embedders.export --models DIR [--source MODEL_DIR] [--force]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import platform
import shutil
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from memory.embedders.base import DIMENSIONS
from memory.embedders.export_files import (
    EXPORT_FORMAT,
    FP32_FILE,
    INT8_FILE,
    MANIFEST_FILE,
    OUTPUT_FILES,
    TOKENIZER_FILE,
    ExportFailed,
    ExportStatus,
    bundled_model_path,
    export_lock,
    export_status,
    file_digest,
    source_fingerprint,
)
from memory.embedders.onnx_runtime import OnnxEmbedder

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# fp32 must give torch's vectors: anything beyond float32 rounding means a broken export.
FP32_TOLERANCE = 1e-4
# Checked against torch on every export: short and long, padded and not, a text over the
# 256-token limit, text without a word, non-Latin scripts, conversation turns.
SENTENCES = [
    "hi",
    "Deploy on Fridays only after the staging checks pass.",
    "Caroline went to the LGBTQ support group on 7 May 2023 and said it was powerful.",
    "Melanie painted a lake sunrise last year; she paints to relax after work.",
    "Which database does the billing service use in production?",
    "We agreed to keep the retry budget at three attempts with exponential backoff.",
    "!!!",
    "",
    "会议在星期三举行",
    "emoji only 🙂🙂",
    "Ünïcödé àccents and ß are lower-cased and split by the BERT tokenizer.",
    " ".join(f"token{i} of a long transcript line" for i in range(80)),
]
log = logging.getLogger(__name__)


def onnx_export(*, source: Path, model_dir: Path, force: bool = False) -> ExportStatus:
    """Export `source` (a sentence-transformers directory) under `model_dir`, unless a fresh
    export is there already (`force`: export anyway). Raises ExportFailed."""
    source = Path(source).resolve()
    _check_source(source)
    with export_lock(model_dir):
        status = export_status(source=source, model_dir=model_dir)
        if status.fresh and not force:
            return status
        directory = status.directory
        work = directory.with_name(f".{directory.name}.tmp-{os.getpid()}")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        try:
            manifest = _export_into(work, source)
            (work / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n")
            _swap_in(work, directory)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return export_status(source=source, model_dir=model_dir)


def _check_source(source: Path) -> None:
    for name in ("config.json", TOKENIZER_FILE, "sentence_bert_config.json"):
        if not (source / name).is_file():
            raise ExportFailed(f"{source} is not a sentence-transformers model: no {name}")
    pooling = source / "1_Pooling" / "config.json"
    if pooling.is_file():
        modes = {
            k: v for k, v in json.loads(pooling.read_text()).items() if k.startswith("pooling")
        }
        if [k for k, v in modes.items() if v] != ["pooling_mode_mean_tokens"]:
            raise ExportFailed(f"{source} pools otherwise than by mean; only mean is exported")


def torch_installed() -> bool:
    """Whether the export can trace with torch (else it builds the graph from the weights)."""
    try:
        return all(importlib.util.find_spec(name) for name in ("torch", "sentence_transformers"))
    except ImportError:  # a broken or blocked install is no install
        return False


def _export_into(work: Path, source: Path) -> dict[str, Any]:
    if not torch_installed():
        return _build_into(work, source)
    with _quiet():
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
        model = SentenceTransformer(str(source), device="cpu")
        model.eval()
        max_seq_length = int(model.max_seq_length or 0)
        if max_seq_length <= 0:
            raise ExportFailed(f"{source} sets no max_seq_length")
        _trace(model, work / FP32_FILE)
        _quantize(work / FP32_FILE, work / INT8_FILE)
        shutil.copyfile(source / TOKENIZER_FILE, work / TOKENIZER_FILE)
        reference = model.encode(SENTENCES, batch_size=len(SENTENCES), convert_to_numpy=True)
    verification = _verify(work, np.asarray(reference, dtype=np.float32), max_seq_length)
    exporter = f"torch.onnx.export (TorchScript, dynamo=False), opset {OPSET}"
    return _manifest(work, source, max_seq_length, exporter, verification)


def _build_into(work: Path, source: Path) -> dict[str, Any]:
    """Without torch: the graph built from the weights, its int8 weights and the tokenizer."""
    from memory.embedders.bert_graph import OPSET as GRAPH_OPSET
    from memory.embedders.bert_graph import bert_graph_write

    config = json.loads((source / "sentence_bert_config.json").read_text())
    max_seq_length = int(config.get("max_seq_length") or 0)
    if max_seq_length <= 0:
        raise ExportFailed(f"{source} sets no max_seq_length")
    try:
        bert_graph_write(source, work / FP32_FILE)
    except (KeyError, ValueError) as exc:
        raise ExportFailed(f"cannot build the graph of {source} without torch: {exc}") from None
    with _quiet(transformers=False):
        _quantize(work / FP32_FILE, work / INT8_FILE)
    shutil.copyfile(source / TOKENIZER_FILE, work / TOKENIZER_FILE)
    fp32 = OnnxEmbedder(work, quantized=False, max_seq_length=max_seq_length)
    verification = _verify(work, fp32.encode(SENTENCES), max_seq_length)
    # No torch to compare with here: the fp32 figures are against the graph itself, and
    # tests/memory/test_bert_graph.py holds the builder to torch's vectors.
    verification["reference"] = "built fp32 graph (torch not installed)"
    exporter = f"memory.embedders.bert_graph (onnx helper, no torch), opset {GRAPH_OPSET}"
    return _manifest(work, source, max_seq_length, exporter, verification)


def _manifest(
    work: Path, source: Path, max_seq_length: int, exporter: str, verification: dict[str, Any]
) -> dict[str, Any]:
    versions: dict[str, str] = {"python": platform.python_version()}
    for name in ("torch", "transformers", "sentence-transformers", "onnx", "onnxruntime"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            continue
    return {
        "format": EXPORT_FORMAT,
        "source": {"path": str(source), "files": source_fingerprint(source)},
        "files": {
            name: {"bytes": (work / name).stat().st_size, "sha256": file_digest(work / name)}
            for name in OUTPUT_FILES
        },
        "max_seq_length": max_seq_length,
        "dimensions": DIMENSIONS,
        "exporter": exporter,
        "quantization": "onnxruntime quantize_dynamic, QInt8 weights, per channel",
        "versions": versions,
        "verification": verification,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _trace(model: Any, target: Path) -> None:
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self, transformer: Any) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    # The example batch must pad one text: traced with an all-ones mask, transformers skips
    # the mask altogether and the graph would ignore padding for good.
    features = model.preprocess(["a short one", "a somewhat longer example sentence to pad"])
    example = tuple(features[name] for name in INPUTS)
    assert int(example[1].min()) == 0, "the example batch must contain padding"
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(
            LastHiddenState(model[0].auto_model).eval(),
            example,
            str(target),
            dynamo=False,
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes={name: axes for name in (*INPUTS, "last_hidden_state")},
            opset_version=OPSET,
            do_constant_folding=True,
        )


def _quantize(fp32: Path, int8: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Per channel: per-tensor scales put some vectors at cosine 0.85 to fp32; per channel
    # keeps every checked one above 0.97.
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)


def _verify(work: Path, reference: np.ndarray, max_seq_length: int) -> dict[str, Any]:
    result: dict[str, Any] = {"sentences": len(SENTENCES)}
    for label, quantized in (("fp32", False), ("int8", True)):
        embedder = OnnxEmbedder(work, quantized=quantized, max_seq_length=max_seq_length)
        vectors = embedder.encode(SENTENCES)
        result[f"{label}_max_abs_diff"] = float(np.abs(vectors - reference).max())
        result[f"{label}_min_cosine"] = float((vectors * reference).sum(axis=1).min())
    if not result["fp32_max_abs_diff"] < FP32_TOLERANCE:
        raise ExportFailed(
            f"the ONNX export does not reproduce torch: max |diff| "
            f"{result['fp32_max_abs_diff']:.2e} > {FP32_TOLERANCE:g}"
        )
    return result


def _swap_in(work: Path, directory: Path) -> None:
    """Replace `directory` by `work` (the lock is held): a reader sees one or the other."""
    old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
    if directory.exists():
        os.replace(directory, old)
    os.replace(work, directory)
    shutil.rmtree(old, ignore_errors=True)


@contextmanager
def _quiet(*, transformers: bool = True) -> Iterator[None]:
    """No tracer, deprecation or progress chatter: the export's report is its manifest."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # onnxruntime's quantiser warns on the root logger
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if transformers:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
                hf_logging.set_verbosity_error()
            yield
    finally:
        root.setLevel(level)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memory.embedders.export")
    parser.add_argument("--models", required=True, help="the model directory (SLOWAVE_MODEL_DIR)")
    parser.add_argument("--source", default="", help="the model to export (default: bundled)")
    parser.add_argument("--force", action="store_true", help="export even when fresh")
    options = parser.parse_args(argv)
    source = Path(options.source) if options.source else bundled_model_path()
    try:
        status = onnx_export(source=source, model_dir=Path(options.models), force=options.force)
    except ExportFailed as exc:
        print(f"export failed: {exc.message}", file=sys.stderr)
        return 1
    print(json.dumps({"state": status.state, "directory": str(status.directory)}))
    return 0 if status.fresh else 1


if __name__ == "__main__":
    raise SystemExit(main())
