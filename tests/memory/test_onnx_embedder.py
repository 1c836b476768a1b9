"""The ONNX embedder gives torch's vectors: same model, same tokens, same pooling.

fp32 matches sentence-transformers within float32 rounding, so it keeps the torch embedder's
name and stored vectors stay comparable; int8 stays close and is named apart.
"""

from __future__ import annotations

import numpy as np
import pytest

from memory import embeddings
from memory.embedders.onnx_runtime import BASE_NAME, INT8_NAME, OnnxEmbedder
from memory.embedders.serving import ServingEmbedder
from memory.embeddings import BATCH_SIZE, SentenceTransformerEmbedder

SENTENCES = [
    "Which database does the billing service use?",
    "Caroline moved from Sweden four years ago and still misses her grandmother's cooking.",
    "ok",
    "Deploys happen on Fridays after the freeze; the staging checks must pass first.",
    "Melanie signed up for a pottery class on 2 July 2023 and loved glazing the bowls.",
    "会议在星期三举行",
    # over the 256-token limit: truncated exactly where the torch model truncates
    " ".join(f"The retry budget for worker {i} is three attempts." for i in range(60)),
]


@pytest.fixture(scope="module")
def onnx() -> OnnxEmbedder:
    embedder = embeddings.get_embedder()
    assert isinstance(embedder, ServingEmbedder)
    served = embedder.serving
    assert isinstance(served, OnnxEmbedder) and not served.quantized
    return served


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return SentenceTransformerEmbedder().encode(SENTENCES)


def test_it_gives_the_vectors_of_the_torch_model(onnx, torch_vectors) -> None:
    vectors = onnx.encode(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384) and vectors.dtype == np.float32
    assert float(np.abs(vectors - torch_vectors).max()) < 1e-4
    # Alone (no padding) as in a batch.
    for row, text in enumerate(SENTENCES[:3]):
        assert float(np.abs(onnx.encode([text])[0] - torch_vectors[row]).max()) < 1e-4


def test_it_keeps_the_torch_name_for_fp32_and_names_int8_apart(onnx) -> None:
    assert onnx.name == SentenceTransformerEmbedder.name == BASE_NAME
    assert OnnxEmbedder(onnx.directory, quantized=True).name == INT8_NAME != BASE_NAME


def test_int8_weights_stay_close_to_torch(onnx, torch_vectors) -> None:
    vectors = OnnxEmbedder(onnx.directory, quantized=True).encode(SENTENCES)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(np.sum(vectors * torch_vectors, axis=1).min()) > 0.95


def test_it_reads_no_further_than_the_models_256_tokens(onnx) -> None:
    long = SENTENCES[-1]
    longer = long + " And this tail lies beyond the limit, so nothing of it counts."
    first, second = onnx.encode([long, longer])
    assert float(np.abs(first - second).max()) < 1e-6


def test_more_texts_than_a_batch_come_back_in_order(onnx) -> None:
    texts = [f"note {i}: " + "word " * (i % 17) for i in range(BATCH_SIZE * 2 + 5)]
    together = onnx.encode(texts)
    assert together.shape == (len(texts), 384)
    for row in (0, BATCH_SIZE, len(texts) - 1):
        assert float(np.abs(onnx.encode([texts[row]])[0] - together[row]).max()) < 1e-5
    assert onnx.encode([]).shape == (0, 384)


def test_batches_hold_about_the_budget_in_padded_tokens_longest_first():
    from memory.embedders.base import token_batches

    lengths = [5] * 100 + [256] * 10 + [100] * 5
    batches = token_batches(lengths, budget=384, most=64)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    firsts = [lengths[batch[0]] for batch in batches]
    assert firsts == sorted(firsts, reverse=True)  # the longest texts go first
    # A batch is sized by its first (longest) text: 256 tokens, one at a time...
    assert [len(b) for b in batches[:10]] == [1] * 10
    assert len(batches[10]) == 3  # ...100 tokens, three
    assert max(len(b) for b in batches) == 64  # short texts: capped by `most`


def test_a_text_given_twice_comes_back_in_both_places(onnx) -> None:
    texts = ["Caroline: I went to the lake.", "Melanie: Me too!", "Caroline: I went to the lake."]
    vectors = onnx.encode(texts)
    assert vectors.shape == (3, 384)
    assert np.array_equal(vectors[0], vectors[2])
    assert float(np.abs(vectors[1] - onnx.encode([texts[1]])[0]).max()) < 1e-6


def test_batches_run_side_by_side_give_the_vectors_of_one_thread(onnx) -> None:
    texts = [f"turn {i}: " + "the lake was calm and cold " * (i % 23) for i in range(150)]
    alone = OnnxEmbedder(onnx.directory, threads=1).encode(texts)
    assert float(np.abs(OnnxEmbedder(onnx.directory, threads=2).encode(texts) - alone).max()) < 1e-6
