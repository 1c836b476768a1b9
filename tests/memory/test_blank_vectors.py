"""Every text gets a vector with a direction, and no index lets a row without a cosine rank.

Text without an `[a-z0-9]` word once hashed to a zero vector; sqlite-vec answers NULL for its
cosine, and every later search of the scope failed on it.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from memory import embeddings
from memory.embedders.onnx_runtime import OnnxEmbedder
from memory.embedders.serving import ServingEmbedder
from memory.embeddings import FALLBACK, Embedder, HashEmbedder, SentenceTransformerEmbedder
from memory.vectors.numpy_index import NumpyIndex
from memory.vectors.sqlite_vec import SqliteVecIndex
from tests.vec_rows_support import forget_vec_rows

committing = pytest.mark.django_db(transaction=True)
TOKENLESS = ["", "!!!", "🙂", "🙂🙂", "\u200b", "会议在星期三举行", "   \n", "¿¡…!?"]
BASE = 7_000_000  # keys far above any real row: the sqlite-vec tables outlive a test's flush
SCOPE = "project:blank"


@pytest.fixture
def vec_rows():
    yield
    forget_vec_rows(BASE)


@pytest.fixture(scope="module", params=["onnx", "torch"])
def model(request) -> Embedder:
    """The default (ONNX) embedder, and torch: what serves when no export can be had."""
    if request.param == "torch":
        return SentenceTransformerEmbedder()
    embedder = embeddings.get_embedder()
    assert isinstance(embedder, ServingEmbedder)  # the tests' default
    assert isinstance(embedder.serving, OnnxEmbedder)
    return embedder


def _unit(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_it_gives_tokenless_text_a_unit_vector_with_the_hash_embedder() -> None:
    vectors = HashEmbedder().encode(TOKENLESS)
    assert np.isfinite(vectors).all()
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_it_gives_tokenless_text_a_unit_vector_with_the_model(model) -> None:
    vectors = model.encode(TOKENLESS)
    assert np.isfinite(vectors).all()
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_the_hash_embedder_reads_the_characters_of_text_without_words() -> None:
    smile, smiles, bangs, blank, spaces = HashEmbedder().encode(["🙂", "🙂🙂", "!!!", "", "  "])
    assert float(smile @ smiles) > 0.8
    assert abs(float(smile @ bangs)) < 0.3
    assert np.array_equal(blank, FALLBACK) and np.array_equal(spaces, FALLBACK)
    # Text with words hashes its words as it always has: characters are only the fallback.
    words, with_emoji = HashEmbedder().encode(["deploy on fridays", "deploy on fridays 🙂"])
    assert np.array_equal(words, with_emoji)


@committing
@pytest.mark.parametrize("backend", [SqliteVecIndex, NumpyIndex])
def test_no_backend_returns_a_row_without_a_cosine(backend, vec_rows) -> None:
    index = backend()
    good = _unit(2, seed=3)
    stored = {
        BASE + 1: good[0],
        BASE + 2: np.zeros(384, dtype=np.float32),  # as the hash embedder once wrote "!!!"
        BASE + 3: np.full(384, np.nan, dtype=np.float32),
        BASE + 4: good[1],
    }
    for key, vector in stored.items():
        index.upsert("memory", key, SCOPE, vector)
    for query in (good[0], good[1], _unit(1, seed=9)[0]):
        hits = index.knn("memory", query, 10, [SCOPE])
        assert sorted(key for key, _ in hits) == [BASE + 1, BASE + 4]
        assert all(np.isfinite(cos) for _, cos in hits)
        everywhere = index.knn_all_scopes("memory", query, 10)
        assert sorted(key for key, _, _ in everywhere if key >= BASE) == [BASE + 1, BASE + 4]
        assert all(np.isfinite(cos) for _, cos, _ in everywhere)
    assert index.knn("memory", good[0], 1, [SCOPE])[0][0] == BASE + 1
    # A query without a direction has no neighbours, rather than an error.
    for query in (stored[BASE + 2], stored[BASE + 3]):
        assert index.knn("memory", query, 10, [SCOPE]) == []
        assert [hit for hit in index.knn_all_scopes("memory", query, 10) if hit[0] >= BASE] == []


def test_a_short_encode_goes_before_a_long_one_that_yields(model) -> None:
    model.encode(["warm up"])
    long_texts = [" ".join(f"word{i}x{j}" for j in range(300)) for i in range(48)]
    finished: list[str] = []

    def long_encode() -> None:
        model.encode(long_texts, yielding=True)
        finished.append("long")

    worker = threading.Thread(target=long_encode)
    worker.start()
    try:
        model.encode(["which database stores the invoices?"])
        finished.append("short")
    finally:
        worker.join(timeout=300)
    assert finished == ["short", "long"]


def test_a_yielding_encode_gives_the_vectors_of_one_call(model) -> None:
    texts = [
        "The billing queue runs on Redis",
        " ".join(["A long paragraph about the payments service and its retries."] * 30),
        "Deploys happen on Fridays after the freeze.",
        *[f"Short note number {i} about the release train" for i in range(12)],
    ]
    together = model.encode(texts)
    yielded = model.encode(texts, yielding=True)
    assert np.allclose(np.sum(together * yielded, axis=1), 1.0, atol=1e-4)
