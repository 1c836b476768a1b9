from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from slowave_site.bench import baselines as bl
from slowave_site.bench.locomo_data import load_locomo, normalise_evidence, parse_session_date


def bag_of_words_encoder(texts: list[str]) -> np.ndarray:
    """A stand-in embedder so dense/RRF plumbing is tested without loading a model."""
    out = np.zeros((len(texts), 256), dtype=np.float32)
    for row, text in enumerate(texts):
        for token in bl.bm25_tokens(text):
            out[row, zlib.crc32(token.encode()) % 256] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1.0, norms)


def test_it_loads_sessions_turns_and_questions(locomo_file: Path):
    (sample,) = load_locomo(locomo_file)
    assert (sample.sample_id, sample.speaker_a, sample.speaker_b) == ("conv-t1", "Ann", "Bob")
    assert [s.index for s in sample.sessions] == [1, 2]
    assert sample.sessions[0].occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert sample.sessions[1].occurred_at == datetime(2023, 6, 21, 10, 4, tzinfo=UTC)
    turn = sample.turn_by_dia_id["D1:3"]
    assert turn.content == "Ann: Look at this. [image: a photo of a dog on a beach]"
    assert sample.turn_by_dia_id["D1:1"].content == "Ann: I adopted a greyhound called Pixel."
    adversarial = sample.questions[3]
    assert adversarial.is_adversarial and adversarial.answer is None
    assert adversarial.adversarial_answer == "a sunset"
    assert sample.questions[2].evidence == ("D1:1", "D1:3")
    assert sample.questions[4].evidence == ()


def test_it_parses_session_dates_leniently_as_utc():
    assert parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_session_date(" 12:05 AM  on 01 JANUARY,2024 ") == datetime(
        2024, 1, 1, 0, 5, tzinfo=UTC
    )
    assert parse_session_date("yesterday") is None
    assert parse_session_date(None) is None


def test_it_normalises_malformed_evidence_ids():
    assert normalise_evidence(["D8:6; D9:17", "D", "D:11:26", "D 3 : 4", "D8:6"]) == (
        "D8:6",
        "D9:17",
        "D11:26",
        "D3:4",
    )
    assert normalise_evidence(None) == ()


def test_it_rejects_files_that_are_not_locomo_layout(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"qa": []}]))
    with pytest.raises(ValueError, match="sample 0 is not in LoCoMo layout"):
        load_locomo(bad)
    bad.write_text("not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_locomo(bad)


def test_it_renders_one_dated_document_per_turn(locomo_file: Path):
    (sample,) = load_locomo(locomo_file)
    docs = bl.documents_for(sample)
    assert len(docs) == 5
    assert docs[0].text == "[8 May 2023] Ann: I adopted a greyhound called Pixel."
    assert docs[3].text == "[21 June 2023] Bob: My cello recital went well in Lisbon."
    assert docs[3].dia_ids == ("D2:1",)


def test_it_ranks_the_matching_turn_first_with_bm25(locomo_file: Path):
    (sample,) = load_locomo(locomo_file)
    results = bl.run_baseline("bm25", sample)
    assert [r.question.index for r in results] == [0, 1, 2, 3, 4]
    assert results[0].items[0].dia_ids == ("D1:2",)  # "learning" only occurs there
    assert results[1].items[0].dia_ids == ("D2:1",)  # "recital" only occurs there
    assert all(len(r.items) == 5 for r in results)  # never more than the conversation holds
    assert all(list(r.latency_ms) == ["search"] for r in results)


def test_it_scores_bm25_with_floored_idf_and_length_normalisation():
    index = bl.BM25Index(["ann cello", "ann cello cello", "ann", "ann dog walk today", "ann x"])
    scores = index.scores("cello")
    assert scores[1] > scores[0] > 0 and scores[2] == scores[3] == scores[4] == 0
    # "ann" is in every document: its raw Okapi IDF is negative, the floor keeps it positive,
    # so the shortest document wins.
    common = index.scores("ann")
    assert (common > 0).all() and int(np.argmax(common)) == 2
    assert index.scores("zebra").sum() == 0


def test_it_fuses_rankings_by_reciprocal_rank():
    lexical = np.array([0, 1, 2, 3])
    dense = np.array([2, 0, 3, 1])
    assert bl.rrf_ranking([lexical, dense]).tolist() == [0, 2, 1, 3]
    # Only each channel's top `depth` candidates are fused.
    assert bl.rrf_ranking([lexical, dense], depth=1).tolist() == [0, 2]


def test_it_runs_dense_and_rrf_with_an_injected_encoder(locomo_file: Path):
    (sample,) = load_locomo(locomo_file)
    calls: list[int] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return bag_of_words_encoder(texts)

    out = bl.run_baselines(["dense", "rrf"], sample, encode)
    # Documents encoded once, then one query encoding per question shared by dense and rrf.
    assert calls == [5] + [1] * 5
    assert out["dense"][1].items[0].dia_ids == ("D2:1",)
    assert out["rrf"][1].items[0].dia_ids == ("D2:1",)
    # RRF pays for both channels.
    assert out["rrf"][0].latency_ms["search"][0] >= out["dense"][0].latency_ms["search"][0]
    with pytest.raises(ValueError, match="encode"):
        bl.run_baselines(["dense"], sample)
    with pytest.raises(ValueError, match="unknown baseline"):
        bl.run_baselines(["tfidf"], sample)
