"""An export is used only while it is what this recipe makes of this model: a changed model,
an older recipe, a missing or damaged file read as missing or stale."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memory.embedders.export_files import (
    EXPORT_FORMAT,
    MANIFEST_FILE,
    OUTPUT_FILES,
    SOURCE_FILES,
    TOKENIZER_FILE,
    bundled_model_path,
    export_directory,
    export_status,
)


def _linked_copy(source: Path, target: Path, *, copied: tuple[str, ...] = ()) -> Path:
    """`source` as symlinks (nothing of 110 MB is copied), real copies for `copied`."""
    for path in source.rglob("*"):
        if path.is_file():
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if path.name in copied or str(path.relative_to(source)) in copied:
                shutil.copyfile(path, dest)
            else:
                dest.symlink_to(path)
    return target


@pytest.fixture
def export(onnx_export: Path, tmp_path: Path) -> Path:
    """A private copy of the session's export (its manifest and tokenizer editable)."""
    directory = export_directory(tmp_path / "models")
    _linked_copy(export_directory(onnx_export), directory, copied=(MANIFEST_FILE, TOKENIZER_FILE))
    return tmp_path / "models"


def _manifest(models: Path) -> dict:
    return json.loads((export_directory(models) / MANIFEST_FILE).read_text())


def _rewrite(models: Path, manifest: dict) -> None:
    (export_directory(models) / MANIFEST_FILE).write_text(json.dumps(manifest))


def test_it_records_what_it_made_and_how_close_it_is(onnx_export: Path) -> None:
    status = export_status(source=bundled_model_path(), model_dir=onnx_export, verify=True)
    assert status.fresh, status.reason
    manifest = status.manifest
    assert manifest["format"] == EXPORT_FORMAT and manifest["max_seq_length"] == 256
    assert set(manifest["files"]) == set(OUTPUT_FILES)
    assert set(manifest["source"]["files"]) <= set(SOURCE_FILES)
    assert "model.safetensors" in manifest["source"]["files"]
    check = manifest["verification"]
    assert check["fp32_max_abs_diff"] < 1e-5 and check["int8_max_abs_diff"] < 0.2
    assert check["int8_min_cosine"] > 0.95
    assert manifest["versions"]["torch"].startswith("2.13.0")
    assert {"onnx", "onnxruntime", "transformers"} <= set(manifest["versions"])


def test_it_reads_a_home_without_an_export_as_missing(tmp_path: Path) -> None:
    status = export_status(source=bundled_model_path(), model_dir=tmp_path)
    assert status.state == "missing" and str(tmp_path) in status.reason


def test_it_reads_an_export_of_a_changed_model_as_stale(export: Path, tmp_path: Path) -> None:
    source = _linked_copy(bundled_model_path(), tmp_path / "model", copied=("config.json",))
    assert export_status(source=source, model_dir=export).fresh  # same bytes elsewhere
    config = json.loads((source / "config.json").read_text())
    (source / "config.json").write_text(json.dumps(config | {"layer_norm_eps": 1e-6}))
    status = export_status(source=source, model_dir=export)
    assert status.state == "stale" and "config.json" in status.reason


def test_it_reads_an_export_of_an_older_recipe_as_stale(export: Path) -> None:
    _rewrite(export, _manifest(export) | {"format": EXPORT_FORMAT - 1})
    status = export_status(source=bundled_model_path(), model_dir=export)
    assert status.state == "stale" and "format" in status.reason


def test_it_reads_an_export_with_a_file_gone_as_missing(export: Path) -> None:
    (export_directory(export) / "model_qint8.onnx").unlink()
    status = export_status(source=bundled_model_path(), model_dir=export)
    assert status.state == "missing" and "model_qint8.onnx" in status.reason


def test_a_damaged_file_is_found_when_verifying(export: Path) -> None:
    tokenizer = export_directory(export) / TOKENIZER_FILE
    data = bytearray(tokenizer.read_bytes())
    data[-2] = ord(" ") if data[-2] != ord(" ") else ord("\n")  # same size, other bytes
    tokenizer.write_bytes(bytes(data))
    assert export_status(source=bundled_model_path(), model_dir=export).fresh  # cheap: sizes
    verified = export_status(source=bundled_model_path(), model_dir=export, verify=True)
    assert verified.state == "stale" and "digest" in verified.reason
