"""The ONNX graph built from the model's weights without torch gives torch's vectors.

memory.embedders.bert_graph lets an installation without torch make its export. Held here to
the sentence-transformers model (torch is in the test install) on the export's own sentences
(short, long past 256 tokens, padded in one batch, no word at all, non-Latin): cosine within
1e-5 of 1 and max |diff| within 1e-5. Then the export itself, run where torch cannot be
imported: it builds the graph, and its vectors are the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memory.embedders.bert_graph import bert_graph_write
from memory.embedders.export import SENTENCES
from memory.embedders.export_files import FP32_FILE, TOKENIZER_FILE, bundled_model_path
from memory.embedders.onnx_runtime import OnnxEmbedder
from memory.embeddings import SentenceTransformerEmbedder
from tests.cli.runner import REPO_ROOT

TOLERANCE = 1e-5
# Run as the export's entry point, in a process where importing torch, transformers or
# sentence-transformers fails as it would where none is installed.
WITHOUT_TORCH = """
import sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "sentence_transformers", "transformers"):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, NoTorch())
from memory.embedders.export import main
code = main(sys.argv[1:])
assert "torch" not in sys.modules, "torch was imported"
raise SystemExit(code)
"""


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return SentenceTransformerEmbedder().encode(SENTENCES)


def _assert_torchs(vectors: np.ndarray, torch_vectors: np.ndarray) -> None:
    assert float(np.abs(vectors - torch_vectors).max()) < TOLERANCE
    assert float((vectors * torch_vectors).sum(axis=1).min()) > 1 - TOLERANCE


def test_the_built_graph_gives_torchs_vectors(tmp_path: Path, torch_vectors: np.ndarray) -> None:
    source = bundled_model_path()
    bert_graph_write(source, tmp_path / FP32_FILE)
    (tmp_path / TOKENIZER_FILE).write_bytes((source / TOKENIZER_FILE).read_bytes())
    vectors = OnnxEmbedder(tmp_path, max_seq_length=256).encode(SENTENCES)
    _assert_torchs(vectors, torch_vectors)


def test_the_export_without_torch_builds_the_graph(
    tmp_path: Path, torch_vectors: np.ndarray
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_TORCH, "--models", str(tmp_path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    directory = Path(json.loads(done.stdout)["directory"])
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["exporter"].startswith("memory.embedders.bert_graph")
    # (its package metadata is still installed here, so `versions` may name torch)
    assert manifest["verification"]["int8_min_cosine"] > 0.9
    _assert_torchs(OnnxEmbedder(directory).encode(SENTENCES), torch_vectors)
