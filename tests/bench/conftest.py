"""A tiny synthetic LoCoMo-layout file, written per test (the real data is never used here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

CONVERSATION: dict[str, Any] = {
    "speaker_a": "Ann",
    "speaker_b": "Bob",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a greyhound called Pixel."},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely! I am learning the cello."},
        {
            "speaker": "Ann",
            "dia_id": "D1:3",
            "text": "Look at this.",
            "blip_caption": "a photo of a dog on a beach",
        },
    ],
    # Lenient parsing: upper-case meridiem, odd spacing around the comma.
    "session_2_date_time": "10:04  AM on 21 june ,2023",
    "session_2": [
        {"speaker": "Bob", "dia_id": "D2:1", "text": "My cello recital went well in Lisbon."},
        {"speaker": "Ann", "dia_id": "D2:2", "text": "Pixel ran a marathon of fetch today."},
    ],
}

QA: list[dict[str, Any]] = [
    {
        "question": "What instrument is Bob learning?",
        "answer": "cello",
        "evidence": ["D1:2"],
        "category": 4,
    },
    {
        "question": "Where was Bob's recital?",
        "answer": "Lisbon",
        "evidence": ["D2:1"],
        "category": 2,
    },
    {
        "question": "What dog did Ann adopt?",
        "answer": "a greyhound named Pixel",
        "evidence": ["D1:1; D1:3"],
        "category": 1,
    },
    {
        "question": "What did Ann paint?",
        "adversarial_answer": "a sunset",
        "evidence": ["D:2:2"],
        "category": 5,
    },
    {"question": "Would Ann like hiking?", "answer": "Likely yes", "evidence": [], "category": 3},
]


def locomo_payload() -> list[dict[str, Any]]:
    return [{"sample_id": "conv-t1", "conversation": CONVERSATION, "qa": QA}]


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo-tiny.json"
    path.write_text(json.dumps(locomo_payload()), encoding="utf-8")
    return path


@pytest.fixture
def hash_embedder(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """The deterministic embedder, for tests of bench mechanics only (house style 10).

    The process-wide embedder and vector index are reset for the test: both are built once per
    process, and the index caches rows of whichever database it last read.
    """
    from memory import embeddings, vectors

    settings.SLOWAVE_EMBEDDER = "hash"
    monkeypatch.setattr(embeddings, "_embedder", embeddings.HashEmbedder())
    monkeypatch.setattr(vectors, "_index", None)


@pytest.fixture
def fresh_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """A vector index that has read no other database (the real embedder is kept)."""
    from memory import vectors

    monkeypatch.setattr(vectors, "_index", None)
