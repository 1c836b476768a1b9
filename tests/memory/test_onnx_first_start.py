"""Which embedder a fresh process serves with, in a real `slowave`-like subprocess.

With an export: ONNX, torch never imported. Without one: the first start makes it in a child
process (one stderr line says so) and still never imports torch itself. Where no export can
be made: torch serves, with one warning line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory.embedders.export_files import bundled_model_path, export_status
from memory.embedders.onnx_runtime import BASE_NAME, INT8_NAME
from tests.cli.runner import REPO_ROOT, cli_env

pytestmark = pytest.mark.timeout(600)
ENCODE = """
import json, sys
import django, numpy as np
django.setup()
from memory import embeddings
vectors = embeddings.encode(["which database stores the invoices?", "!!!", ""])
embedder = embeddings.get_embedder()
print(json.dumps({
    "served": type(embedder.serving).__name__,
    "name": embedder.name,
    "torch": "torch" in sys.modules,
    "sentence_transformers": "sentence_transformers" in sys.modules,
    "norms": [float(n) for n in np.linalg.norm(vectors, axis=1)],
}))
"""
EXPORTING = "exporting the embedding model to ONNX"
FALLING_BACK = "embedding with torch (sentence-transformers), not ONNX"


def _encode(home: Path, **env: str) -> tuple[dict[str, Any], str]:
    full = cli_env(home, DJANGO_SETTINGS_MODULE="slowave_site.settings", **env)
    done = subprocess.run(
        [sys.executable, "-c", ENCODE],
        cwd=REPO_ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def _unit(report: dict[str, Any]) -> bool:
    return all(abs(norm - 1.0) < 1e-5 for norm in report["norms"])


def test_it_serves_the_export_without_importing_torch(tmp_path: Path, onnx_export: Path) -> None:
    for mode, name in (("onnx", BASE_NAME), ("onnx-int8", INT8_NAME)):
        report, err = _encode(tmp_path, SLOWAVE_EMBEDDER=mode, SLOWAVE_MODEL_DIR=str(onnx_export))
        assert report["served"] == "OnnxEmbedder" and report["name"] == name, (report, err)
        assert not report["torch"] and not report["sentence_transformers"]
        assert _unit(report) and EXPORTING not in err and FALLING_BACK not in err


def test_onnx_runtime_records_no_telemetry(tmp_path: Path, onnx_export: Path) -> None:
    # Unless told before its import, onnxruntime queues telemetry events for upload under
    # ~/.cache/Microsoft/DeveloperTools/.onnxruntime.
    user = tmp_path / "user"
    user.mkdir()
    report, err = _encode(
        tmp_path,
        SLOWAVE_EMBEDDER="onnx",
        SLOWAVE_MODEL_DIR=str(onnx_export),
        HOME=str(user),
        XDG_CACHE_HOME=str(user / ".cache"),
    )
    assert report["served"] == "OnnxEmbedder", (report, err)
    assert list(user.rglob("*")) == []


def test_the_first_start_makes_the_export_in_a_child_process(tmp_path: Path) -> None:
    models = tmp_path / "models"
    report, err = _encode(tmp_path, SLOWAVE_EMBEDDER="onnx", SLOWAVE_MODEL_DIR=str(models))
    assert report["served"] == "OnnxEmbedder" and _unit(report), (report, err)
    assert not report["torch"] and not report["sentence_transformers"]
    assert err.count(EXPORTING) == 1 and "imports torch" in err
    assert export_status(source=bundled_model_path(), model_dir=models, verify=True).fresh
    again, err = _encode(tmp_path, SLOWAVE_EMBEDDER="onnx", SLOWAVE_MODEL_DIR=str(models))
    assert again["served"] == "OnnxEmbedder" and EXPORTING not in err


def test_torch_serves_with_one_warning_where_no_export_can_be_made(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file-not-a-directory"
    blocked.write_text("")
    report, err = _encode(tmp_path, SLOWAVE_EMBEDDER="onnx", SLOWAVE_MODEL_DIR=str(blocked))
    assert report["served"] == "SentenceTransformerEmbedder" and report["torch"], (report, err)
    assert report["name"] == BASE_NAME and _unit(report)
    assert err.count(FALLING_BACK) == 1 and "slowave embedder export" in err
